/**
 * The save step: the keys of accepted events are saved by a signed request back to this n8n
 * process's own webhook, because n8n does not save what webhook() changed for a delivery it answers
 * itself after starting the run.
 *
 *     service            n8n (webhook route of this trigger)              static data (database)
 *        |-- delivery ------>| webhook(): verify, duplicate?, enrich, add the keys to
 *        |                   |   this process's pending keys (memory.ts); queueSave()
 *        |                   | n8n registers the run, answers 200, runs it; it saves nothing
 *        |<----------- 200 --|   webhook() changed (run() wraps the static data anew)
 *        |                   |
 *        |         save loop, once the burst pauses for firstSaveMs (then every saveEveryMs):
 *        |                   |-- save request (signed with the endpoint's secret) -->|
 *        |                   |   to the listener the delivery arrived on: webhook() again,
 *        |                   |   receiveSaveRequest() adds the keys and answers which were
 *        |                   |   missing; the trigger answers itself, so n8n saves ----->| keys saved
 *        |                   |
 *        |         confirmAfterMs later (batched, confirmEveryMs apart when nothing new is pending):
 *        |         another save request finds them saved and no request
 *        |         begun before that save still running, so no older copy can overwrite them:
 *        |         they are confirmed, no longer pending.
 *
 * Why it is safe: each n8n process (every `n8n webhook` processor in queue mode) saves the static
 * data whole, from the copy it read when its request began, so a concurrent save can drop keys
 * again; a key stays pending (and duplicate checks in this process see it) until a save request sent
 * confirmAfterMs after its acceptance finds it saved. The request goes to the socket address the
 * delivery arrived on, never the public webhook URL: behind a reverse proxy or NAT, n8n often cannot
 * reach its own public address. n8n internals this rests on are listed in CONTRIBUTING.md.
 */
import { randomUUID } from 'node:crypto';

import type { IDataObject, IHookFunctions, IWebhookFunctions } from 'n8n-workflow';

import { transportClock } from '../shared/transport/clock';
import { parseSecret, signWebhook } from '../shared/webhookVerifier';
import {
	pendingName,
	type EndpointMemory,
	type OwnListener,
	type PendingKey,
	type TriggerSettings,
} from './memory';
import { DedupStore, splitKeys, type EndpointStore, type KeySection } from './store';

/** The type of a save request; the service's event types never start with "n8n.". */
export const SAVE_REQUEST_TYPE = 'n8n.marketplace-trigger.save';

/** The parts of an incoming request (Node's IncomingMessage under express) that locate its listener. */
export interface ArrivedRequest {
	url?: string;
	originalUrl?: string;
	socket?: { localAddress?: string; localPort?: number; encrypted?: boolean } | null;
}

/**
 * The listener that received `request`, joined with the path n8n served it at (the path as it
 * arrived, so a proxy that rewrote the public path does not matter).
 */
export function ownListenerOf(request: ArrivedRequest): OwnListener | undefined {
	const socket = request.socket;
	const address = socket?.localAddress;
	const port = socket?.localPort;
	const path = (request.originalUrl ?? request.url ?? '').split('?')[0];
	if (!address || !port || !path.startsWith('/')) return undefined;
	const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
	const host = v4.includes(':') ? `[${v4}]` : v4;
	const tls = socket?.encrypted === true;
	return { url: `${tls ? 'https' : 'http'}://${host}:${port}${path}`, tls };
}

/**
 * Builds, signs (with the endpoint's secret, at the transport's time, which the receiving request
 * verifies with) and posts a message of the trigger's own to this n8n's webhook at `to`; returns
 * the answer. The one way the trigger talks to itself: save requests, and the notice that ends a
 * listening (listening.ts).
 */
export async function postToOwnWebhook(
	ctx: IWebhookFunctions | IHookFunctions,
	to: OwnListener,
	secret: string,
	message: { idPrefix: string; type: string; data: IDataObject },
): Promise<unknown> {
	const id = `${message.idPrefix}_${randomUUID()}`;
	const now = transportClock().now();
	const timestamp = Math.floor(now / 1000);
	const body = JSON.stringify({
		id,
		type: message.type,
		createdAt: new Date(now).toISOString(),
		data: message.data,
	});
	return await ctx.helpers.httpRequest({
		method: 'POST',
		url: to.url,
		// the certificate is made for the public name; the message is signed, and the address is this process's own
		skipSslCertificateValidation: to.tls,
		body,
		headers: {
			'content-type': 'application/json',
			'webhook-id': id,
			'webhook-timestamp': String(timestamp),
			'webhook-signature': signWebhook(id, timestamp, Buffer.from(body), parseSecret(secret)),
		},
		json: true,
		timeout: 5_000,
	});
}

/** A key to save: its section and until when it is kept (`orders`: the order's creation time). */
export type KeyToSave = Pick<PendingKey, 'section' | 'key' | 'untilMs'>;

/**
 * Adds `keys` to the endpoint's pending keys and makes sure its save loop runs. Production
 * deliveries only: a test URL serves one request and is gone.
 */
export function queueSave(
	settings: TriggerSettings,
	memory: EndpointMemory,
	from: { ctx: IWebhookFunctions; listener: OwnListener; secret: string },
	keys: KeyToSave[],
): void {
	const acceptedAt = settings.clock.now();
	for (const { section, key, untilMs } of keys)
		memory.pending.set(pendingName(section, key), {
			section,
			key,
			untilMs,
			acceptedAt,
			saved: false,
			failedSaves: 0,
		});
	const loop = memory.saveLoop;
	// the newest request's context, listener and secret (a rotation may have happened meanwhile)
	Object.assign(memory.own, from);
	loop.lastQueuedAt = acceptedAt;
	if (loop.running) return;
	loop.running = true;
	void runSaveLoop(settings, memory).finally(() => (loop.running = false));
}

/**
 * A save request goes out once the keys' burst pauses for firstSaveMs, at the latest saveEveryMs after
 * its first key or the last request (a burst of deliveries shares one request, steady traffic gets one a
 * second); the loop looks every firstSaveMs while keys are pending. A saved key old enough to be
 * confirmed is confirmed by the next request, or by one of its own at most every confirmEveryMs.
 */
async function runSaveLoop(settings: TriggerSettings, memory: EndpointMemory): Promise<void> {
	const { clock } = settings;
	const loop = memory.saveLoop;
	const startedAt = clock.now();
	await clock.sleep(settings.firstSaveMs);
	for (
		let now = clock.now();
		now - loop.lastQueuedAt < settings.firstSaveMs && now - startedAt < settings.saveEveryMs;
		now = clock.now()
	)
		await clock.sleep(Math.min(settings.firstSaveMs, startedAt + settings.saveEveryMs - now));
	while (memory.pending.size > 0 && !memory.forgotten) {
		const now = clock.now();
		// new keys: once their burst paused for firstSaveMs, or a second after the last request while it goes on
		const storing =
			now - loop.lastQueuedAt >= settings.firstSaveMs ||
			now - loop.lastSentAt >= settings.saveEveryMs;
		const confirming = now - loop.lastSentAt >= settings.confirmEveryMs;
		const due = [...memory.pending.values()].some((key) =>
			key.saved ? confirming && now - key.acceptedAt >= settings.confirmAfterMs : storing,
		);
		if (due) await saveOnce(settings, memory);
		if (memory.pending.size > 0) await clock.sleep(settings.firstSaveMs);
	}
}

/** One save request carrying every pending key; confirms, marks saved, or gives up on each. */
async function saveOnce(settings: TriggerSettings, memory: EndpointMemory): Promise<void> {
	const loop = memory.saveLoop;
	const { ctx, listener, secret } = memory.own;
	if (!ctx || !listener || !secret) return;
	const carried = [...memory.pending];
	const keys: Record<KeySection, DedupStore> = { seen: new DedupStore(), orders: new DedupStore() };
	for (const [, { section, key, untilMs }] of carried) keys[section].keep(key, untilMs);
	const sentAt = (loop.lastSentAt = settings.clock.now());
	// the pending names the receiving process found missing; undefined when the request failed
	let missing: Set<string> | undefined;
	try {
		const answer = (await postToOwnWebhook(ctx, listener, secret, {
			idPrefix: 'save',
			type: SAVE_REQUEST_TYPE,
			data: { seen: keys.seen.toState(), orders: keys.orders.toState() } as unknown as IDataObject,
		})) as { missing?: unknown; missingOrders?: unknown };
		loop.lastError = undefined;
		missing = new Set([
			...splitKeys(answer?.missing).map((k) => pendingName('seen', k)),
			...splitKeys(answer?.missingOrders).map((k) => pendingName('orders', k)),
		]);
	} catch (error) {
		loop.lastError = (error as Error).message;
		ctx.logger.warn(
			`Marketplace Trigger could not save accepted event ids through ${listener.url}: ${loop.lastError}`,
		);
	}
	let givenUp = 0;
	for (const [name, key] of carried) {
		if (!missing || missing.has(name)) key.failedSaves++;
		if (missing && !missing.has(name)) {
			const confirmed =
				sentAt - key.acceptedAt >= settings.confirmAfterMs &&
				key.savedAtSeq !== undefined &&
				!memory.busySince(key.savedAtSeq);
			if (confirmed) {
				memory.pending.delete(name);
				continue;
			}
		}
		if (missing) {
			key.saved = true;
			key.savedAtSeq ??= memory.lastSeq;
		}
		if (key.failedSaves >= settings.maxFailedSaves) {
			memory.pending.delete(name);
			// an order's key (kept for the catch-up) is not an event the user could see run twice
			if (key.section === 'seen') givenUp++;
		}
	}
	if (givenUp > 0) {
		loop.givenUp += givenUp;
		ctx.logger.error(
			`Marketplace Trigger could not confirm that ${givenUp} accepted event id(s) are saved; ` +
				`a late copy of those events may run again${loop.lastError ? ` (last save request error: ${loop.lastError})` : ''}`,
			{ url: memory.url, saveUrl: listener.url },
		);
	}
}

/**
 * The receiving end of a save request (verified like a delivery, from this process or another):
 * adds the keys it carries to the store and answers which of them the stored copy lacked. The
 * trigger answers it itself, so n8n saves the static data.
 */
export function receiveSaveRequest(store: EndpointStore, data: IDataObject): IDataObject {
	const seen = DedupStore.fromState(data.seen);
	const orders = DedupStore.fromState(data.orders);
	const missing = store.seen.uncovered(seen);
	// an order the cursor has passed needs saving no more
	orders.prune(store.cursor ?? -Infinity);
	const missingOrders = store.orders.uncovered(orders);
	store.addAll('seen', seen);
	store.addAll('orders', orders);
	return {
		received: true,
		saved: true,
		missing: missing.join(''),
		missingOrders: missingOrders.join(''),
	};
}

/**
 * Why accepted ids of this endpoint may not be saved, for the next event's item: the setups where
 * a process cannot reach its own listener (an HTTP(S)_PROXY without NO_PROXY for loopback, n8n's
 * SSRF protection blocking loopback) otherwise show only in the server log.
 */
export function storageWarning(memory: EndpointMemory): string | undefined {
	const loop = memory.saveLoop;
	if (loop.lastError === undefined && loop.givenUp === 0) return undefined;
	const lost =
		loop.givenUp > 0
			? `${loop.givenUp} accepted event id(s) could not be saved, so a late copy of those events may run again. `
			: '';
	loop.givenUp = 0;
	return (
		`${lost}The trigger saves the ids of accepted events by a signed request to this n8n process's own listener (${memory.own.listener?.url ?? 'unknown'})` +
		`${loop.lastError ? `, and the last one failed: ${loop.lastError}` : ''}. ` +
		'If n8n has HTTP_PROXY/HTTPS_PROXY set, add 127.0.0.1 and localhost to NO_PROXY; if n8n blocks requests to loopback addresses, allow this one.'
	);
}

/**
 * On deactivation: the keys this process has not confirmed are written into the static data the
 * hook saves, so none is lost with the endpoint's memory.
 */
export function writePending(store: EndpointStore, memory: EndpointMemory | undefined): void {
	for (const key of memory?.pending.values() ?? []) store.add(key);
}

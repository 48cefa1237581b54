/**
 * Stores the ids this n8n process accepted in the workflow's static data, and keeps them there
 * while other n8n processes save it too (queue mode: several `n8n webhook` processors).
 *
 * n8n answers an accepted delivery itself, once it has registered the execution (so the service is
 * paced by what n8n can run), but then saves nothing the node changed (see receive.ts). So a
 * signed sync message carries the ids accepted meanwhile, `firstMs` to `storeGapMs` later, to the listener
 * of this same n8n process (the socket address the delivery arrived on, never the public webhook
 * URL: behind a reverse proxy or NAT, n8n often cannot reach its own public address). The trigger
 * receives it like a delivery, loads the stored ids, adds the missing ones, saves, and answers
 * which were missing. Each process saves the static data whole, from the copy it loaded when its
 * request began, so a concurrent save (another webhook processor in queue mode) can drop ids
 * again: an id counts as settled only once a sync sent at least `confirmAfterMs` after its
 * acceptance finds it stored (any request that loaded before it was stored has ended by then).
 *
 * Each sync is a whole n8n webhook request (under n8n's defaults an expression isolate, a load and
 * a save of the whole static data), so syncs are batched: new ids wait `firstMs` for one sync to
 * carry them all, longer while more keep arriving (up to `storeGapMs` after the first), also when
 * they wake a loop that was waiting to settle older ids, and settling
 * syncs come at most every `confirmBatchMs` (the first when the oldest id is due), so the ids of a
 * burst are settled by a few syncs, not one per acceptance time.
 */
import { randomUUID } from 'node:crypto';

import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { transportClock } from '../shared/transport/clock';
import { parseSecret, signWebhook } from '../shared/webhookVerifier';
import { DedupStore, splitKeys } from './dedup';
import type { EventEnvelope } from './events';
import { allMemories, pendingName, type EndpointMemory, type PendingKey } from './memory';
import type { StoredEndpoint } from './stored';

/** The type of a sync message; the service's event types never start with "n8n.". */
export const SYNC_EVENT_TYPE = 'n8n.marketplace-trigger.sync';

/** When the syncs are sent; tests change it with setSettleSchedule. */
const SETTLE_SCHEDULE = {
	/** how long a new id waits to be stored; ids that keep arriving meanwhile extend it by as much again */
	firstMs: 250,
	/**
	 * ...but no new id waits longer than this, so steady traffic shares one storing sync per second: each
	 * is a webhook request as costly as a delivery's (one per 250 ms made 0.25-0.35 syncs per delivery at
	 * 8-13 deliveries/s under n8n's defaults, 0.75x the floor trigger; one per 1 s measured 0.95-0.99x,
	 * test/bench/results), while an event after a quiet moment is still stored within firstMs
	 */
	storeGapMs: 1_000,
	/** a sync this long after an id's acceptance settles it: longer than any request of the trigger */
	confirmAfterMs: 10_000,
	/** settling syncs (when no new id waits) at most this often: one settles every id due by then */
	confirmBatchMs: 2_000,
	/** syncs that may fail, or find an id missing, before it is given up on */
	maxSyncsPerId: 8,
	sleep: async (ms: number): Promise<void> => await sleep(ms),
	now: (): number => Date.now(),
};

export type SettleSchedule = typeof SETTLE_SCHEDULE;

/** The schedule now (tests read its limits). */
export function settleSchedule(): Readonly<SettleSchedule> {
	return SETTLE_SCHEDULE;
}

/** Changes the schedule's waits, sleep or clock (tests: to prove it without waiting it out). */
export function setSettleSchedule(changes: Partial<SettleSchedule>): void {
	Object.assign(SETTLE_SCHEDULE, changes);
}

/** What a sync message carries (the body's `data`). */
export interface SyncData {
	/** webhook-ids and caught-up orders, for the id store */
	ids: DedupStore;
	/** orders whose events were accepted, for the catch-up's order store */
	orders: DedupStore;
}

/** Where a sync goes: the listener a delivery arrived on, with the path it was served at. */
export interface SyncTarget {
	url: string;
	/** the listener serves https (N8N_PROTOCOL=https): its certificate names the public host, not this address */
	tls: boolean;
}

/** The parts of an incoming request (Node's IncomingMessage under express) that locate its listener. */
export interface ArrivedRequest {
	url?: string;
	originalUrl?: string;
	socket?: { localAddress?: string; localPort?: number; encrypted?: boolean } | null;
}

/**
 * The address of the listener that received `request`, joined with the path n8n served it at
 * (the path as it arrived, so a proxy that rewrote the public path does not matter).
 */
export function syncTargetOf(request: ArrivedRequest): SyncTarget | undefined {
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
 * The sync loop of one endpoint in this process. It keeps the newest request's IWebhookFunctions
 * and sends with its `helpers.httpRequest` after that request ended (an n8n internal the loop
 * relies on; the engine suite's sync tests and the real-n8n suites fail the day it stops holding).
 */
export class SyncLoop {
	running = false;
	stopped = false;
	/** why the last sync failed, if it did; cleared by the next one that works */
	lastError?: string;
	/** ids given up on since the last time an item reported it */
	givenUp = 0;
	/** shortens the loop's current wait to `firstMs` when it is waiting to settle ids, not to store new ones */
	wakeFromLongWait?: () => void;
	/** when the last sync was sent */
	lastSyncAt = -Infinity;
	/** ids accepted since the loop began its current wait: a burst still coming */
	arrivals = 0;

	constructor(
		readonly memory: EndpointMemory,
		public ctx: IWebhookFunctions,
		public target: SyncTarget,
		public secret: string,
	) {}

	/** the keys not settled yet (the endpoint memory's) */
	get keys(): Map<string, PendingKey> {
		return this.memory.pending;
	}

	get url(): string {
		return this.memory.url;
	}

	stop(): void {
		this.stopped = true;
	}
}

/** Event ids this process has not settled yet, at `url` or at every URL (for tests). */
export function pendingCount(url?: string): number {
	let count = 0;
	for (const memory of allMemories()) {
		if (url !== undefined && memory.url !== url) continue;
		for (const entry of memory.pending.values()) if (entry.kind === 'ids') count++;
	}
	return count;
}

/**
 * Why accepted ids of this endpoint may not be saved, for the next event's item: the setups where
 * a process cannot reach its own listener (an HTTP(S)_PROXY without NO_PROXY for loopback, n8n's
 * SSRF protection blocking loopback) otherwise show only in the server log.
 */
export function storageProblem(memory: EndpointMemory): string | undefined {
	const entry = memory.sync;
	if (!entry || (entry.lastError === undefined && entry.givenUp === 0)) return undefined;
	const lost =
		entry.givenUp > 0
			? `${entry.givenUp} accepted event id(s) could not be saved, so a late copy of those events may run again. `
			: '';
	entry.givenUp = 0;
	return (
		`${lost}The trigger stores the ids of accepted events by a signed request to this n8n process's own listener (${entry.target.url})` +
		`${entry.lastError ? `, and the last one failed: ${entry.lastError}` : ''}. ` +
		'If n8n has HTTP_PROXY/HTTPS_PROXY set, add 127.0.0.1 and localhost to NO_PROXY; if n8n blocks requests to loopback addresses, allow this one.'
	);
}

/** One key to store: its kind (which store) and until when it must be kept. */
export interface AcceptedKey {
	key: string;
	kind: keyof SyncData;
	untilMs: number;
}

/** Notes keys accepted at `url` (served by the listener `target`) and makes sure a sync loop runs for them. */
export function noteAccepted(
	ctx: IWebhookFunctions,
	memory: EndpointMemory,
	target: SyncTarget,
	secret: string,
	accepted: AcceptedKey[],
): void {
	let entry = memory.sync;
	if (!entry || entry.stopped) memory.sync = entry = new SyncLoop(memory, ctx, target, secret);
	// the newest request's context, listener and secret (a rotation may have happened meanwhile)
	Object.assign(entry, { ctx, target, secret });
	for (const { key, kind, untilMs } of accepted) {
		entry.keys.set(pendingName(kind, key), {
			key,
			untilMs,
			kind,
			acceptedAt: SETTLE_SCHEDULE.now(),
			stored: false,
			syncs: 0,
		});
	}
	entry.arrivals++;
	// a new id must not wait for the older ones' settling check: sync within firstMs (longer while a burst keeps coming)
	entry.wakeFromLongWait?.();
	if (entry.running) return;
	entry.running = true;
	const loop = entry;
	void settle(loop).finally(() => (loop.running = false));
}

/**
 * The wait before the next sync: `firstMs` while an id is not stored yet; else until the first id
 * can be settled, and at least `confirmBatchMs` after the last sync.
 */
function nextWait(entry: SyncLoop): number {
	let due = Infinity;
	for (const id of entry.keys.values()) {
		if (!id.stored) return SETTLE_SCHEDULE.firstMs;
		due = Math.min(due, id.acceptedAt + SETTLE_SCHEDULE.confirmAfterMs);
	}
	return Math.max(
		0,
		due - SETTLE_SCHEDULE.now(),
		entry.lastSyncAt + SETTLE_SCHEDULE.confirmBatchMs - SETTLE_SCHEDULE.now(),
	);
}

function oldestNotStored(entry: SyncLoop): number {
	let oldest = Infinity;
	for (const id of entry.keys.values()) if (!id.stored) oldest = Math.min(oldest, id.acceptedAt);
	return oldest;
}

async function settle(entry: SyncLoop): Promise<void> {
	while (entry.keys.size > 0) {
		const wait = nextWait(entry);
		entry.arrivals = 0;
		await new Promise<void>((resolve) => {
			if (wait > SETTLE_SCHEDULE.firstMs) {
				entry.wakeFromLongWait = () => {
					entry.wakeFromLongWait = undefined;
					entry.arrivals = 0;
					void SETTLE_SCHEDULE.sleep(SETTLE_SCHEDULE.firstMs).then(resolve);
				};
			}
			void SETTLE_SCHEDULE.sleep(wait).then(resolve);
		});
		entry.wakeFromLongWait = undefined;
		// a burst still coming waits firstMs more, until storeGapMs after its oldest id that is not stored
		for (
			let limit = oldestNotStored(entry) + SETTLE_SCHEDULE.storeGapMs;
			entry.arrivals > 0 && SETTLE_SCHEDULE.now() < limit;

		) {
			entry.arrivals = 0;
			await SETTLE_SCHEDULE.sleep(Math.min(SETTLE_SCHEDULE.firstMs, limit - SETTLE_SCHEDULE.now()));
		}
		if (entry.stopped) return;
		const carried = [...entry.keys];
		const sentAt = SETTLE_SCHEDULE.now();
		entry.lastSyncAt = sentAt;
		const missing = await sendSync(entry, carried);
		const givenUp: PendingKey[] = [];
		for (const [key, id] of carried) {
			// a burst wakes the loop for each new id, so an id found stored may be carried often before it can be settled
			if (!missing || missing.has(key)) id.syncs++;
			if (missing) {
				// settled: stored, no other process's request can still save over it, nor one of this process
				// that loaded the static data before it was stored
				const settled = id.storedSeq !== undefined && !entry.memory.busySince(id.storedSeq);
				if (
					!missing.has(key) &&
					sentAt - id.acceptedAt >= SETTLE_SCHEDULE.confirmAfterMs &&
					settled
				) {
					entry.keys.delete(key);
					continue;
				}
				id.stored = true;
				id.storedSeq ??= entry.memory.lastSeq;
			}
			if (id.syncs >= SETTLE_SCHEDULE.maxSyncsPerId) {
				entry.keys.delete(key);
				givenUp.push(id);
			}
		}
		// an order's key (kept for the catch-up) is not an event id the user could see run twice
		const givenUpIds = givenUp.filter((id) => id.kind === 'ids').length;
		if (givenUpIds > 0) {
			entry.givenUp += givenUpIds;
			entry.ctx.logger.error(
				`Marketplace Trigger could not confirm that ${givenUpIds} accepted event id(s) are stored; ` +
					`a late copy of those events may run again${entry.lastError ? ` (last sync error: ${entry.lastError})` : ''}`,
				{ url: entry.url, syncUrl: entry.target.url },
			);
		}
	}
}

/** One sync message; the keys (`pendingName`) the receiving process found missing, or undefined if it failed. */
async function sendSync(
	entry: SyncLoop,
	carried: Array<[string, PendingKey]>,
): Promise<Set<string> | undefined> {
	const data: SyncData = { ids: new DedupStore(), orders: new DedupStore() };
	for (const [, { key, untilMs, kind }] of carried) data[kind].remember(key, untilMs);
	const id = `sync_${randomUUID()}`;
	// signed at the time the receiving request verifies with (the transport's clock)
	const now = transportClock().now();
	const timestamp = Math.floor(now / 1000);
	const body = JSON.stringify({
		id,
		type: SYNC_EVENT_TYPE,
		createdAt: new Date(now).toISOString(),
		data: { ids: data.ids.toState(), orders: data.orders.toState() },
	});
	try {
		const answer = (await entry.ctx.helpers.httpRequest({
			method: 'POST',
			url: entry.target.url,
			// the certificate is made for the public name; the message is signed, and the address is this process's own
			skipSslCertificateValidation: entry.target.tls,
			body,
			headers: {
				'content-type': 'application/json',
				'webhook-id': id,
				'webhook-timestamp': String(timestamp),
				'webhook-signature': signWebhook(
					id,
					timestamp,
					Buffer.from(body),
					parseSecret(entry.secret),
				),
			},
			json: true,
			timeout: 5_000,
		})) as { missing?: unknown; missingOrders?: unknown };
		entry.lastError = undefined;
		return new Set([
			...splitKeys(answer?.missing).map((k) => pendingName('ids', k)),
			...splitKeys(answer?.missingOrders).map((k) => pendingName('orders', k)),
		]);
	} catch (error) {
		entry.lastError = (error as Error).message;
		entry.ctx.logger.warn(
			`Marketplace Trigger could not store accepted event ids through ${entry.target.url}: ${entry.lastError}`,
		);
		return undefined;
	}
}

/**
 * The receiving end of a sync message (of this process or another; verified like a delivery):
 * adds the keys it carries to the stored ones and answers which of them the stored copy lacked.
 * The trigger answers it itself, so n8n saves the static data (see receive.ts).
 */
export function receiveSync(
	stored: StoredEndpoint,
	memory: EndpointMemory,
	event: EventEnvelope,
	nowMs: number,
): IDataObject {
	const sent: SyncData = {
		ids: DedupStore.fromState(event.data.ids),
		orders: DedupStore.fromState(event.data.orders),
	};
	const missing = stored.seen.uncovered(sent.ids);
	// an order a catch-up window has passed needs storing no more
	sent.orders.prune(Math.max(stored.caughtUpTo ?? -Infinity, memory.caughtUpTo));
	const missingOrders = stored.orders.uncovered(sent.orders);
	stored.absorb(memory, nowMs);
	stored.add('ids', sent.ids);
	stored.add('orders', sent.orders);
	return {
		received: true,
		sync: true,
		missing: missing.join(''),
		missingOrders: missingOrders.join(''),
	};
}

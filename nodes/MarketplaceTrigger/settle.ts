/**
 * Keeps the ids this n8n process accepted in the stored static data when other processes save it
 * too (queue mode: several `n8n webhook` processors behind one URL).
 *
 * Each processor saves the static data whole, from the copy it loaded when its request began, so
 * a processor that loaded before another one's save, and saves after it, removes the other's new
 * ids (n8n gives a node no atomic update). Each processor therefore re-checks its recent ids: a
 * signed sync message to the trigger's own URL carries them; whichever processor receives it loads
 * the stored ids, adds the missing ones, saves, and answers which were missing. An id counts as
 * settled once a sync finds it stored, sent at least `confirmAfterMs` after it was accepted: any
 * request that loaded before the id was saved has ended by then.
 */
import { randomUUID } from 'node:crypto';

import type { IWebhookFunctions } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { parseSecret, signWebhook } from '../shared/webhookVerifier';
import { DedupStore, splitKeys } from './dedup';

/** The type of a sync message; the service's event types never start with "n8n.". */
export const SYNC_EVENT_TYPE = 'n8n.marketplace-trigger.sync';

/** When the checks run; tests shorten the waits. */
export const SETTLE_SCHEDULE = {
	/** first check after an accepted delivery: repairs most overwrites within a second */
	firstMs: 1_000,
	/** a check this long after acceptance settles an id: longer than any request of the trigger */
	confirmAfterMs: 10_000,
	/** checks per run of the loop before it gives up on ids that could not be settled */
	rounds: 8,
	sleep: async (ms: number): Promise<void> => await sleep(ms),
};

interface Pending {
	/** key -> [expiry in Unix ms, accepted at] */
	keys: Map<string, [number, number]>;
	ctx: IWebhookFunctions;
	url: string;
	secret: string;
	running: boolean;
}

const pending = new Map<string, Pending>();

/** Forgets every unsettled id and stops the loops (as an n8n restart does; for tests). */
export function forgetPending(): void {
	pending.clear();
}

/** Ids of this process not yet settled, per workflow and URL (for tests). */
export function pendingCount(scope: string): number {
	return pending.get(scope)?.keys.size ?? 0;
}

/** Notes an id accepted at `url` and makes sure a settle loop runs for it. */
export function noteAccepted(ctx: IWebhookFunctions, scope: string, url: string, secret: string, key: string, untilMs: number): void {
	let entry = pending.get(scope);
	if (!entry) pending.set(scope, (entry = { keys: new Map(), ctx, url, secret, running: false }));
	// the newest request's context and secret (a rotation may have happened meanwhile)
	Object.assign(entry, { ctx, url, secret });
	entry.keys.set(key, [untilMs, Date.now()]);
	if (entry.running) return;
	entry.running = true;
	void settle(scope, entry).finally(() => (entry.running = false));
}

async function settle(scope: string, entry: Pending): Promise<void> {
	let wait = SETTLE_SCHEDULE.firstMs;
	for (let round = 0; round < SETTLE_SCHEDULE.rounds && entry.keys.size > 0; round++) {
		await SETTLE_SCHEDULE.sleep(wait);
		if (pending.get(scope) !== entry) return;
		const sentAt = Date.now();
		const missing = await sendSync(entry);
		if (missing) {
			for (const [key, [, acceptedAt]] of entry.keys) {
				if (!missing.has(key) && sentAt - acceptedAt >= SETTLE_SCHEDULE.confirmAfterMs) entry.keys.delete(key);
			}
		}
		wait = SETTLE_SCHEDULE.confirmAfterMs;
	}
	if (entry.keys.size > 0 && pending.get(scope) === entry) {
		entry.ctx.logger.warn(
			`Marketplace Trigger could not confirm that ${entry.keys.size} accepted event id(s) are stored; ` +
				'a late copy of those events may run again if another n8n process receives it',
			{ url: entry.url },
		);
		entry.keys.clear();
	}
}

/** One sync message; the keys the receiving process found missing, or undefined if it failed. */
async function sendSync(entry: Pending): Promise<Set<string> | undefined> {
	const ids = new DedupStore();
	for (const [key, [untilMs]] of entry.keys) ids.remember(key, untilMs);
	const id = `sync_${randomUUID()}`;
	const timestamp = Math.floor(Date.now() / 1000);
	const body = JSON.stringify({ id, type: SYNC_EVENT_TYPE, createdAt: new Date().toISOString(), data: { ids: ids.toState() } });
	try {
		const answer = (await entry.ctx.helpers.httpRequest({
			method: 'POST',
			url: entry.url,
			body,
			headers: {
				'content-type': 'application/json',
				'webhook-id': id,
				'webhook-timestamp': String(timestamp),
				'webhook-signature': signWebhook(id, timestamp, Buffer.from(body), parseSecret(entry.secret)),
			},
			json: true,
			timeout: 5_000,
		})) as { missing?: unknown };
		return new Set(splitKeys(answer?.missing));
	} catch (error) {
		entry.ctx.logger.debug(`Marketplace Trigger sync to ${entry.url} failed: ${(error as Error).message}`);
		return undefined;
	}
}

/**
 * Each event once: every fact the Marketplace Trigger keeps so that each event, and each order, runs
 * once, and the functions that read and write them. The service delivers at least once (its retries
 * carry the same webhook-id), and receivers de-duplicate by webhook-id; an order whose event never
 * arrived is caught up from the order list (catchUp.ts), and its late event must then start nothing.
 * A key is 12 characters of a SHA-256 digest: a delivery key (of the webhook-id, which the service
 * makes equal to the event's id) or an order key (of `order.created#<orderId>`); items carry the
 * event's own id, never a key.
 *
 * | fact                              | where                        | kept                                 | written by                              | read by               |
 * | --------------------------------- | ---------------------------- | ------------------------------------ | --------------------------------------- | --------------------- |
 * | delivery key of an accepted event | `known`                      | until the service could resend it    | `keepInMemory`; a copy sent again: receive.ts | `knownAs`             |
 * | order key of a caught-up order    | `known`                      | until its event's last retry (~42 h) | `keepInMemory`                                | `knownAs`, catch-up   |
 * | order key of a delivered order    | `deliveredOrders`            | until the cursor passes the order    | `keepInMemory`                                | catch-up              |
 * | cursor (orders before it ran)     | `cursor`                     | for good                             | catch-ups (`setCursor`), activation     | catch-up (catchUp.ts) |
 * | in-flight keys                    | this process's memory        | while a request handles them         | `waitAndHold`, catch-up                 | `waitAndHold`         |
 * | run keys                          | n8n's `processed_data` table | the last 2,000                       | `recordRunKeys`                         | `recordRunKeys`       |
 *
 * `known`, `deliveredOrders` and `cursor` are kept twice, alike: in the workflow's static data, per
 * webhook URL, which n8n saves when a request's result says so (`resultSavedThenRun`); and in this
 * process's memory of the endpoint (memory.ts), which every request (and hook) joins the static data
 * into when it reads it and writes back whole (store.ts `EndpointStore`).
 *
 * Why twice: n8n loads the static data anew for every request and saves it whole when the request
 * ends, last writer wins, so a save of a request that read an older copy can drop a key another
 * request accepted meanwhile. This process's copy puts it back with its next save, so only another
 * process, or a restart before that save, can miss it; the run keys, in n8n's database shared by
 * every process, catch what passes then. The static data stays the first check because it starts no
 * run at all.
 *
 * Saving: the node cannot save the static data itself; n8n saves what a request changed when
 * webhook() returns `noWebhookResponse: true`, before it starts the run with the request's items.
 * Every request ends in `resultSavedThenRun`, so every request's changes are saved that way.
 *
 * Where an accepted event is written, in order: step 3 survives a restart of this process; step 4 is
 * what every process sees:
 *
 *   webhook()  1. knownAs: known? --yes--> 2xx `ignored`, no run (the copy's key is kept longer)
 *                 | no
 *              2. keepInMemory: its keys into this process's copy           (memory: this process only)
 *              3. resultSavedThenRun: the copy into the static data;
 *                 n8n saves it, then starts the run                   (database: survives a restart)
 *   execute()  4. recordRunKeys: its keys into `processed_data`;
 *                 an item whose key is there already outputs nothing  (database: every process)
 */
import { createHash } from 'node:crypto';

import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	IWebhookResponseData,
} from 'n8n-workflow';

import { KEY_LENGTH } from './keySet';
import type { EndpointMemory, KeyToSave, TriggerProcess } from './memory';
import type { EndpointStore } from './store';

export const ORDER_CREATED = 'order.created';

// ---------------------------------------------------------------------------------------------
// The keys
// ---------------------------------------------------------------------------------------------

/** A key: 72 bits of the SHA-256 of `text` (two of 10,000 keys collide with a probability of about 1e-14). */
function keyOf(text: string): string {
	return createHash('sha256').update(text).digest('base64url').slice(0, KEY_LENGTH);
}

/**
 * The delivery key of an event, from its id. Receivers de-duplicate by webhook-id; the service sends
 * the event's id as the webhook-id header, on every retry, and the item carries the id, so webhook()
 * and execute() key it alike.
 */
export function deliveryKey(eventId: string): string {
	return keyOf(eventId);
}

/** The order key of an order: kept once its order.created event ran or it was caught up. */
export function orderKey(orderId: unknown): string {
	return keyOf(`${ORDER_CREATED}#${String(orderId)}`);
}

/** Until when a delivery key accepted at `nowMs` is kept: as long as the service could send that event again. */
export function deliveryKeptUntil(eventCreatedAt: string, nowMs: number): number {
	return nowMs + retentionFor(nowMs - Date.parse(eventCreatedAt));
}

/** Until when a caught-up order's key is kept in `known`: as long as the service may still deliver its event. */
export function caughtUpKeptUntil(createdAtMs: number, nowMs: number): number {
	// the service may deliver an event until its last retry, about 42 hours after it was created
	const retryHorizon =
		RETRY_GAPS_MS.reduce((sum, gap) => sum + gap, 0) + CLOCK_TOLERANCE_MS + RETENTION_SLACK_MS;
	const created = Number.isFinite(createdAtMs) ? createdAtMs : nowMs;
	return Math.max(created + retryHorizon, nowMs + retentionFor(Infinity));
}

/*
 * How long a key is kept. The service's rule: receivers de-duplicate by webhook-id. A key is kept
 * only as long as the service could still send it again: the service retries an event only when an
 * attempt got no 2xx, each retry after a fixed gap (1 min, 5 min, 30 min, 2 h, 5 h, 10 h, 24 h), so a
 * key accepted at attempt k can come back only after the gap that follows attempt k. `retentionFor`
 * estimates k from the event's age, erring towards a later attempt (a longer gap); a duplicate that
 * does come back is kept again from its own arrival. Keeping keys by need instead of for a fixed 72
 * hours keeps the static data, which n8n writes whole, small: about (events per second x 15 minutes)
 * keys in steady traffic.
 */

/** Gaps after attempts 1..7 of a delivery (the service makes at most 8 attempts). */
export const RETRY_GAPS_MS: readonly number[] = [1, 5, 30, 120, 300, 600, 1440].map(
	(m) => m * 60_000,
);

/** The signature check accepts timestamps up to 5 minutes off, so clocks may differ by that much. */
export const CLOCK_TOLERANCE_MS = 5 * 60_000;

/** Added to every retention: delivery time, timeouts and queueing at the service. */
export const RETENTION_SLACK_MS = 10 * 60_000;

/**
 * How long a key accepted now must be kept, given the event's age (now minus its
 * `createdAt`): until the service's next attempt could arrive, plus slack. The attempt is taken as
 * the latest one the age allows (with the clock tolerance), never an earlier one, so the gap is
 * never too short. An age that cannot be read gets the longest retention.
 */
export function retentionFor(ageMs: number): number {
	const longest = RETRY_GAPS_MS[RETRY_GAPS_MS.length - 1] + RETENTION_SLACK_MS;
	if (!Number.isFinite(ageMs)) return longest;
	const age = Math.max(0, ageMs);
	let attemptStart = 0;
	for (const gap of RETRY_GAPS_MS) {
		if (age + CLOCK_TOLERANCE_MS < attemptStart + gap) return gap + RETENTION_SLACK_MS;
		attemptStart += gap;
	}
	return longest;
}

// ---------------------------------------------------------------------------------------------
// webhook(): known?, keep in memory, save
// ---------------------------------------------------------------------------------------------

/**
 * Whether a delivery is known, and as what: its delivery key ('duplicate'), or, for an order.created,
 * its order's key as a caught-up order ('order-caught-up'); in the static data or this process's
 * copy of it.
 */
export function knownAs(
	store: EndpointStore,
	key: string,
	order: string | undefined,
	nowMs: number,
): 'duplicate' | 'order-caught-up' | undefined {
	if (store.isKnown(key, nowMs)) return 'duplicate';
	if (order && store.isKnown(order, nowMs)) return 'order-caught-up';
	return undefined;
}

/** The keys a run of an event makes known: its delivery, and its order (with the catch-up on). */
export function keysToAccept(
	event: { createdAt: string },
	key: string,
	order: string | undefined,
	nowMs: number,
): KeyToSave[] {
	const keys: KeyToSave[] = [
		{ section: 'known', key, expiresAt: deliveryKeptUntil(event.createdAt, nowMs) },
	];
	const createdAt = Date.parse(event.createdAt);
	if (order && Number.isFinite(createdAt))
		keys.push({ section: 'deliveredOrders', key: order, createdAt });
	return keys;
}

/** The keys of caught-up orders: kept in `known` as long as the service may still deliver their event. */
export function caughtUpKeys(caughtUp: IDataObject[], nowMs: number): KeyToSave[] {
	return caughtUp.map((item) => ({
		section: 'known',
		key: orderKey((item.data as IDataObject).orderId),
		expiresAt: caughtUpKeptUntil(Date.parse(String(item.createdAt)), nowMs),
	}));
}

/**
 * Accepts `keys` into this process's memory of the endpoint (through the request's store, which keeps
 * no keys of its own), so other requests of this process see them at once, and `resultSavedThenRun`
 * writes them into the static data.
 */
export function keepInMemory(store: EndpointStore, keys: KeyToSave[]): void {
	for (const one of keys) store.add(one);
}

/** Waits while a request of this process handles one of `keys`, then holds them; returns what releases them. */
export async function waitAndHold(memory: EndpointMemory, keys: string[]): Promise<() => void> {
	const running = () => keys.map((k) => memory.inFlight.get(k)).find(Boolean);
	for (let other = running(); other; other = running()) await other;
	return memory.hold(keys);
}

/**
 * The end of every request: what the store changed goes into the static data, and the result says
 * `noWebhookResponse`, for which n8n saves the static data before anything else, and then starts the
 * run with `items` (whose start, run.ts, answers the delivery). Without items the request was answered
 * already and starts nothing.
 */
export function resultSavedThenRun(
	store: EndpointStore,
	nowMs: number,
	items?: INodeExecutionData[],
): IWebhookResponseData {
	store.writeBack(nowMs);
	return items ? { noWebhookResponse: true, workflowData: [items] } : { noWebhookResponse: true };
}

// ---------------------------------------------------------------------------------------------
// execute(): the run-side check
// ---------------------------------------------------------------------------------------------

/** Keys n8n's `processed_data` table keeps for this node; older ones give way (n8n's `maxEntries`). */
export const RUN_KEYS_KEPT = 2_000;

/**
 * The keys of a run's item, as webhook() keys them: a delivered event's delivery key (the service
 * makes the event's id its webhook-id) and, for an order.created, its order key; a caught-up order's
 * order key.
 */
export function runKeysOf(json: IDataObject): string[] {
	const orderId = (json.data as IDataObject | undefined)?.orderId;
	const order = json.type === ORDER_CREATED && orderId !== undefined ? [orderKey(orderId)] : [];
	return json.caughtUp === true ? order : [deliveryKey(String(json.id)), ...order];
}

/**
 * Records the keys of a run's items in n8n's `processed_data` table, and returns the indexes of the
 * items none of whose keys it had recorded before: those run. So a copy of a delivered event, a
 * delivery of an order a catch-up brought, and a catch-up of an order whose event ran all run
 * nothing. The calls of one process go one at a time: the table's row is read and written without a
 * lock, so two at once would lose one's keys. When it cannot be used the items all pass, with a warning.
 */
export async function recordRunKeys(
	ctx: IExecuteFunctions,
	triggerProcess: TriggerProcess,
	items: INodeExecutionData[],
): Promise<{ indexes: number[]; warning?: string }> {
	const keys = items.map((item) => runKeysOf(item.json));
	const record = async () =>
		await ctx.helpers.checkProcessedAndRecord([...new Set(keys.flat())], 'node', {
			mode: 'entries',
			maxEntries: RUN_KEYS_KEPT,
		});
	// once more after a failure: two processes' first records at once fail one on the row's key
	const check = triggerProcess.runKeysRecorded.then(async () => await record().catch(record));
	triggerProcess.runKeysRecorded = check.then(
		() => undefined,
		() => undefined,
	);
	try {
		const processed = new Set((await check).processed.map(String));
		return {
			indexes: keys.flatMap((itemKeys, i) => (itemKeys.some((k) => processed.has(k)) ? [] : [i])),
		};
	} catch (error) {
		const message = (error as Error).message;
		// the processed_data table is n8n's data deduplication, the name a user knows
		ctx.logger.warn(`Marketplace Trigger could not use n8n's deduplication store: ${message}`);
		return {
			indexes: keys.map((_, i) => i),
			warning: `n8n's deduplication store could not be used (${message}): a copy of this event that reached another n8n process, or came after a restart, may run again.`,
		};
	}
}

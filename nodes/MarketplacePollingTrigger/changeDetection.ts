/**
 * Change detection of the Marketplace Polling Trigger. Pure: no n8n imports, no clock, no I/O
 * (the shared input checks are pure too).
 *
 * One poll reads `GET /v1/orders?startDate=…` (the service filters on createdAt >= startDate) and
 * compares the answer with what earlier polls saw. What was seen is kept, bounded, in the node's
 * static data: per order id its createdAt and the statuses it was seen in (the last one is the
 * current). A change is an (order id, status) pair not seen before, so every change is reported
 * once however often the overlapping windows return the order.
 */
import { timeOf, type OrderRecord } from '../shared/orders';
import { InputError, toEnumList } from '../shared/validation';

export type { OrderRecord };

export const CHANGE_KINDS = ['created', 'statusChanged'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** The status every order starts in (the service's order filters know `Created` and `Packed`). */
export const INITIAL_ORDER_STATUS = 'Created';

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

/** createdAt (ms) followed by the statuses the order was seen in, oldest first, current last. */
export type TrackedOrder = [number, ...string[]];

/** What the node keeps in static data between polls (plain JSON). */
export interface PollState {
	version: 1;
	/** settings that shape the query; when they change, the next poll re-baselines */
	fingerprint: string;
	/** host time (ISO) at which the last successful poll started */
	since: string;
	/** startDate (ISO) the last successful poll sent; never moves back while the fingerprint holds */
	startDate: string;
	/** createdAt (ms) of the newest order dropped by the size bound; such orders are not "new" */
	evictedUpTo?: number;
	/** tracked orders by id */
	seen: Record<string, TrackedOrder>;
}

export interface WatchSettings {
	/** what to report; at least one */
	events: ChangeKind[];
	/** report only changes into these statuses; empty: every status */
	statuses: string[];
	/** brands to watch; empty: every brand in the key's scope */
	brandIds: number[];
	/** with `statusChanged`: track orders created within this many days */
	lookbackDays: number;
	/** how far each window reaches back before the previous poll (commit lag, clock skew) */
	overlapMs: number;
	/** first run only: report orders created at or after this time (ms); undefined: from now */
	firstStartMs?: number;
	/** upper bound of tracked orders */
	maxTracked: number;
}

export interface Change {
	kind: ChangeKind;
	status: string;
	previousStatus?: string;
	detectedAt: string;
}

export interface DetectedChange {
	order: OrderRecord;
	change: Change;
}

export interface PollPlan {
	/** startDate to send, ms, whole seconds */
	startMs: number;
	/**
	 * Orders not tracked yet are reported as new only when created at or after this time (ms).
	 * -Infinity: every untracked order is new; Infinity: none is (first run from "now").
	 */
	reportNewFromMs: number;
}

export const DEFAULT_MAX_TRACKED = 10_000;

/** The "Watch" parameter: at least one kind, each once. */
export function toEventKinds(value: unknown): ChangeKind[] {
	const kinds = toEnumList(value, 'Watch', CHANGE_KINDS);
	if (kinds.length === 0) throw new InputError('Watch', 'select at least one kind of change');
	return [...new Set(kinds)];
}

const tracksStatus = (settings: WatchSettings) => settings.events.includes('statusChanged');

/** The settings that decide which orders a query returns. */
export function fingerprintOf(settings: WatchSettings): string {
	const brands = [...settings.brandIds].sort((a, b) => a - b).join(',');
	return `brands=${brands};lookbackDays=${tracksStatus(settings) ? settings.lookbackDays : 0}`;
}

const floorToSecond = (ms: number) => Math.floor(ms / 1000) * 1000;

/** Which window to read and which untracked orders count as new. */
export function planPoll(
	previous: PollState | undefined,
	settings: WatchSettings,
	nowMs: number,
): PollPlan {
	const fresh = previous === undefined;
	const reconfigured = !fresh && previous.fingerprint !== fingerprintOf(settings);
	const sinceMs = fresh ? undefined : Date.parse(previous.since);

	let windowStart: number;
	let reportNewFromMs: number;
	if (fresh || sinceMs === undefined || Number.isNaN(sinceMs)) {
		if (settings.firstStartMs !== undefined) {
			windowStart = settings.firstStartMs;
			reportNewFromMs = settings.firstStartMs;
		} else {
			windowStart = nowMs - settings.overlapMs;
			reportNewFromMs = Infinity;
		}
	} else {
		windowStart = sinceMs - settings.overlapMs;
		// After a change of brands or lookback, orders seen for the first time that are older than
		// the last poll were not missed: they were outside the old query. Only newer ones are new.
		reportNewFromMs = reconfigured ? windowStart : -Infinity;
	}
	if (tracksStatus(settings)) {
		windowStart = Math.min(windowStart, nowMs - settings.lookbackDays * DAY_MS);
	}
	let startMs = floorToSecond(windowStart);
	if (!fresh && !reconfigured) {
		// Tracked orders older than the previous startDate were dropped; a window reaching back
		// further (e.g. the host clock stepped back) would bring them back as "new".
		const previousStart = Date.parse(previous.startDate);
		if (!Number.isNaN(previousStart)) startMs = Math.max(startMs, previousStart);
	}
	return { startMs, reportNewFromMs };
}

function idOf(order: OrderRecord): string | undefined {
	const { id } = order;
	if (typeof id === 'number' && Number.isFinite(id)) return String(id);
	if (typeof id === 'string' && id.trim() !== '') return id.trim();
	return undefined;
}

/** When the change happened as far as the record tells: creation, or the last update. */
function occurredAt(entry: DetectedChange): number {
	const { order, change } = entry;
	const created = timeOf(order.createdAt) ?? 0;
	return change.kind === 'created' ? created : (timeOf(order.updatedAt) ?? created);
}

/**
 * Compares one poll's orders with the previous state. Returns the changes to report (oldest
 * first) and the state to keep. `orders` must be the whole answer for `plan.startMs`.
 */
export function detectChanges(
	previous: PollState | undefined,
	orders: readonly OrderRecord[],
	plan: PollPlan,
	settings: WatchSettings,
	nowMs: number,
): { changes: DetectedChange[]; state: PollState } {
	const fingerprint = fingerprintOf(settings);
	const seen: Record<string, TrackedOrder> = {};
	for (const [id, tracked] of Object.entries(previous?.seen ?? {})) seen[id] = [...tracked];
	let evictedUpTo = previous?.fingerprint === fingerprint ? previous.evictedUpTo : undefined;
	const detectedAt = new Date(nowMs).toISOString();
	const wanted = (status: string) =>
		settings.statuses.length === 0 || settings.statuses.includes(status);

	const changes: DetectedChange[] = [];
	for (const order of orders) {
		const id = idOf(order);
		if (id === undefined || typeof order.status !== 'string' || order.status === '') continue;
		const status = order.status;
		const tracked = seen[id];

		if (tracked === undefined) {
			const createdAt = timeOf(order.createdAt) ?? nowMs;
			seen[id] = [createdAt, status];
			const dropped = evictedUpTo !== undefined && createdAt <= evictedUpTo;
			if (dropped || createdAt < plan.reportNewFromMs || !wanted(status)) continue;
			if (settings.events.includes('created')) {
				changes.push({ order, change: { kind: 'created', status, detectedAt } });
			} else if (tracksStatus(settings) && status !== INITIAL_ORDER_STATUS) {
				// Created and changed between two polls: the change is reported, its origin unknown.
				changes.push({ order, change: { kind: 'statusChanged', status, detectedAt } });
			}
			continue;
		}

		const statuses = tracked.slice(1) as string[];
		const current = statuses[statuses.length - 1];
		if (status === current) continue;
		if (statuses.includes(status)) {
			// Back to a status already reported for this order: the pair was reported once.
			seen[id] = [tracked[0], ...statuses.filter((s) => s !== status), status];
			continue;
		}
		seen[id] = [tracked[0], ...statuses, status];
		if (tracksStatus(settings) && wanted(status)) {
			changes.push({
				order,
				change: { kind: 'statusChanged', status, previousStatus: current, detectedAt },
			});
		}
	}

	// Orders created before the window can never be returned again: forget them.
	for (const [id, tracked] of Object.entries(seen)) {
		if (tracked[0] < plan.startMs) delete seen[id];
	}
	// Bound the store: drop the oldest; remember how far, so they are never taken for new orders.
	const ids = Object.keys(seen);
	if (ids.length > settings.maxTracked) {
		ids.sort((a, b) => seen[a][0] - seen[b][0]);
		for (const id of ids.slice(0, ids.length - settings.maxTracked)) {
			evictedUpTo = Math.max(evictedUpTo ?? -Infinity, seen[id][0]);
			delete seen[id];
		}
	}

	changes.sort((a, b) => occurredAt(a) - occurredAt(b));
	const state: PollState = {
		version: 1,
		fingerprint,
		since: detectedAt,
		startDate: new Date(plan.startMs).toISOString(),
		seen,
	};
	if (evictedUpTo !== undefined) state.evictedUpTo = evictedUpTo;
	return { changes, state };
}

/** The previous state from static data, or undefined when absent or of another shape. */
export function readPollState(value: unknown): PollState | undefined {
	if (typeof value !== 'object' || value === null) return undefined;
	const state = value as Partial<PollState>;
	if (
		state.version !== 1 ||
		typeof state.fingerprint !== 'string' ||
		typeof state.since !== 'string' ||
		typeof state.startDate !== 'string' ||
		typeof state.seen !== 'object' ||
		state.seen === null
	) {
		return undefined;
	}
	return state as PollState;
}

export const minutes = (n: number) => n * MINUTE_MS;
export const days = (n: number) => n * DAY_MS;

/**
 * Catch Up Missed Orders, on the delivery path: every order runs once, also when its order.created
 * delivery never came (n8n stopped or unreachable for a while, a proxy that dropped requests, an
 * endpoint the service disabled). The service's own advice for a gap: list the orders with a start
 * date covering it.
 *
 * The cursor (store.ts) says that every order created before it ran or was caught up. An accepted
 * delivery moves it, reading the orders created from the cursor (Order > Get Many by start date,
 * paced and retried like every read), when:
 * - this n8n process has not caught up since it started (n8n was down, or a restart lost deliveries);
 * - the event was created a minute or more after the cursor: a quiet period longer than the
 *   service's shortest retry gap, and in steady traffic one read a minute;
 * - the endpoint was re-enabled or replaced after the service disabled it (its events are never resent);
 * - the previous catch-up stopped at MAX_CAUGHT_UP_PER_RUN.
 * - an order.created is sent again after the in-flight margin and the cursor has not passed it: in
 *   queue mode another process may be catching it up right now (below).
 * The catch-up check of trigger() (catchUpCheck.ts) moves it too, without a delivery: after n8n
 * starts or the workflow is activated, every QUIET_CHECK_MS while no delivery does, and a minute
 * after a read that saw orders too recent for its window (`checkDue`; `dueWindow`, `selfStarted`).
 * The window ends IN_FLIGHT_MS before the delivery's event (orders that recent may still have a
 * delivery under way), or before the attempt of an order sent again, or, after a re-enable, when the
 * endpoint worked again (nothing was under way).
 *
 * Each order in the window the trigger does not know is emitted once, shaped like an order.created
 * item and marked `caughtUp`. No order runs twice:
 * - orders whose event ran are kept in `orders` until the cursor passes them; caught-up orders are
 *   kept in `seen` for as long as the service may still deliver their event, which is then answered
 *   2xx and starts nothing;
 * - within a process, a catch-up and a delivery of the same order wait for each other (in-flight keys);
 * - across processes (queue mode), after its read a no-op write with an Idempotency-Key made from the
 *   endpoint and the window claims the window: only the process whose write is not a replay
 *   (`Idempotent-Replayed: true`) emits the orders. n8n saves the cursor and the keys of the request
 *   that caught up before its run starts (receive.ts). An order sent again
 *   while another process holds its window's claim (its save may not show yet) is answered 503: the
 *   service's next attempt finds it caught up, or finds the cursor past the claimed window.
 */
import type { IDataObject } from 'n8n-workflow';

import { readAll } from '../shared/transport/pagination';
import { isoSeconds } from '../shared/transport/queryEncoding';
import {
	apiRequest,
	type TransportContext,
	type TransportSettings,
} from '../shared/transport/request';
import type { EndpointMemory } from './memory';
import { ORDER_CREATED, orderKey } from './once';
import type { EndpointStore, MissedEventsNotice } from './store';

/** Orders created this close before the delivery that catches up may have a delivery under way (answers take up to 10 s). */
export const IN_FLIGHT_MS = 15_000;

/** In steady traffic the order list is read at most this often (the quota is 120 requests a minute per key). */
export const CATCH_UP_INTERVAL_MS = 60_000;

/** With no delivery catching up, the catch-up check of trigger() reads the order list this often. */
export const QUIET_CHECK_MS = 5 * 60_000;

/**
 * Orders one run brings at most: the list has no pages, so one read returns every order since the
 * cursor; a run of this many items stays small in n8n's memory, and the rest come with the next
 * deliveries, oldest first.
 */
export const MAX_CAUGHT_UP_PER_RUN = 250;

export interface CatchUpWindow {
	/** Unix ms, the service's clock; orders created in [from, to) */
	from: number;
	to: number;
}

/**
 * The window to catch up at an accepted delivery of an event created at `eventAt` (the service's
 * clock), or undefined when none is due. `resentAt` (the service's clock) is set for an order sent
 * again after the in-flight margin that the cursor has not passed: its window reaches that margin
 * before the attempt and is always due, so the delivery takes part in the claim across processes.
 *
 * A catch-up check (`selfStarted`, `eventAt` its time) finds a window due on its own terms, so
 * that quiet times cost one read every QUIET_CHECK_MS: the first since this process started,
 * QUIET_CHECK_MS since the cursor, or, a minute after this process's last read, orders that read saw
 * after its window (`memory.marginKeys`) and that have not run since, or a backlog.
 */
export function dueWindow(
	store: EndpointStore,
	memory: EndpointMemory,
	at: { eventAt: number; resentAt?: number; selfStarted?: boolean },
	notice: MissedEventsNotice | undefined,
): CatchUpWindow | undefined {
	const from = store.cursor;
	if (from === undefined || !Number.isFinite(at.eventAt)) return undefined;
	const worksAgainAt = notice ? Date.parse(notice.worksAgainAt) : NaN;
	const to = Math.max(
		at.eventAt - IN_FLIGHT_MS,
		Number.isFinite(worksAgainAt) ? worksAgainAt : -Infinity,
		at.resentAt !== undefined ? at.resentAt - IN_FLIGHT_MS : -Infinity,
	);
	if (!(to > from)) return undefined;
	if (at.selfStarted) {
		const selfDue =
			!memory.caughtUpSinceStart ||
			readAgainAt(store, memory, at.eventAt) <= at.eventAt ||
			to - from >= QUIET_CHECK_MS;
		return selfDue ? { from, to } : undefined;
	}
	const due =
		!memory.caughtUpSinceStart ||
		memory.backlog ||
		notice !== undefined ||
		at.resentAt !== undefined ||
		to - from >= CATCH_UP_INTERVAL_MS;
	return due ? { from, to } : undefined;
}

/**
 * When a catch-up check reads again whatever the cursor says: a minute after this process's last
 * read, while that read left a backlog or saw orders after its window that have not run since;
 * otherwise never (Infinity).
 */
function readAgainAt(store: EndpointStore, memory: EndpointMemory, nowMs: number): number {
	const left = memory.marginKeys.some(
		(key) => !store.isKnown('orders', key, nowMs) && !store.isKnown('seen', key, nowMs),
	);
	return memory.backlog || left ? memory.lastReadAt + CATCH_UP_INTERVAL_MS : Infinity;
}

/**
 * Whether trigger()'s catch-up check is due at `nowMs` (after its first): a minute after a read of
 * this process that left orders to look at again (or a backlog), or QUIET_CHECK_MS after the last
 * check or read of this process (a delivery's catch-up counts, so steady traffic needs none).
 */
export function checkDue(
	store: EndpointStore,
	memory: EndpointMemory,
	nowMs: number,
	lastCheckAt: number,
): boolean {
	return (
		readAgainAt(store, memory, nowMs) <= nowMs ||
		nowMs - Math.max(lastCheckAt, memory.lastReadAt) >= QUIET_CHECK_MS
	);
}

export type CatchUpResult =
	| { ran: true; events: IDataObject[]; to: number }
	| { ran: false; reason: 'claimed-by-another-process' };

/** The item of a caught-up order: the fields of an order.created event item, and `caughtUp`. */
function caughtUpEvent(
	order: IDataObject,
	window: CatchUpWindow,
	withCurrent: boolean,
): IDataObject {
	return {
		id: `caught_up_${ORDER_CREATED}_${String(order.id)}`,
		type: ORDER_CREATED,
		createdAt: order.createdAt,
		data: { brandId: order.brandId, orderId: order.id },
		caughtUp: true,
		catchUpWindow: {
			from: new Date(window.from).toISOString(),
			to: new Date(window.to).toISOString(),
		},
		...(withCurrent ? { current: order } : {}),
	};
}

/**
 * Reads the orders created in `window` that did not run, oldest first, at most MAX_CAUGHT_UP_PER_RUN,
 * and claims the window. The keys of the orders it reads are held (`hold`) until the caller has
 * added them. Throws what the transport throws (the caller answers 503 for a transient failure).
 */
export async function catchUpOrders(
	ctx: TransportContext,
	window: CatchUpWindow,
	store: EndpointStore,
	memory: EndpointMemory,
	nowMs: number,
	settings: TransportSettings,
	withCurrent: boolean,
	hold: (keys: string[]) => void,
): Promise<CatchUpResult> {
	const endpointId = store.record?.endpointId ?? 0;
	const orders = await readAll.call(ctx, {
		route: 'listOrders',
		query: { startDate: isoSeconds(window.from) },
		returnAll: true,
		settings,
	});
	// the read let other requests of this process run: the store is this process's copy, so it holds their keys
	const unrun = orders
		.map((order) => ({ order, at: Date.parse(String(order.createdAt)), key: orderKey(order.id) }))
		.filter(
			({ at, key }) =>
				at >= window.from &&
				!store.isKnown('seen', key, nowMs) &&
				!store.isKnown('orders', key, nowMs) &&
				!memory.inFlight.has(key),
		);
	memory.lastReadAt = nowMs;
	// orders too recent for this window: their delivery may be under way; a catch-up check looks again
	memory.marginKeys = unrun.filter(({ at }) => !(at < window.to)).map(({ key }) => key);
	const missed = unrun
		.filter(({ at }) => at < window.to)
		.sort((a, b) => a.at - b.at || Number(a.order.id) - Number(b.order.id));
	let to = window.to;
	memory.backlog = missed.length > MAX_CAUGHT_UP_PER_RUN;
	if (memory.backlog) to = missed[MAX_CAUGHT_UP_PER_RUN].at;
	const taken = missed.slice(0, MAX_CAUGHT_UP_PER_RUN);
	// a delivery of one of these orders arriving meanwhile waits for this catch-up (the caller releases them)
	hold(taken.map(({ key }) => key));
	if (!(await claimWindow(ctx, endpointId, window, settings)))
		return { ran: false, reason: 'claimed-by-another-process' };
	return {
		ran: true,
		events: taken.map(({ order }) => caughtUpEvent(order, { from: window.from, to }, withCurrent)),
		to,
	};
}

/**
 * Claims `window` for this process: a write that changes nothing (the endpoint's status set to
 * Enabled, as it is) carrying an Idempotency-Key made of the endpoint and the window. The service
 * answers a second write with that key, from any process, with the first one's stored answer marked
 * `Idempotent-Replayed: true`: false then, another process has the window. The window's end is in
 * the key too, so a later catch-up from the same start (a save of an older copy took the cursor
 * back) is not taken for this one; overlapping windows are kept apart by run.ts.
 */
async function claimWindow(
	ctx: TransportContext,
	endpointId: number,
	window: CatchUpWindow,
	settings: TransportSettings,
): Promise<boolean> {
	const claim = await apiRequest.call(
		ctx,
		{
			route: 'updateWebhookEndpoint',
			pathParams: { id: endpointId },
			body: { status: 'Enabled' },
			idempotencyKey: `n8n-catch-up-${String(endpointId)}-${window.from}-${window.to}`,
		},
		settings,
	);
	return claim.headers['idempotent-replayed'] !== 'true';
}

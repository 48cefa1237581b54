/**
 * Catch Up Missed Orders: every order runs once, also when its order.created delivery never came (n8n
 * stopped or unreachable for a while, a proxy that dropped requests, an endpoint the service
 * disabled). The service's own advice for a gap: list the orders with a start date covering it.
 *
 * Only a check catches up, never a delivery: trigger()'s catch-up check (catchUpCheck.ts), one at a
 * time on the one main process that runs triggers, asks the service for a test delivery, and
 * webhook() catches up in that request (receive.ts `catchUpOnCheckDelivery`), where n8n saves the
 * cursor and the keys before the run starts. Any other webhook.test on the production URL (a user's
 * Webhook Endpoint > Test) is taken for a check too. Where deliveries do not reach n8n, trigger()
 * catches up itself (catchUpCheck.ts `catchUpHere`).
 *
 * The cursor (store.ts) says that every order created before it ran or was caught up. A check reads
 * the orders created from the cursor (Order > Get Many by start date, paced and retried like every
 * read): the first 20-40 s after the start, then every QUIET_CHECK_MS, or a minute after a read that
 * left a backlog (`checkDue`). The window ends IN_FLIGHT_MS before the check (orders that recent may
 * still have a delivery under way: the next check's window has them), or, after a re-enable, when the
 * endpoint worked again (nothing was under way).
 *
 * Each order in the window the trigger does not know is emitted once, shaped like an order.created
 * item and marked `caughtUp`. No order runs twice:
 * - orders whose event ran are kept in `deliveredOrders` until the cursor passes them; caught-up orders are
 *   kept in `known` for as long as the service may still deliver their event, which is then answered
 *   2xx and starts nothing;
 * - within a process, a catch-up and a delivery of the same order wait for each other (in-flight keys);
 * - across processes (a delivery of the order at another webhook processor while it is caught up),
 *   the run's check of n8n's `processed_data` table (run.ts) lets an item run only when none of its
 *   keys ran before.
 */
import type { IDataObject } from 'n8n-workflow';

import { readAll } from '../shared/transport/pagination';
import { isoSeconds } from '../shared/transport/queryEncoding';
import type { TransportContext, TransportSettings } from '../shared/transport/request';
import type { EndpointMemory } from './memory';
import { ORDER_CREATED, orderKey } from './once';
import type { EndpointStore, MissedEventsNotice } from './store';

/** Orders created this close before a check may still have a delivery under way (answers take up to 10 s). */
export const IN_FLIGHT_MS = 15_000;

/** A read that left a backlog is made again this much later; one process reads at most this often. */
export const READ_AGAIN_MS = 60_000;

/** The catch-up check reads the order list this often (the quota is 120 requests a minute per key). */
export const QUIET_CHECK_MS = 5 * 60_000;

/**
 * Orders one run brings at most: the list has no pages, so one read returns every order since the
 * cursor; a run of this many items stays small in n8n's memory, and the rest come with the next
 * check, a minute later, oldest first.
 */
export const MAX_CAUGHT_UP_PER_RUN = 250;

/** Catch Up Missed Orders applies: a run of the published workflow (not the editor's), the option on, Order Created subscribed. */
export function catchUpApplies(
	mode: string,
	options: { catchUpMissedOrders?: boolean },
	subscribed: string[],
): boolean {
	return (
		mode !== 'manual' && options.catchUpMissedOrders !== false && subscribed.includes(ORDER_CREATED)
	);
}

export interface CatchUpWindow {
	/** Unix ms, the service's clock; orders created in [from, to) */
	from: number;
	to: number;
}

/**
 * The window a catch-up check reads, or undefined when there is none. trigger() decides when to check
 * (`checkDue`); this only keeps one process from reading twice within READ_AGAIN_MS (a webhook.test
 * from elsewhere, a user's Webhook Endpoint > Test, is taken for a check too), except for the first
 * read since this process started and after a re-enable (`notice`). `serviceNowMs` is the service's
 * time at the check (the check delivery's `createdAt`; this process's clock where trigger() checks
 * itself), which order times compare with; `nowMs` is this process's.
 */
export function dueWindow(
	store: EndpointStore,
	memory: EndpointMemory,
	at: { nowMs: number; serviceNowMs: number },
	notice: MissedEventsNotice | undefined,
): CatchUpWindow | undefined {
	const from = store.cursor;
	if (from === undefined || !Number.isFinite(at.serviceNowMs)) return undefined;
	const worksAgainAt = notice ? Date.parse(notice.worksAgainAt) : NaN;
	const to = Math.max(
		at.serviceNowMs - IN_FLIGHT_MS,
		Number.isFinite(worksAgainAt) ? worksAgainAt : -Infinity,
	);
	if (!(to > from)) return undefined;
	const due =
		!memory.caughtUpSinceStart ||
		notice !== undefined ||
		at.nowMs - memory.lastReadAt >= READ_AGAIN_MS;
	return due ? { from, to } : undefined;
}

/**
 * Whether trigger()'s catch-up check is due at `nowMs` (after its first): QUIET_CHECK_MS after the
 * last check or read of this process, or READ_AGAIN_MS after a read that left a backlog.
 */
export function checkDue(memory: EndpointMemory, nowMs: number, lastCheckAt: number): boolean {
	const gap = memory.backlog ? READ_AGAIN_MS : QUIET_CHECK_MS;
	return nowMs - Math.max(lastCheckAt, memory.lastReadAt) >= gap;
}

export interface CatchUpResult {
	/** the caught-up items, oldest first */
	events: IDataObject[];
	/** where the cursor goes: the window's end, or the first order left for the next read */
	to: number;
}

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
 * Reads the orders created in `window` that did not run, oldest first, at most MAX_CAUGHT_UP_PER_RUN.
 * The keys of the orders it reads are held (`hold`) until the caller has added them. Throws what the
 * transport throws (webhook() answers 503 for a transient failure).
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
				!store.isKnown(key, nowMs) &&
				!store.wasDelivered(key) &&
				!memory.inFlight.has(key),
		);
	memory.lastReadAt = nowMs;
	// orders too recent for this window may still have a delivery under way: the next check's window has them
	const missed = unrun
		.filter(({ at }) => at < window.to)
		.sort((a, b) => a.at - b.at || Number(a.order.id) - Number(b.order.id));
	let to = window.to;
	memory.backlog = missed.length > MAX_CAUGHT_UP_PER_RUN;
	if (memory.backlog) to = missed[MAX_CAUGHT_UP_PER_RUN].at;
	const taken = missed.slice(0, MAX_CAUGHT_UP_PER_RUN);
	// a delivery of one of these orders arriving meanwhile waits for this catch-up (the caller releases them)
	hold(taken.map(({ key }) => key));
	return {
		events: taken.map(({ order }) => caughtUpEvent(order, { from: window.from, to }, withCurrent)),
		to,
	};
}

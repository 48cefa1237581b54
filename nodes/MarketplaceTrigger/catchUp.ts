/**
 * Catch Up Missed Orders: every order runs once, also when its order.created delivery never came
 * (n8n stopped or unreachable for a while, a proxy that dropped requests, an endpoint the service
 * disabled). The service's own advice for a gap: list the orders with a start date covering it.
 *
 * A cursor in the static data (`caughtUpTo`, the service's clock) says that every order created
 * before it ran or was caught up. An accepted delivery moves it, reading the orders created from
 * the cursor (Order > Get Many by start date, paced and retried like every read), when:
 * - this n8n process has not caught up since it started (n8n was down, or a restart lost deliveries);
 * - the event was created a minute or more after the cursor: a quiet period longer than the
 *   service's shortest retry gap, and in steady traffic one read a minute;
 * - the endpoint was re-enabled or replaced after the service disabled it (its events are never resent);
 * - the previous catch-up stopped at MAX_CAUGHT_UP_PER_RUN.
 * The window ends IN_FLIGHT_MS before the delivery's event (orders that recent may still have a
 * delivery under way) or, after a re-enable, when the endpoint worked again (nothing was under way).
 *
 * Each order in the window the trigger does not know is emitted once, shaped like an order.created
 * item and marked `caughtUp`. No order runs twice:
 * - orders whose event was accepted are kept (`orders` store) until the cursor passes them; caught-up
 *   orders are kept (`seen` store) for as long as the service may still deliver their event, which
 *   is then answered 2xx and starts nothing;
 * - within a process, a catch-up and a delivery of the same order wait for each other (in-flight keys);
 * - across processes (queue mode), after its read a no-op write with an Idempotency-Key made from the
 *   endpoint and the window's start claims the window: only the process whose write is not a replay
 *   (`Idempotent-Replayed: true`) emits the orders. The delivery that catches up is answered by the
 *   trigger itself, so n8n saves the cursor and the keys before its run starts, and settle.ts keeps
 *   them stored.
 */
import type { IDataObject, IHookFunctions, IWebhookFunctions } from 'n8n-workflow';

import { readAll } from '../shared/transport/pagination';
import { isoSeconds } from '../shared/transport/queryEncoding';
import { apiRequest, type TransportSettings } from '../shared/transport/request';
import { CLOCK_TOLERANCE_MS, RETENTION_SLACK_MS, RETRY_GAPS_MS, retentionFor } from './dedup';
import { dedupKey } from './events';
import type { EndpointMemory } from './memory';
import { getCaughtUpTo, setCaughtUpTo, type MissedEventsNotice } from './state';
import type { StoredEndpoint } from './stored';

export const ORDER_CREATED = 'order.created';

/** Orders created this close before the delivery that catches up may have a delivery under way (answers take up to 10 s). */
export const IN_FLIGHT_MS = 15_000;

/** In steady traffic the order list is read at most this often (the quota is 120 requests a minute per key). */
export const CATCH_UP_INTERVAL_MS = 60_000;

/**
 * Orders one run brings at most: the list has no pages, so one read returns every order since the
 * cursor; a run of this many items stays small in n8n's memory, and the rest come with the next
 * deliveries, oldest first.
 */
export const MAX_CAUGHT_UP_PER_RUN = 250;

/** The service may deliver an event until its last retry, about 42 hours after it was created. */
const RETRY_HORIZON_MS =
	RETRY_GAPS_MS.reduce((sum, gap) => sum + gap, 0) + CLOCK_TOLERANCE_MS + RETENTION_SLACK_MS;

/** The key an order is remembered under once its order.created event ran or it was caught up. */
export function orderKey(orderId: unknown): string {
	return dedupKey(`${ORDER_CREATED}#${String(orderId)}`);
}

/** Until when a caught-up order's key is kept: as long as the service may still deliver its event. */
export function caughtUpUntil(createdAtMs: number, nowMs: number): number {
	const created = Number.isFinite(createdAtMs) ? createdAtMs : nowMs;
	return Math.max(created + RETRY_HORIZON_MS, nowMs + retentionFor(Infinity));
}

/**
 * On activation: a production endpoint made now (`endpointCreatedAt`, the service's clock) starts the
 * catch-up then; an endpoint found already registered with no cursor starts at its first delivery (the
 * service's clock again; when it was made, orders may have run without their keys kept). A cursor kept
 * from an earlier activation stays, so a workflow published again picks up the orders created while it
 * was unpublished, as the polling trigger does. With the option off there is no cursor, so turning it
 * on again starts then.
 */
export function startCatchUp(ctx: IHookFunctions, endpointCreatedAt: string | undefined): void {
	const url = ctx.getNodeWebhookUrl('default');
	const options = ctx.getNodeParameter('options', {}) as { catchUpMissedOrders?: boolean };
	if (!url || ctx.getMode() === 'manual') return;
	const data = ctx.getWorkflowStaticData('node');
	if (options.catchUpMissedOrders === false) return setCaughtUpTo(data, url, undefined);
	const since = Date.parse(endpointCreatedAt ?? '');
	if (getCaughtUpTo(data, url) === undefined && Number.isFinite(since))
		setCaughtUpTo(data, url, since);
}

export interface CatchUpWindow {
	/** Unix ms, the service's clock; orders created in [from, to) */
	from: number;
	to: number;
}

/**
 * The window to catch up at an accepted delivery of an event created at `eventAtMs` (the service's
 * clock), or undefined when none is due.
 */
export function dueWindow(
	stored: StoredEndpoint,
	memory: EndpointMemory,
	eventAtMs: number,
	notice: MissedEventsNotice | undefined,
): CatchUpWindow | undefined {
	const from = stored.caughtUpTo;
	if (from === undefined || !Number.isFinite(eventAtMs)) return undefined;
	const worksAgainAt = notice ? Date.parse(notice.worksAgainAt) : NaN;
	const to = Math.max(
		eventAtMs - IN_FLIGHT_MS,
		Number.isFinite(worksAgainAt) ? worksAgainAt : -Infinity,
	);
	if (!(to > from)) return undefined;
	const due =
		!memory.caughtUpSinceStart ||
		memory.backlog ||
		notice !== undefined ||
		to - from >= CATCH_UP_INTERVAL_MS;
	return due ? { from, to } : undefined;
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
 * Reads the orders created in `window` that the trigger does not know, oldest first, at most
 * MAX_CAUGHT_UP_PER_RUN, and claims the window. The keys of the orders it reads are held (`hold`)
 * until the caller has recorded them. Throws what the transport throws (the caller
 * answers 503 for a transient failure).
 */
export async function catchUpOrders(
	ctx: IWebhookFunctions,
	window: CatchUpWindow,
	stored: StoredEndpoint,
	memory: EndpointMemory,
	nowMs: number,
	settings: TransportSettings,
	withCurrent: boolean,
	hold: (keys: string[]) => void,
): Promise<CatchUpResult> {
	const endpointId = stored.record?.endpointId ?? 0;
	const orders = await readAll.call(ctx, {
		route: 'listOrders',
		query: { startDate: isoSeconds(window.from) },
		returnAll: true,
		settings,
	});
	// the read let other requests of this process run: take in what they accepted
	stored.absorb(memory, nowMs);
	const missed = orders
		.map((order) => ({ order, at: Date.parse(String(order.createdAt)), key: orderKey(order.id) }))
		.filter(
			({ at, key }) =>
				at >= window.from &&
				at < window.to &&
				!stored.knows(memory, 'ids', key, nowMs) &&
				!stored.knows(memory, 'orders', key, nowMs) &&
				!memory.inFlight.has(key),
		)
		.sort((a, b) => a.at - b.at || Number(a.order.id) - Number(b.order.id));
	let to = window.to;
	memory.backlog = missed.length > MAX_CAUGHT_UP_PER_RUN;
	if (memory.backlog) to = missed[MAX_CAUGHT_UP_PER_RUN].at;
	const taken = missed.slice(0, MAX_CAUGHT_UP_PER_RUN);
	// a delivery of one of these orders arriving meanwhile waits for this catch-up (the caller releases them)
	hold(taken.map(({ key }) => key));
	const claim = await apiRequest.call(
		ctx,
		{
			route: 'updateWebhookEndpoint',
			pathParams: { id: endpointId },
			body: { status: 'Enabled' },
			idempotencyKey: `n8n-catch-up-${String(endpointId)}-${window.from}`,
		},
		settings,
	);
	if (claim.headers['idempotent-replayed'] === 'true')
		return { ran: false, reason: 'claimed-by-another-process' };
	return {
		ran: true,
		events: taken.map(({ order }) => caughtUpEvent(order, { from: window.from, to }, withCurrent)),
		to,
	};
}

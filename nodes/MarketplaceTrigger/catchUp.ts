/**
 * Catch-up of the orders whose order.created event never came: the service does not resend the
 * events of an endpoint it disabled, so with the option "Catch Up Missed Orders" the first
 * accepted delivery after the endpoint works again also reads the orders created in the missed
 * window (Order > Get Many by start date, paced and retried like every read) and emits each one
 * whose event did not arrive as an item shaped like an order.created event, marked `caughtUp`.
 *
 * No order runs twice:
 * - an order is remembered under its own key beside the webhook-ids, both when its real
 *   order.created event is accepted and when it is caught up, and each way skips the other;
 * - the delivery that catches up saves the notice's removal and these keys before its run starts
 *   (the trigger answers it itself), so a restart or re-activation does not catch up again;
 * - in queue mode several processes may see the notice at once: after its read, a no-op write
 *   with an Idempotency-Key made from the endpoint and the re-enable time claims the catch-up, and
 *   only the process whose write is not a replay (`Idempotent-Replayed: true`) emits the orders.
 *   A claim made last cannot be lost to a failed read; a claim whose own answer was lost and
 *   replayed skips the catch-up (the notice still names the window): never twice.
 */
import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

import { readAll } from '../shared/transport/pagination';
import { isoSeconds } from '../shared/transport/queryEncoding';
import { apiRequest, type TransportSettings } from '../shared/transport/request';
import type { DedupStore } from './dedup';
import { dedupKey } from './events';
import type { EndpointRecord, MissedEventsNotice } from './state';

export const ORDER_CREATED = 'order.created';

/** The key an order is remembered under once its order.created event ran or it was caught up. */
export function orderKey(orderId: unknown): string {
	return dedupKey(`${ORDER_CREATED}#${String(orderId)}`);
}

export type CatchUpResult =
	| { ran: true; events: IDataObject[] }
	| { ran: false; reason: 'claimed-by-another-process' | 'window-unknown' };

/** The item of a caught-up order: the fields of an order.created event item, and `caughtUp`. */
function caughtUpEvent(order: IDataObject, withCurrent: boolean): IDataObject {
	return {
		id: `caught_up_${ORDER_CREATED}_${String(order.id)}`,
		type: ORDER_CREATED,
		createdAt: order.createdAt,
		data: { brandId: order.brandId, orderId: order.id },
		caughtUp: true,
		...(withCurrent ? { current: order } : {}),
	};
}

/**
 * Reads the orders created in the notice's window that `seen` does not know, oldest first.
 * Throws what the transport throws (the caller answers 503 for a transient failure).
 */
export async function catchUpOrders(
	ctx: IWebhookFunctions,
	record: EndpointRecord,
	notice: MissedEventsNotice,
	seen: DedupStore,
	settings: TransportSettings,
	withCurrent: boolean,
): Promise<CatchUpResult> {
	const from = notice.catchUpFrom === null ? NaN : Date.parse(notice.catchUpFrom);
	const until = Date.parse(notice.worksAgainAt);
	if (!Number.isFinite(from) || !Number.isFinite(until)) return { ran: false, reason: 'window-unknown' };

	const orders = await readAll.call(ctx, {
		route: 'listOrders',
		query: { startDate: isoSeconds(from) },
		returnAll: true,
		settings,
	});
	const now = Date.now();
	const missed = orders
		.map((order) => ({ order, at: Date.parse(String(order.createdAt)) }))
		.filter(({ order, at }) => at >= from && at < until && !seen.has(orderKey(order.id), now))
		.sort((a, b) => a.at - b.at || Number(a.order.id) - Number(b.order.id));

	const claim = await apiRequest.call(
		ctx,
		{
			route: 'updateWebhookEndpoint',
			pathParams: { id: record.endpointId },
			body: { status: 'Enabled' },
			idempotencyKey: `n8n-catch-up-${record.endpointId}-${Date.parse(notice.reEnabledAt)}`,
		},
		settings,
	);
	if (claim.headers['idempotent-replayed'] === 'true') return { ran: false, reason: 'claimed-by-another-process' };
	return { ran: true, events: missed.map(({ order }) => caughtUpEvent(order, withCurrent)) };
}

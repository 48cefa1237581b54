import { MARK_PACKED_MAX_BATCH, ORDER_STATUSES, ROUTES } from '../../../nodes/shared/routes';
import { parseJsonObject, validateBody } from '../body';
import { invalid, invalidAll, itemError } from '../errors';
import type { Order } from '../model';
import { isPositiveInteger, paginate } from '../query';
import { FULFILLMENT_MODELS } from '../seed';
import { type ApiContext, brandFilter, inScope, notFound, ok } from './context';

const RETURN_STATUSES = ['Requested', 'Received', 'Refunded'] as const;

/** startDate: an ISO 8601 UTC date-time (2026-11-20T00:00:00Z, optional .sss) or a date (YYYY-MM-DD). */
export function parseStartDate(value: string): number {
	const m = /^(\d{4}-\d{2}-\d{2})(T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z)?$/.exec(value);
	const ms = m ? Date.parse(m[2] ? value : `${m[1]}T00:00:00Z`) : NaN;
	if (Number.isNaN(ms))
		throw invalid('/startDate', 'startDate must be an ISO 8601 UTC date-time or a YYYY-MM-DD date');
	return ms;
}

export function listOrders({ state, user, query }: ApiContext) {
	const route = ROUTES.listOrders;
	query.allowOnly(['statuses', 'brandIds', 'fulfillmentModel', 'startDate']);
	const statuses = query.enumList('statuses', route.listEncoding, ORDER_STATUSES);
	const brands = brandFilter(user, query.intList('brandIds', route.listEncoding));
	const model = query.scalar('fulfillmentModel');
	if (model !== undefined && !FULFILLMENT_MODELS.includes(model)) {
		throw invalid(
			'/fulfillmentModel',
			`fulfillmentModel must be one of ${FULFILLMENT_MODELS.join(', ')}`,
		);
	}
	const rawStart = query.scalar('startDate');
	const start = rawStart === undefined ? undefined : parseStartDate(rawStart);
	const orders = state.store.orders.filter(
		(o) =>
			brands.has(o.brandId) &&
			(!statuses || statuses.includes(o.status)) &&
			(model === undefined || o.fulfillmentModel === model) &&
			(start === undefined || Date.parse(o.createdAt) >= start),
	);
	return ok({ orders });
}

export function getOrder({ state, user, params, query }: ApiContext) {
	query.allowOnly([]);
	if (!isPositiveInteger(params.id)) throw invalid('/id', 'id must be a positive integer');
	const order = state.store.order(Number(params.id));
	if (!order || !inScope(user, order.brandId)) throw notFound(`order ${params.id}`);
	return ok(order);
}

export function markOrdersPacked({ state, user, rawBody, query }: ApiContext) {
	query.allowOnly([]);
	const body = parseJsonObject(rawBody);
	const errors = validateBody(body, {
		orderIds: {
			type: 'integerArray',
			required: true,
			minItems: 1,
			maxItems: MARK_PACKED_MAX_BATCH,
		},
	});
	if (errors.length) throw invalidAll(errors);
	const now = state.clock.iso();
	const results = (body.orderIds as number[]).map((orderId) => {
		const order: Order | undefined = state.store.order(orderId);
		if (!order || !inScope(user, order.brandId)) {
			return {
				orderId,
				success: false,
				error: itemError('not-found', `order ${orderId} not found`, state.errorsUrl),
			};
		}
		if (order.status !== 'Created') {
			return {
				orderId,
				success: false,
				error: itemError(
					'conflict',
					`order ${orderId} is ${order.status}, only Created orders can be packed`,
					state.errorsUrl,
				),
			};
		}
		order.status = 'Packed';
		order.updatedAt = now;
		return { orderId, success: true, status: order.status };
	});
	return ok({ results });
}

export function listReturns({ state, user, query }: ApiContext) {
	const route = ROUTES.listReturns;
	query.allowOnly(['brandIds', 'statuses', 'page', 'limit']);
	const brands = brandFilter(user, query.intList('brandIds', route.listEncoding));
	const statuses = query.enumList('statuses', route.listEncoding, RETURN_STATUSES);
	const { page, limit } = query.page(route.pagination);
	const matching = state.store.returns.filter(
		(r) => brands.has(r.brandId) && (!statuses || statuses.includes(r.status)),
	);
	const result = paginate(matching, page, limit as number);
	return ok({ returns: result.items, pagination: result.pagination });
}

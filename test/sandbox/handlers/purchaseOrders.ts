import { PURCHASE_ORDER_STATUSES, ROUTES, type ListEncoding } from '../../../nodes/shared/routes';
import type { Query } from '../query';
import { paginate } from '../query';
import type { Store } from '../store';
import type { User } from '../model';
import { type ApiContext, brandFilter, ok } from './context';

/** The three filters both purchase-order reads take, each read in the operation's own encoding. */
function filtered(store: Store, user: User, query: Query, encoding: ListEncoding) {
	const brands = brandFilter(user, query.intList('brandIds', encoding));
	const channels = query.intList('saleChannelIds', encoding);
	const statuses = query.enumList('statuses', encoding, PURCHASE_ORDER_STATUSES);
	return store.purchaseOrders.filter(
		(po) =>
			brands.has(po.brandId) &&
			(!channels || channels.includes(po.saleChannelId)) &&
			(!statuses || statuses.includes(po.status)),
	);
}

export function listPurchaseOrders({ state, user, query }: ApiContext) {
	const route = ROUTES.listPurchaseOrders;
	query.allowOnly(['brandIds', 'saleChannelIds', 'statuses', 'page', 'limit']);
	const matching = filtered(state.store, user, query, route.listEncoding);
	const { page, limit } = query.page(route.pagination);
	const result = paginate(matching, page, limit as number);
	return ok({ purchaseOrders: result.items, pagination: result.pagination });
}

export function exportPurchaseOrders({ state, user, query }: ApiContext) {
	query.allowOnly(['brandIds', 'saleChannelIds', 'statuses']);
	return ok({
		purchaseOrders: filtered(state.store, user, query, ROUTES.exportPurchaseOrders.listEncoding),
	});
}

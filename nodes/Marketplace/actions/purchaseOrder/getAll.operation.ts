import { listOperation } from '../listOperation';
import { readFilters } from '../readers';
import { purchaseOrderFilters, purchaseOrderQuery } from './filters';

/** GET /v1/vendor/purchase-orders: brandIds, saleChannelIds and statuses as repeated keys. */
export const getAll = listOperation({
	resource: 'purchaseOrder',
	operation: 'getAll',
	route: 'listPurchaseOrders',
	properties: [purchaseOrderFilters],
	parse(ctx, itemIndex) {
		return { query: purchaseOrderQuery(readFilters(ctx, itemIndex)) };
	},
});

import { listOperation } from '../listOperation';
import { readFilters } from '../readers';
import { purchaseOrderFilters, purchaseOrderQuery } from './filters';

/** GET /v1/vendor/purchase-orders/export: the same filters, comma-separated; the whole set at once. */
export const exportOperation = listOperation({
	resource: 'purchaseOrder',
	operation: 'export',
	route: 'exportPurchaseOrders',
	properties: [purchaseOrderFilters],
	parse(ctx, itemIndex) {
		return { query: purchaseOrderQuery(readFilters(ctx, itemIndex)) };
	},
});

import { toId } from '../../../shared/validation';
import { listOperation } from '../listOperation';
import { param } from '../readers';

/** GET /v1/orders/{id}: the order as the service holds it now. */
export const get = listOperation({
	resource: 'order',
	operation: 'get',
	route: 'getOrder',
	properties: [
		{
			displayName: 'Order ID',
			name: 'orderId',
			type: 'string',
			required: true,
			default: '',
			placeholder: 'e.g. 1042',
			description: 'ID of the order, e.g. the data.orderId field of a Marketplace Trigger event',
		},
	],
	parse(ctx, itemIndex) {
		return { query: {}, pathParams: { id: toId(param(ctx, 'orderId', itemIndex), 'Order ID') } };
	},
});

import { listOperation } from '../listOperation';
import { endpointIdOf, endpointProperty } from './fields';

/** GET /v1/webhook-endpoints/{id}/deliveries: newest first, pages of up to 100. */
export const getDeliveries = listOperation({
	resource: 'webhookEndpoint',
	operation: 'getDeliveries',
	route: 'listWebhookDeliveries',
	properties: [endpointProperty],
	parse(ctx, itemIndex) {
		return { query: {}, pathParams: endpointIdOf(ctx, itemIndex) };
	},
});

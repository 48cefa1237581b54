import { listOperation } from '../common';
import { endpointIdOf, endpointIdProperty } from './fields';

/** GET /v1/webhook-endpoints/{id}/deliveries: newest first, pages of up to 100. */
export const getDeliveries = listOperation({
	resource: 'webhookEndpoint',
	operation: 'getDeliveries',
	route: 'listWebhookDeliveries',
	properties: [endpointIdProperty],
	parse(ctx, itemIndex) {
		return { query: {}, pathParams: endpointIdOf(ctx, itemIndex) };
	},
});

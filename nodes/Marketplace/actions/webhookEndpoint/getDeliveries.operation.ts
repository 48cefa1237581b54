import { listOperation } from '../listOperation';
import { endpointIdOf, endpointProperties } from './fields';

/** GET /v1/webhook-endpoints/{id}/deliveries: newest first, pages of up to 100. */
export const getDeliveries = listOperation({
	resource: 'webhookEndpoint',
	operation: 'getDeliveries',
	route: 'listWebhookDeliveries',
	properties: [...endpointProperties],
	parse(ctx, itemIndex) {
		return { query: {}, pathParams: endpointIdOf(ctx, itemIndex) };
	},
});

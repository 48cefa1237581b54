import { listOperation } from '../listOperation';
import { endpointIdOf, endpointProperty } from './fields';

/** GET /v1/webhook-endpoints/{id}: one of your endpoints (never its secret). */
export const get = listOperation({
	resource: 'webhookEndpoint',
	operation: 'get',
	route: 'getWebhookEndpoint',
	properties: [endpointProperty],
	parse(ctx, itemIndex) {
		return { query: {}, pathParams: endpointIdOf(ctx, itemIndex) };
	},
});

import { listOperation } from '../listOperation';

/** GET /v1/webhook-endpoints: all of your endpoints (at most 10), one item each. */
export const getAll = listOperation({
	resource: 'webhookEndpoint',
	operation: 'getAll',
	route: 'listWebhookEndpoints',
	properties: [],
	parse() {
		return { query: {} };
	},
});

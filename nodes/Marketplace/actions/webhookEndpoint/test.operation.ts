import { writeOperation } from '../writeOperation';
import { endpointIdOf, endpointProperty } from './fields';

/** POST /v1/webhook-endpoints/{id}/test: one webhook.test delivery, attempted once; answers its record. */
export const test = writeOperation({
	resource: 'webhookEndpoint',
	operation: 'test',
	route: 'testWebhookEndpoint',
	properties: [endpointProperty],
	parse(ctx, itemIndex) {
		return { pathParams: endpointIdOf(ctx, itemIndex) };
	},
});

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
	ifUncertain: {
		effect: 'a test delivery may have been sent',
		advice:
			'Use Webhook Endpoint > Get Deliveries to see whether it was, and test again only if needed.',
	},
});

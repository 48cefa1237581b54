import { writeOperation } from '../writeOperation';
import { endpointIdOf, endpointProperty, withSecretNotice } from './fields';

/** POST /v1/webhook-endpoints/{id}/rotate-secret: a new secret, shown once; the old one signs for 24 h more. */
export const rotateSecret = writeOperation({
	resource: 'webhookEndpoint',
	operation: 'rotateSecret',
	route: 'rotateWebhookEndpointSecret',
	properties: [endpointProperty],
	parse(ctx, itemIndex) {
		return { pathParams: endpointIdOf(ctx, itemIndex) };
	},
	present: withSecretNotice,
});

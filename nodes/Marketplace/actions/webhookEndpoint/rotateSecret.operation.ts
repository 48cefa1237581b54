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
	ifUncertain: {
		effect: 'the secret may have been rotated',
		advice:
			'The previous secret still works for 24 hours: use Webhook Endpoint > Get to check the endpoint, and rotate again only if needed.',
	},
});

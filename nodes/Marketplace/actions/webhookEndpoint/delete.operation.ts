import { writeOperation } from '../common';
import { endpointIdOf, endpointIdProperty } from './fields';

/** DELETE /v1/webhook-endpoints/{id}: answers 204; the node outputs `{ id, deleted: true }`. */
export const deleteOperation = writeOperation({
	resource: 'webhookEndpoint',
	operation: 'delete',
	route: 'deleteWebhookEndpoint',
	properties: [endpointIdProperty],
	parse(ctx, itemIndex) {
		return { pathParams: endpointIdOf(ctx, itemIndex) };
	},
	present: (_body, input) => [{ id: input.pathParams?.id, deleted: true }],
});

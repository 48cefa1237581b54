import { readAll } from '../../../shared/transport/pagination';
import { writeOperation } from '../writeOperation';
import { endpointIdOf, endpointProperty } from './fields';

/** DELETE /v1/webhook-endpoints/{id}: answers 204; the node outputs `{ id, deleted: true }`. */
export const deleteOperation = writeOperation({
	resource: 'webhookEndpoint',
	operation: 'delete',
	route: 'deleteWebhookEndpoint',
	properties: [endpointProperty],
	parse(ctx, itemIndex) {
		return { pathParams: endpointIdOf(ctx, itemIndex) };
	},
	present: (_body, input) => [{ id: input.pathParams?.id, deleted: true }],
	// After a 5xx the delete may have happened: if the endpoint is gone from the list, it did.
	async reconcile(ctx, input, itemIndex) {
		return async () => {
			const endpoints = await readAll.call(ctx, {
				route: 'listWebhookEndpoints',
				returnAll: true,
				itemIndex,
				settings: input.settings,
			});
			return endpoints.some((e) => e.id === input.pathParams?.id) ? undefined : {};
		};
	},
});

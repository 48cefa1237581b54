import type { IDataObject } from 'n8n-workflow';

import { EVENT_TYPE_OPTIONS, SUBSCRIBABLE_EVENT_TYPES } from '../../../shared/routes';
import { InputError, toEnumList, toText, toWebhookUrl } from '../../../shared/validation';
import { apiRequest, newIdempotencyKey } from '../../../shared/transport/request';
import { readAll } from '../../../shared/transport/pagination';
import { param } from '../readers';
import { writeOperation } from '../writeOperation';
import { withSecretNotice } from './fields';

/** POST /v1/webhook-endpoints: answers with the endpoint and its signing secret, shown once. */
export const create = writeOperation({
	resource: 'webhookEndpoint',
	operation: 'create',
	route: 'createWebhookEndpoint',
	properties: [
		{
			displayName: 'URL',
			name: 'url',
			type: 'string',
			required: true,
			default: '',
			placeholder: 'e.g. https://example.com/webhooks/marketplace',
			description: 'Public https address the service will POST events to',
		},
		{
			displayName: 'Event Types',
			name: 'eventTypes',
			type: 'multiOptions',
			required: true,
			options: EVENT_TYPE_OPTIONS,
			default: [],
			description: 'Events to deliver to this endpoint',
		},
		{
			displayName: 'Description',
			name: 'description',
			type: 'string',
			default: '',
			description: 'Free text to recognise the endpoint by',
		},
	],
	parse(ctx, itemIndex) {
		const eventTypes = toEnumList(
			param(ctx, 'eventTypes', itemIndex, []),
			'Event Types',
			SUBSCRIBABLE_EVENT_TYPES,
		);
		if (eventTypes.length === 0)
			throw new InputError('Event Types', 'choose at least one event type');
		const description = toText(param(ctx, 'description', itemIndex, ''), 'Description');
		return {
			body: {
				url: toWebhookUrl(param(ctx, 'url', itemIndex), 'URL'),
				...(description === undefined ? {} : { description }),
				eventTypes,
			},
		};
	},
	present: withSecretNotice,
	// A 5xx after the endpoint was created releases the key, so a plain retry would create a second
	// one. The endpoints that exist before the first attempt are noted; before a retry, a new one at
	// the same URL is taken as ours, and a rotation gives it the secret the lost answer held.
	async reconcile(ctx, input, itemIndex) {
		const list = async () =>
			await readAll.call(ctx, {
				route: 'listWebhookEndpoints',
				returnAll: true,
				itemIndex,
				settings: input.settings,
			});
		const before = new Set((await list()).map((e) => e.id));
		return async () => {
			const mine = (await list()).find((e) => e.url === input.body?.url && !before.has(e.id));
			if (!mine) return undefined;
			const rotated = await apiRequest.call(
				ctx,
				{
					route: 'rotateWebhookEndpointSecret',
					pathParams: { id: mine.id as number },
					idempotencyKey: newIdempotencyKey(),
					itemIndex,
				},
				input.settings,
			);
			return rotated.body as IDataObject;
		};
	},
});

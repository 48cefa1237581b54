import { SUBSCRIBABLE_EVENT_TYPES } from '../../../shared/routes';
import { toEnumList, toText, toWebhookUrl } from '../../../shared/validation';
import { InputError } from '../../../shared/validation';
import { param, writeOperation } from '../common';
import { eventTypeOptions, withSecretNotice } from './fields';

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
			placeholder: 'https://example.com/webhooks/marketplace',
			description: 'Public https address the service will POST events to',
		},
		{
			displayName: 'Event Types',
			name: 'eventTypes',
			type: 'multiOptions',
			required: true,
			options: eventTypeOptions,
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
		const eventTypes = toEnumList(param(ctx, 'eventTypes', itemIndex, []), 'Event Types', SUBSCRIBABLE_EVENT_TYPES);
		if (eventTypes.length === 0) throw new InputError('Event Types', 'choose at least one event type');
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
});

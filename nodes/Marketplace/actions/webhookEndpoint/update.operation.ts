import type { IDataObject } from 'n8n-workflow';

import { EVENT_TYPE_OPTIONS, SUBSCRIBABLE_EVENT_TYPES } from '../../../shared/routes';
import { InputError, toEnumList, toText, toWebhookUrl } from '../../../shared/validation';
import { param } from '../readers';
import { writeOperation } from '../writeOperation';
import { endpointIdOf, endpointProperty } from './fields';

/** PATCH /v1/webhook-endpoints/{id}: only the fields added under Update Fields are sent. */
export const update = writeOperation({
	resource: 'webhookEndpoint',
	operation: 'update',
	route: 'updateWebhookEndpoint',
	properties: [
		endpointProperty,
		{
			displayName: 'Update Fields',
			name: 'updateFields',
			type: 'collection',
			placeholder: 'Add Field',
			default: {},
			options: [
				{
					displayName: 'Description',
					name: 'description',
					type: 'string',
					default: '',
					description:
						'Free text to recognise the endpoint by. Empty keeps the current description (the service does not accept an empty one).',
				},
				{
					displayName: 'Event Types',
					name: 'eventTypes',
					type: 'multiOptions',
					options: EVENT_TYPE_OPTIONS,
					default: [],
					description: 'Events to deliver to this endpoint',
				},
				{
					displayName: 'Status',
					name: 'status',
					type: 'options',
					options: [
						{ name: 'Disabled', value: 'Disabled' },
						{ name: 'Enabled', value: 'Enabled' },
					],
					default: 'Enabled',
					description:
						'Enabled re-enables an endpoint the service disabled; events missed meanwhile are not resent',
				},
				{
					displayName: 'URL',
					name: 'url',
					type: 'string',
					default: '',
					placeholder: 'e.g. https://example.com/webhooks/marketplace',
					description: 'Public https address the service will POST events to',
				},
			],
		},
	],
	parse(ctx, itemIndex) {
		const fields = param<IDataObject>(ctx, 'updateFields', itemIndex, {});
		const body: IDataObject = {};
		if (fields.url !== undefined) body.url = toWebhookUrl(fields.url, 'Update Fields > URL');
		// The service refuses an empty description, so an empty field is not sent (it keeps the old one).
		const description = toText(fields.description, 'Update Fields > Description');
		if (description) body.description = description;
		if (fields.eventTypes !== undefined) {
			const eventTypes = toEnumList(
				fields.eventTypes,
				'Update Fields > Event Types',
				SUBSCRIBABLE_EVENT_TYPES,
			);
			if (eventTypes.length === 0)
				throw new InputError('Update Fields > Event Types', 'choose at least one event type');
			body.eventTypes = eventTypes;
		}
		if (fields.status !== undefined) {
			body.status = toEnumList(fields.status, 'Update Fields > Status', [
				'Enabled',
				'Disabled',
			] as const)[0];
		}
		if (Object.keys(body).length === 0)
			throw new InputError(
				'Update Fields',
				'add at least one field to change (an empty Description changes nothing)',
			);
		return { pathParams: endpointIdOf(ctx, itemIndex), body };
	},
	ifUncertain: {
		effect: 'the changes may have been applied',
		advice:
			'Use Webhook Endpoint > Get to see the endpoint as it is now, and update again only if needed.',
	},
});

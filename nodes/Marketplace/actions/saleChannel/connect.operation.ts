import type { IDataObject } from 'n8n-workflow';

import { toBoolean, toText } from '../../../shared/validation';
import { param } from '../readers';
import { writeOperation } from '../writeOperation';
import { brandProperty, pickedId } from '../pickers';
import { channelSecrets } from './channelAccount';

/**
 * Body fields the connect operation takes from Additional Fields, with their labels; only those set
 * are sent. The channel secrets (apiKey, apiSecret, logInPassword) come from the Marketplace Sale
 * Channel Account credential instead (channelAccount.ts), so that no secret is a node parameter.
 */
const OPTIONAL_FIELDS: Record<string, string> = {
	region: 'Region',
	brandIdInSaleChannel: 'Brand ID in Sale Channel',
	fulfillmentModel: 'Fulfillment Model',
	isShared: 'Is Shared',
	logInEmail: 'Log In Email',
	inventoryScope: 'Inventory Scope',
};

/** POST /v1/brands/{brandId}/sale-channels/connect (permission saleChannelAuth.write). */
export const connect = writeOperation({
	resource: 'saleChannel',
	operation: 'connect',
	route: 'connectSaleChannel',
	properties: [
		brandProperty('The brand to connect'),
		{
			displayName: 'Sale Channel Name',
			name: 'saleChannelName',
			type: 'string',
			required: true,
			default: '',
			placeholder: 'e.g. Amazon',
			description: 'Marketplace to connect, exactly as the service names it',
		},
		{
			displayName: 'Additional Fields',
			name: 'additionalFields',
			type: 'collection',
			placeholder: 'Add Field',
			default: {},
			description:
				"Channel-specific inputs; only the ones you add are sent. The channel account's secrets are in the Marketplace Sale Channel Account credential.",
			options: [
				{
					displayName: 'Brand ID in Sale Channel',
					name: 'brandIdInSaleChannel',
					type: 'string',
					default: '',
					description: "The brand's own ID on the marketplace",
				},
				{
					displayName: 'Fulfillment Model',
					name: 'fulfillmentModel',
					type: 'string',
					default: '',
					description: 'Fulfillment model, exactly as the service names it',
				},
				{
					displayName: 'Inventory Scope',
					name: 'inventoryScope',
					type: 'string',
					default: '',
					description: 'Inventory scope, exactly as the service names it',
				},
				{
					displayName: 'Is Shared',
					name: 'isShared',
					type: 'boolean',
					default: false,
					description: 'Whether the connection is shared',
				},
				{
					displayName: 'Log In Email',
					name: 'logInEmail',
					type: 'string',
					placeholder: 'e.g. nathan@example.com',
					default: '',
					description:
						'Email of the channel account login; its password is in the Marketplace Sale Channel Account credential',
				},
				{
					displayName: 'Region',
					name: 'region',
					type: 'string',
					default: '',
					description: 'Marketplace region, exactly as the service names it',
				},
			],
		},
	],
	async parse(ctx, itemIndex) {
		const brandId = pickedId(ctx, 'brandId', itemIndex);
		const saleChannelName = toText(
			param(ctx, 'saleChannelName', itemIndex),
			'Sale Channel Name',
			true,
		);
		const additional = param<Record<string, unknown>>(ctx, 'additionalFields', itemIndex, {});
		const body: IDataObject = { saleChannelName };
		for (const [name, label] of Object.entries(OPTIONAL_FIELDS)) {
			const field = `Additional Fields > ${label}`;
			if (name === 'isShared') {
				if (additional.isShared !== undefined)
					body.isShared = toBoolean(additional.isShared, field);
				continue;
			}
			const value = toText(additional[name], field);
			if (value !== undefined) body[name] = value;
		}
		Object.assign(body, await channelSecrets(ctx, itemIndex));
		return { pathParams: { brandId }, body };
	},
});

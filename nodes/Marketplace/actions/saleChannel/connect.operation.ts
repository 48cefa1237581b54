import type { IDataObject, INodeProperties } from 'n8n-workflow';

import { toBoolean, toSecret, toText } from '../../../shared/validation';
import { param } from '../readers';
import { writeOperation } from '../writeOperation';
import { brandProperty, pickedId } from '../pickers';

/** Body fields the connect operation accepts besides saleChannelName, with their labels; only those set are sent. */
const OPTIONAL_FIELDS: Record<string, string> = {
	region: 'Region',
	brandIdInSaleChannel: 'Brand ID in Sale Channel',
	fulfillmentModel: 'Fulfillment Model',
	isShared: 'Is Shared',
	logInEmail: 'Log In Email',
	inventoryScope: 'Inventory Scope',
};

/**
 * The channel account's secrets among those fields: masked in the editor, never shown in an error,
 * the password sent as typed (see toSecret).
 */
const SECRET_FIELDS: Record<string, string> = {
	apiKey: 'API Key',
	apiSecret: 'API Secret',
	logInPassword: 'Log In Password',
};

/** A masked field of the channel account; `what` completes "The channel account's …". */
function secretField(name: string, what: string): INodeProperties {
	return {
		displayName: SECRET_FIELDS[name],
		name,
		type: 'string',
		typeOptions: { password: true },
		default: '',
		description: `The channel account's ${what}. Saved in the workflow like any field; an expression that reads it from elsewhere (e.g. $env) keeps it out.`,
	};
}

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
			description: 'Channel-specific inputs; only the ones you add are sent',
			options: [
				secretField('apiKey', 'API key'),
				secretField('apiSecret', 'API secret'),
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
					description: 'Email of the channel account login',
				},
				secretField('logInPassword', 'login password'),
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
	parse(ctx, itemIndex) {
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
		for (const [name, label] of Object.entries(SECRET_FIELDS)) {
			const secret = toSecret(
				additional[name],
				`Additional Fields > ${label}`,
				name === 'logInPassword',
			);
			if (secret !== undefined) body[name] = secret;
		}
		return { pathParams: { brandId }, body };
	},
	ifUncertain: {
		effect: 'the connection may have been started',
		advice:
			"Check the brand's connection to this sale channel in the Marketplace Management Service before connecting again.",
	},
});

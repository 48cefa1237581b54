/**
 * Parameters that name something the service can list (a brand, a webhook endpoint), and the
 * reader for them: n8n resource locators (pick from a list, or give the ID).
 */
import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { toId } from '../../shared/validation';

const idMode = (placeholder: string, what: string) => ({
	displayName: 'By ID',
	name: 'id',
	type: 'string' as const,
	placeholder,
	validation: [
		{
			type: 'regex' as const,
			properties: {
				regex: '^\\s*[1-9][0-9]*\\s*$',
				errorMessage: `Not a valid ${what} ID: a whole number of 1 or more`,
			},
		},
	],
});

/** The pickers' labels; errors name the field as the panel shows it. */
const LABELS = { brandId: 'Brand', endpointId: 'Webhook Endpoint' } as const;

/** `brandId`: a brand from the brand discovery list, or its ID. */
export function brandProperty(description: string): INodeProperties {
	return {
		displayName: LABELS.brandId,
		name: 'brandId',
		type: 'resourceLocator',
		required: true,
		default: { mode: 'list', value: '' },
		description,
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				placeholder: 'Select a brand...',
				typeOptions: { searchListMethod: 'searchBrands', searchable: true },
			},
			idMode('1', 'brand'),
		],
	};
}

/** `endpointId`: one of the user's webhook endpoints (shown with URL and status), or its ID. */
export const endpointProperty: INodeProperties = {
	displayName: LABELS.endpointId,
	name: 'endpointId',
	type: 'resourceLocator',
	required: true,
	default: { mode: 'list', value: '' },
	description: 'One of your webhook endpoints',
	modes: [
		{
			displayName: 'From List',
			name: 'list',
			type: 'list',
			placeholder: 'Select an endpoint...',
			typeOptions: { searchListMethod: 'searchWebhookEndpoints', searchable: true },
		},
		idMode('12', 'webhook endpoint'),
	],
};

/** The ID a picker (or an expression) holds, checked. */
export function pickedId(
	ctx: IExecuteFunctions,
	name: keyof typeof LABELS,
	itemIndex: number,
): number {
	const value = ctx.getNodeParameter(name, itemIndex, undefined, { extractValue: true });
	return toId(value, LABELS[name]);
}

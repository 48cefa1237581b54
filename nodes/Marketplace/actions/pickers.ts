/**
 * Parameters that name something the service can list (a brand, a webhook endpoint), and the
 * reader for them. From typeVersion 2 they are n8n resource locators (pick from a list, or give
 * the ID); typeVersion 1 keeps the plain ID fields its saved workflows hold.
 */
import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { toId } from '../../shared/validation';

const V1 = { show: { '@version': [1] } };
const V2_ON = { show: { '@version': [{ _cnd: { gte: 2 } }] } };

/** The picker's label in each version; errors name the field as the panel shows it. */
function labelFor(ctx: IExecuteFunctions, labels: { v1: string; v2: string }): string {
	return ctx.getNode().typeVersion >= 2 ? labels.v2 : labels.v1;
}

const idMode = (placeholder: string, what: string) => ({
	displayName: 'By ID',
	name: 'id',
	type: 'string' as const,
	placeholder,
	validation: [
		{
			type: 'regex' as const,
			properties: { regex: '^\\s*[1-9][0-9]*\\s*$', errorMessage: `Not a valid ${what} ID: a whole number of 1 or more` },
		},
	],
});

export const BRAND_LABELS = { v1: 'Brand ID', v2: 'Brand' };
export const ENDPOINT_LABELS = { v1: 'Webhook Endpoint ID', v2: 'Webhook Endpoint' };

/** `brandId`: a brand from the brand discovery list, or its ID. */
export function brandProperties(description: string): INodeProperties[] {
	return [
		{
			displayName: BRAND_LABELS.v1,
			name: 'brandId',
			type: 'string',
			required: true,
			default: '',
			placeholder: '1',
			description,
			displayOptions: V1,
		},
		{
			displayName: BRAND_LABELS.v2,
			name: 'brandId',
			type: 'resourceLocator',
			required: true,
			default: { mode: 'list', value: '' },
			description,
			displayOptions: V2_ON,
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
		},
	];
}

/** `endpointId`: one of the user's webhook endpoints (shown with URL and status), or its ID. */
export const endpointProperties: INodeProperties[] = [
	{
		displayName: ENDPOINT_LABELS.v1,
		name: 'endpointId',
		type: 'string',
		required: true,
		default: '',
		placeholder: '12',
		description: 'ID of one of your webhook endpoints',
		displayOptions: V1,
	},
	{
		displayName: ENDPOINT_LABELS.v2,
		name: 'endpointId',
		type: 'resourceLocator',
		required: true,
		default: { mode: 'list', value: '' },
		description: 'One of your webhook endpoints',
		displayOptions: V2_ON,
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
	},
];

/** Only in typeVersion 1, or only from 2 on: for fields whose type changed with the pickers. */
export const onlyVersion1 = (properties: INodeProperties[]): INodeProperties[] =>
	properties.map((p) => ({ ...p, displayOptions: { ...p.displayOptions, show: { ...p.displayOptions?.show, ...V1.show } } }));
export const fromVersion2 = (properties: INodeProperties[]): INodeProperties[] =>
	properties.map((p) => ({ ...p, displayOptions: { ...p.displayOptions, show: { ...p.displayOptions?.show, ...V2_ON.show } } }));

/** The ID a picker (or a version 1 ID field, or an expression) holds, checked. */
export function pickedId(
	ctx: IExecuteFunctions,
	name: 'brandId' | 'endpointId',
	itemIndex: number,
): number {
	const value = ctx.getNodeParameter(name, itemIndex, undefined, { extractValue: true });
	return toId(value, labelFor(ctx, name === 'brandId' ? BRAND_LABELS : ENDPOINT_LABELS));
}

/**
 * Parameter descriptions that several operations show: Return All / Limit, the Filters collection,
 * the brand filter, the Idempotency Key option and the Options collection of a write.
 */
import type { INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { writeSampleItemsOption } from './sampleGuard';

/** Shows `properties` only for one resource and operation. */
export function forOperation(
	resource: string,
	operation: string,
	properties: INodeProperties[],
): INodeProperties[] {
	return updateDisplayOptions(
		{ show: { resource: [resource], operation: [operation] } },
		properties,
	);
}

export function paginationProperties(maxLimit: number): INodeProperties[] {
	return [
		{
			displayName: 'Return All',
			name: 'returnAll',
			type: 'boolean',
			default: false,
			description: 'Whether to return all results or only up to a given limit',
		},
		{
			displayName: 'Limit',
			name: 'limit',
			type: 'number',
			typeOptions: { minValue: 1, maxValue: maxLimit },
			default: 50,
			description: 'Max number of results to return',
			displayOptions: { show: { returnAll: [false] } },
		},
	];
}

/** The Filters collection of a read. */
export function filtersCollection(options: INodeProperties[]): INodeProperties {
	return {
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		options,
	};
}

export const brandIdsFilter: INodeProperties = {
	displayName: 'Brand IDs',
	name: 'brandIds',
	type: 'string',
	default: '',
	placeholder: 'e.g. 1,2,3',
	description:
		'Only records of these brands (comma-separated IDs). Empty: every brand in your scope.',
};

export const idempotencyKeyOption: INodeProperties = {
	displayName: 'Idempotency Key',
	name: 'idempotencyKey',
	type: 'string',
	default: '',
	description:
		"Key that makes the write happen at most once, even across re-runs of the workflow (e.g. an expression on the input item's ID). Empty: the node generates a new key per item and keeps it across retries.",
};

/** The Options collection of a write: its idempotency key, and whether sample items are written. */
export const writeOptions: INodeProperties = {
	displayName: 'Options',
	name: 'options',
	type: 'collection',
	placeholder: 'Add Option',
	default: {},
	options: [idempotencyKeyOption, writeSampleItemsOption],
};

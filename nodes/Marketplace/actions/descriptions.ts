/**
 * Parameter descriptions that several operations show: Return All / Limit, the Filters collection,
 * the brand filter, the Idempotency Key option and the Options collection of a write.
 */
import type { IDataObject, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { toIdList } from '../../shared/validation';
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

/**
 * Return All / Limit, as n8n's own Get Many operations name them. `maxLimit` is the route's largest
 * page; a route without pages (the service answers with the whole list) gives `wholeList` instead:
 * Limit then keeps the first N records of that one answer, its hint says so, and `returnAll` may
 * default to true where saved workflows had no Limit to begin with.
 */
export function paginationProperties(
	maxLimit: number | undefined,
	wholeList?: { returnAllByDefault: boolean; hint: string },
): INodeProperties[] {
	const returnAll: INodeProperties = {
		displayName: 'Return All',
		name: 'returnAll',
		type: 'boolean',
		default: false,
		description: 'Whether to return all results or only up to a given limit',
	};
	const limit: INodeProperties = {
		displayName: 'Limit',
		name: 'limit',
		type: 'number',
		typeOptions: { minValue: 1, ...(maxLimit === undefined ? {} : { maxValue: maxLimit }) },
		default: 50,
		description: 'Max number of results to return',
		displayOptions: { show: { returnAll: [false] } },
	};
	if (!wholeList) return [returnAll, limit];
	return [
		{ ...returnAll, default: wholeList.returnAllByDefault, hint: wholeList.hint },
		{ ...limit, hint: wholeList.hint },
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

/**
 * The brand filter of a read: brands picked from the service's brand list (`getBrands`), or IDs
 * from an expression. A saved workflow from when this was a text field keeps its comma-separated
 * text; `brandIdsOf` reads all of these forms.
 */
export const brandIdsFilter: INodeProperties = {
	displayName: 'Brand Names or IDs',
	name: 'brandIds',
	type: 'multiOptions',
	typeOptions: { loadOptionsMethod: 'getBrands' },
	default: [],
	description:
		'Only records of these brands. Empty: every brand in your scope. Choose from the list, or specify IDs using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
};

/**
 * `filters.brandIds` as a list of IDs (empty when not set), from the picked brands, a list an
 * expression gives, or comma-separated text; a bad entry is an error naming the field.
 */
export function brandIdsOf(filters: IDataObject): number[] {
	return toIdList(filters.brandIds, `Filters > ${brandIdsFilter.displayName}`);
}

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

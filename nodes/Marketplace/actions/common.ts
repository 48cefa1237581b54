/**
 * Building blocks the operation files share: parameter descriptions that recur (Return All / Limit,
 * brand filter, Idempotency Key, Request Options) and the code that reads them.
 */
import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { readRequestOptions } from '../../shared/requestOptions';
import { ROUTES, type RouteName } from '../../shared/routes';
import { readAll } from '../../shared/transport/pagination';
import type { QueryValues } from '../../shared/transport/queryEncoding';
import { apiRequest, newIdempotencyKey, type TransportSettings } from '../../shared/transport/request';
import { toIdempotencyKey, toIdList, toLimit } from '../../shared/validation';
import type { ItemOperation } from './operation';

/** Shows `properties` only for one resource and operation. */
export function forOperation(
	resource: string,
	operation: string,
	properties: INodeProperties[],
): INodeProperties[] {
	return updateDisplayOptions({ show: { resource: [resource], operation: [operation] } }, properties);
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

export const brandIdsFilter: INodeProperties = {
	displayName: 'Brand IDs',
	name: 'brandIds',
	type: 'string',
	default: '',
	placeholder: '1,2,3',
	description: 'Only records of these brands (comma-separated IDs). Empty: every brand in your scope.',
};

export const idempotencyKeyOption: INodeProperties = {
	displayName: 'Idempotency Key',
	name: 'idempotencyKey',
	type: 'string',
	default: '',
	description:
		'Key that makes the write happen at most once, even across re-runs of the workflow (e.g. an expression on the input item\'s ID). Empty: the node generates a new key per item and keeps it across retries.',
};

/** The Options collection of a write: the idempotency key first, then the operation's own. */
export function writeOptions(extra: INodeProperties[] = []): INodeProperties {
	return {
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [idempotencyKeyOption, ...extra],
	};
}

/** Reads an item's parameter; n8n's own errors for missing parameters are rare, so keep it plain. */
export function param<T>(ctx: IExecuteFunctions, name: string, itemIndex: number, fallback?: T): T {
	return ctx.getNodeParameter(name, itemIndex, fallback as never) as T;
}

export function requestSettings(ctx: IExecuteFunctions, itemIndex: number): TransportSettings {
	return readRequestOptions(param<IDataObject>(ctx, 'requestOptions', itemIndex, {}));
}

/** The user's idempotency key for this item (Options > Idempotency Key), else a new one. */
export function idempotencyKeyFor(ctx: IExecuteFunctions, itemIndex: number): string {
	const options = param<IDataObject>(ctx, 'options', itemIndex, {});
	return toIdempotencyKey(options.idempotencyKey, 'Options > Idempotency Key') ?? newIdempotencyKey();
}

export interface PageInput {
	returnAll: boolean;
	limit?: number;
}

export function readPageParams(ctx: IExecuteFunctions, itemIndex: number, maxLimit: number): PageInput {
	const returnAll = param<boolean>(ctx, 'returnAll', itemIndex, false);
	if (returnAll) return { returnAll };
	return { returnAll, limit: toLimit(param(ctx, 'limit', itemIndex, 50), 'Limit', maxLimit) };
}

export interface ListInput {
	page: PageInput;
	query: QueryValues;
	pathParams?: Record<string, string | number>;
	settings: TransportSettings;
}

/**
 * A paginated or whole-collection read: one item per record. The operation file gives its route,
 * its parameters and how to read them into query values (and path parameters).
 */
export function listOperation(spec: {
	resource: string;
	operation: string;
	route: RouteName;
	properties: INodeProperties[];
	paginated?: boolean;
	parse: (
		ctx: IExecuteFunctions,
		itemIndex: number,
	) => { query: QueryValues; pathParams?: Record<string, string | number> };
}): ItemOperation<ListInput> {
	const route = ROUTES[spec.route];
	const maxLimit = 'pagination' in route ? route.pagination.maxLimit : 0;
	const paginated = spec.paginated ?? maxLimit > 0;
	return {
		kind: 'item',
		description: forOperation(spec.resource, spec.operation, [
			...spec.properties.filter((p) => p.type !== 'collection'),
			...(paginated ? paginationProperties(maxLimit) : []),
			...spec.properties.filter((p) => p.type === 'collection'),
		]),
		parse(itemIndex) {
			const { query, pathParams } = spec.parse(this, itemIndex);
			return {
				page: paginated ? readPageParams(this, itemIndex, maxLimit) : { returnAll: true },
				query,
				pathParams,
				settings: requestSettings(this, itemIndex),
			};
		},
		async run(input, itemIndex) {
			return await readAll.call(this, {
				route: spec.route,
				pathParams: input.pathParams,
				query: input.query,
				returnAll: input.page.returnAll,
				limit: input.page.limit,
				itemIndex,
				settings: input.settings,
			});
		},
	};
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

export function readFilters(ctx: IExecuteFunctions, itemIndex: number): IDataObject {
	return param<IDataObject>(ctx, 'filters', itemIndex, {});
}

/** `filters.brandIds` as a list of ids (empty when not set). */
export function brandIdsOf(filters: IDataObject): number[] {
	return toIdList(filters.brandIds, 'Filters > Brand IDs');
}

export interface WriteInput {
	pathParams?: Record<string, string | number>;
	body?: IDataObject;
	idempotencyKey: string;
	settings: TransportSettings;
}

/**
 * A single write (POST/PATCH/DELETE) per item, carrying an Idempotency-Key: the user's (Options >
 * Idempotency Key) or one generated per item and kept across retries.
 */
export function writeOperation(spec: {
	resource: string;
	operation: string;
	route: RouteName;
	properties: INodeProperties[];
	/** extra entries of the Options collection */
	options?: INodeProperties[];
	parse: (
		ctx: IExecuteFunctions,
		itemIndex: number,
	) => { pathParams?: Record<string, string | number>; body?: IDataObject };
	/** turns the response body into output records (default: the body itself) */
	present?: (body: IDataObject, input: WriteInput) => IDataObject[];
	/**
	 * For writes the Idempotency-Key cannot protect after a 5xx (the service releases the key):
	 * called before the first attempt, it returns the check the transport runs before any retry,
	 * which finds the effect of an earlier attempt and answers with it instead (spec 7.4.4).
	 */
	reconcile?: (
		ctx: IExecuteFunctions,
		input: WriteInput,
		itemIndex: number,
	) => Promise<() => Promise<IDataObject | undefined>>;
}): ItemOperation<WriteInput> {
	return {
		kind: 'item',
		description: forOperation(spec.resource, spec.operation, [
			...spec.properties,
			writeOptions(spec.options),
		]),
		parse(itemIndex) {
			return {
				...spec.parse(this, itemIndex),
				idempotencyKey: idempotencyKeyFor(this, itemIndex),
				settings: requestSettings(this, itemIndex),
			};
		},
		async run(input, itemIndex) {
			const reconcile = spec.reconcile ? await spec.reconcile(this, input, itemIndex) : undefined;
			const response = await apiRequest.call(
				this,
				{
					route: spec.route,
					pathParams: input.pathParams,
					body: input.body,
					idempotencyKey: input.idempotencyKey,
					itemIndex,
					reconcile,
				},
				input.settings,
			);
			const body = (response.body ?? {}) as IDataObject;
			return spec.present ? spec.present(body, input) : [body];
		},
	};
}

/**
 * Reads of whole collections: Return All walks page=1..totalPages with the largest page
 * size the route allows and the same filters; Limit reads one page of that size. Reads without a
 * `pagination` object are returned whole. An empty page is not an error.
 */
import type { IDataObject } from 'n8n-workflow';

import { ROUTES, type Pagination, type RouteName } from '../routes';
import type { QueryValues } from './queryEncoding';
import {
	apiRequest,
	DEFAULT_TRANSPORT,
	type TransportContext,
	type TransportSettings,
} from './request';
import { isRecord } from '../isRecord';

export interface ReadAllOptions {
	route: RouteName;
	pathParams?: Record<string, string | number>;
	query?: QueryValues;
	/** true: every page; false: the first `limit` records */
	returnAll: boolean;
	limit?: number;
	itemIndex?: number;
	settings?: TransportSettings;
}

/** The records of a response: its collection member, or the body when it is an array. */
export function recordsOf(body: unknown, collection: string | undefined): IDataObject[] {
	if (Array.isArray(body)) return body as IDataObject[];
	if (isRecord(body) && collection && Array.isArray(body[collection])) {
		return body[collection] as IDataObject[];
	}
	return isRecord(body) && !collection ? [body] : [];
}

export async function readAll(
	this: TransportContext,
	options: ReadAllOptions,
): Promise<IDataObject[]> {
	const route = ROUTES[options.route];
	const settings = options.settings ?? DEFAULT_TRANSPORT;
	const request = (query: QueryValues) =>
		apiRequest.call(
			this,
			{ route: options.route, pathParams: options.pathParams, query, itemIndex: options.itemIndex },
			settings,
		);

	if (!('pagination' in route)) {
		const collection = 'collection' in route ? route.collection : undefined;
		const { body } = await request(options.query ?? {});
		const records = recordsOf(body, collection);
		return options.returnAll || options.limit === undefined
			? records
			: records.slice(0, options.limit);
	}

	const pagination: Pagination = route.pagination;
	if (!options.returnAll) {
		const { body } = await request({ ...options.query, page: 1, limit: options.limit });
		return recordsOf(body, pagination.collection);
	}
	if (pagination.defaultLimit === undefined) {
		// The route returns the whole accessible set when limit is omitted (brand discovery).
		const { body } = await request({ ...options.query });
		return recordsOf(body, pagination.collection);
	}
	const records: IDataObject[] = [];
	for (let page = 1; ; page++) {
		const { body } = await request({ ...options.query, page, limit: pagination.maxLimit });
		records.push(...recordsOf(body, pagination.collection));
		const totalPages =
			isRecord(body) && isRecord(body.pagination) ? Number(body.pagination.totalPages) : NaN;
		if (!Number.isFinite(totalPages) || page >= totalPages) break;
	}
	return records;
}

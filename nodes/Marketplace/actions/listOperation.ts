import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { ROUTES, type RouteName } from '../../shared/routes';
import { readAll } from '../../shared/transport/pagination';
import type { QueryValues } from '../../shared/transport/queryEncoding';
import type { TransportSettings } from '../../shared/transport/request';
import { forOperation, paginationProperties } from './descriptions';
import type { ItemOperation } from './operation';
import { readPageParams, requestSettings, type PageInput } from './readers';

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
	parse: (
		ctx: IExecuteFunctions,
		itemIndex: number,
	) => { query: QueryValues; pathParams?: Record<string, string | number> };
	/**
	 * A route without pages that still offers Return All / Limit: the service answers with the
	 * whole list in one request and Limit keeps its first N records.
	 */
	wholeList?: { returnAllByDefault: boolean; hint: string };
}): ItemOperation<ListInput> {
	const route = ROUTES[spec.route];
	const maxLimit = 'pagination' in route ? route.pagination.maxLimit : undefined;
	const paginated = maxLimit !== undefined;
	const limited = paginated || spec.wholeList !== undefined;
	return {
		kind: 'item',
		description: forOperation(spec.resource, spec.operation, [
			...spec.properties.filter((p) => p.type !== 'collection'),
			...(limited ? paginationProperties(maxLimit, spec.wholeList) : []),
			...spec.properties.filter((p) => p.type === 'collection'),
		]),
		parse(itemIndex) {
			const { query, pathParams } = spec.parse(this, itemIndex);
			return {
				page: limited
					? readPageParams(this, itemIndex, maxLimit ?? Number.POSITIVE_INFINITY)
					: { returnAll: true },
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

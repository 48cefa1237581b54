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
}): ItemOperation<ListInput> {
	const route = ROUTES[spec.route];
	const maxLimit = 'pagination' in route ? route.pagination.maxLimit : 0;
	const paginated = maxLimit > 0;
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

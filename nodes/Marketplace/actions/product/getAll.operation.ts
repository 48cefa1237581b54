import { brandIdsFilter, brandIdsOf, filtersCollection, listOperation, readFilters } from '../common';

/** GET /v1/products: comma-separated brandIds; pages of up to 100. */
export const getAll = listOperation({
	resource: 'product',
	operation: 'getAll',
	route: 'listProducts',
	properties: [filtersCollection([brandIdsFilter])],
	parse(ctx, itemIndex) {
		return { query: { brandIds: brandIdsOf(readFilters(ctx, itemIndex)) } };
	},
});

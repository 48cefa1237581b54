import { brandIdsFilter, brandIdsOf, filtersCollection } from '../descriptions';
import { listOperation } from '../listOperation';
import { readFilters } from '../readers';

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

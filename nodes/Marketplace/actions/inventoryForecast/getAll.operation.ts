import { brandIdsFilter, brandIdsOf, filtersCollection } from '../descriptions';
import { listOperation } from '../listOperation';
import { readFilters } from '../readers';

/** GET /v1/inventory-forecasts: comma-separated brandIds; pages of up to 100 (default 25). */
export const getAll = listOperation({
	resource: 'inventoryForecast',
	operation: 'getAll',
	route: 'listInventoryForecasts',
	properties: [filtersCollection([brandIdsFilter])],
	parse(ctx, itemIndex) {
		return { query: { brandIds: brandIdsOf(readFilters(ctx, itemIndex)) } };
	},
});

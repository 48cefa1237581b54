import { listOperation } from '../listOperation';

/** GET /v1/brands (brand discovery): Return All reads the whole accessible set in one request. */
export const getAll = listOperation({
	resource: 'brand',
	operation: 'getAll',
	route: 'listBrands',
	properties: [],
	parse() {
		return { query: {} };
	},
});

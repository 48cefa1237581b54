import { toStringList } from '../../../shared/validation';
import { filtersCollection } from '../descriptions';
import { listOperation } from '../listOperation';
import { readFilters } from '../readers';
import { brandProperty, pickedId } from '../pickers';

/** GET /v1/brand-health: brandId, and `categories` as repeated keys (names may contain commas). */
export const get = listOperation({
	resource: 'brandHealth',
	operation: 'get',
	route: 'getBrandHealth',
	properties: [
		brandProperty('The brand whose health to read'),
		filtersCollection([
			{
				displayName: 'Category Names or IDs',
				name: 'categories',
				type: 'multiOptions',
				typeOptions: {
					loadOptionsMethod: 'getBrandHealthCategories',
					loadOptionsDependsOn: ['brandId.value'],
				},
				default: [],
				description:
					'Choose from the list, or specify IDs using an <a href="https://docs.n8n.io/code/expressions/">expression</a>',
			},
		]),
	],
	parse(ctx, itemIndex) {
		return {
			query: {
				brandId: pickedId(ctx, 'brandId', itemIndex),
				categories: toStringList(readFilters(ctx, itemIndex).categories, 'Filters > Categories'),
			},
		};
	},
});

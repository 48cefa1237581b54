import { toStringList } from '../../../shared/validation';
import { filtersCollection } from '../descriptions';
import { listOperation } from '../listOperation';
import { readFilters } from '../readers';
import { brandProperties, fromVersion2, onlyVersion1, pickedId } from '../pickers';

/** GET /v1/brand-health: brandId, and `categories` as repeated keys (names may contain commas). */
export const get = listOperation({
	resource: 'brandHealth',
	operation: 'get',
	route: 'getBrandHealth',
	properties: [
		...brandProperties('The brand whose health to read'),
		...onlyVersion1([
			filtersCollection([
				{
					displayName: 'Categories',
					name: 'categories',
					type: 'string',
					typeOptions: { multipleValues: true, multipleValueButtonText: 'Add Category' },
					default: [],
					description: 'Only these categories, one name per entry (a name may contain commas)',
				},
			]),
		]),
		...fromVersion2([
			filtersCollection([
				{
					displayName: 'Category Names or IDs',
					name: 'categories',
					type: 'multiOptions',
					typeOptions: { loadOptionsMethod: 'getBrandHealthCategories', loadOptionsDependsOn: ['brandId.value'] },
					default: [],
					description:
						'Choose from the list, or specify IDs using an <a href="https://docs.n8n.io/code/expressions/">expression</a>',
				},
			]),
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

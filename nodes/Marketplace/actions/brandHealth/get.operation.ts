import { toId, toStringList } from '../../../shared/validation';
import { filtersCollection, listOperation, param, readFilters } from '../common';

/** GET /v1/brand-health: brandId, and `categories` as repeated keys (names may contain commas). */
export const get = listOperation({
	resource: 'brandHealth',
	operation: 'get',
	route: 'getBrandHealth',
	properties: [
		{
			displayName: 'Brand ID',
			name: 'brandId',
			type: 'string',
			required: true,
			default: '',
			placeholder: '1',
			description: 'ID of the brand whose health to read',
		},
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
	],
	parse(ctx, itemIndex) {
		return {
			query: {
				brandId: toId(param(ctx, 'brandId', itemIndex), 'Brand ID'),
				categories: toStringList(readFilters(ctx, itemIndex).categories, 'Filters > Categories'),
			},
		};
	},
});

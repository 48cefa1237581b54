import { brandIdsFilter, brandIdsOf, filtersCollection } from '../descriptions';
import { listOperation } from '../listOperation';
import { readFilters } from '../readers';
import { toText } from '../../../shared/validation';

/** GET /v1/returns: comma-separated lists; pages of up to 100. */
export const getAll = listOperation({
	resource: 'return',
	operation: 'getAll',
	route: 'listReturns',
	properties: [
		filtersCollection([
			brandIdsFilter,
			{
				displayName: 'Statuses',
				name: 'statuses',
				type: 'string',
				default: '',
				placeholder: 'e.g. Requested,Received',
				description: 'Only returns in these statuses (comma-separated, exact case)',
			},
		]),
	],
	parse(ctx, itemIndex) {
		const filters = readFilters(ctx, itemIndex);
		const statuses = toText(filters.statuses, 'Filters > Statuses');
		return {
			query: {
				brandIds: brandIdsOf(filters),
				statuses: statuses
					? statuses
							.split(',')
							.map((s) => s.trim())
							.filter((s) => s !== '')
					: [],
			},
		};
	},
});

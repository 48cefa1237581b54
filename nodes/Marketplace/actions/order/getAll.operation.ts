import { ORDER_STATUSES } from '../../../shared/routes';
import { toEnumList, toText, toUtcDateTime } from '../../../shared/validation';
import { brandIdsFilter, filtersCollection } from '../descriptions';
import { listOperation } from '../listOperation';
import { brandIdsOf, readFilters } from '../readers';

/** GET /v1/orders: comma-separated statuses and brandIds; the whole list, no pagination. */
export const getAll = listOperation({
	resource: 'order',
	operation: 'getAll',
	route: 'listOrders',
	properties: [
		filtersCollection([
			brandIdsFilter,
			{
				displayName: 'Fulfillment Model',
				name: 'fulfillmentModel',
				type: 'string',
				default: '',
				description: 'Only orders with this fulfillment model, exactly as the service names it',
			},
			{
				displayName: 'Start Date',
				name: 'startDate',
				type: 'dateTime',
				default: '',
				description:
					'Only orders created at or after this time (workflow timezone unless the value names one)',
			},
			{
				displayName: 'Statuses',
				name: 'statuses',
				type: 'multiOptions',
				options: ORDER_STATUSES.map((s) => ({ name: s, value: s })),
				default: [],
				description: 'Only orders in these statuses',
			},
		]),
	],
	parse(ctx, itemIndex) {
		const filters = readFilters(ctx, itemIndex);
		return {
			query: {
				statuses: toEnumList(filters.statuses, 'Filters > Statuses', ORDER_STATUSES),
				fulfillmentModel: toText(filters.fulfillmentModel, 'Filters > Fulfillment Model'),
				brandIds: brandIdsOf(filters),
				startDate: toUtcDateTime(filters.startDate, 'Filters > Start Date', ctx.getTimezone()),
			},
		};
	},
});

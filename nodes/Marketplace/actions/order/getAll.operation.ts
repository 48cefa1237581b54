import { ORDER_STATUSES } from '../../../shared/routes';
import { toEnumList, toText, toUtcDateTime } from '../../../shared/validation';
import { brandIdsFilter, brandIdsOf, filtersCollection } from '../descriptions';
import { listOperation } from '../listOperation';
import { readFilters } from '../readers';

/**
 * GET /v1/orders: comma-separated statuses and brandIds; the whole list, no pagination. Return All
 * / Limit only choose how much of that one answer is output. Return All is on by default: before
 * these parameters existed every order was output, and n8n fills a saved workflow's missing
 * parameter with its default, so a default of off would silently cut old workflows at 50 orders.
 */
export const getAll = listOperation({
	resource: 'order',
	operation: 'getAll',
	route: 'listOrders',
	wholeList: {
		returnAllByDefault: true,
		hint: 'The service returns every matching order in one answer; Limit keeps the first N',
	},
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

import type { IDataObject, INodeProperties } from 'n8n-workflow';

import { PURCHASE_ORDER_STATUSES } from '../../../shared/routes';
import type { QueryValues } from '../../../shared/transport/queryEncoding';
import { toEnumList, toIdList } from '../../../shared/validation';
import { brandIdsFilter, brandIdsOf, filtersCollection } from '../descriptions';

/** The filters both purchase-order reads take (the page read repeats keys, the export joins with commas). */
export const purchaseOrderFilters: INodeProperties = filtersCollection([
	brandIdsFilter,
	{
		displayName: 'Sale Channel IDs',
		name: 'saleChannelIds',
		type: 'string',
		default: '',
		placeholder: 'e.g. 1,2',
		description: 'Only purchase orders of these sale channels (comma-separated IDs)',
	},
	{
		displayName: 'Statuses',
		name: 'statuses',
		type: 'multiOptions',
		options: PURCHASE_ORDER_STATUSES.map((s) => ({ name: s, value: s })),
		default: [],
		description: 'Only purchase orders in these statuses',
	},
]);

export function purchaseOrderQuery(filters: IDataObject): QueryValues {
	return {
		brandIds: brandIdsOf(filters),
		saleChannelIds: toIdList(filters.saleChannelIds, 'Filters > Sale Channel IDs'),
		statuses: toEnumList(filters.statuses, 'Filters > Statuses', PURCHASE_ORDER_STATUSES),
	};
}

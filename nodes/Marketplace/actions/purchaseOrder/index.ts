import type { INodeProperties } from 'n8n-workflow';

import type { Operation } from '../operation';
import { exportOperation } from './export.operation';
import { getAll } from './getAll.operation';

/** Purchase Order: its operations and their parameters. */
export const operations: Record<string, Operation> = {
	export: exportOperation,
	getAll: getAll,
};

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['purchaseOrder'] } },
		options: [
			{
				name: 'Export',
				value: 'export',
				action: 'Export all purchase orders of given sale channels and statuses',
				description: 'Export every matching vendor purchase order at once',
			},
			{
				name: 'Get Many',
				value: 'getAll',
				action: 'Get many purchase orders of given sale channels and statuses',
				description: 'Get vendor purchase orders page by page',
			},
		],
		default: 'export',
	},
	...exportOperation.description,
	...getAll.description,
];

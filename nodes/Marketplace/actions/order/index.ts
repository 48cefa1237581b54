import type { INodeProperties } from 'n8n-workflow';

import type { Operation } from '../operation';
import { get } from './get.operation';
import { getAll } from './getAll.operation';

/** Order: its operations and their parameters. */
export const operations: Record<string, Operation> = {
	get: get,
	getAll: getAll,
};

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['order'] } },
		options: [
			{
				name: 'Get',
				value: 'get',
				action: 'Get an order by ID',
				description: 'Get one order by ID',
			},
			{
				name: 'Get Many',
				value: 'getAll',
				action: 'Get many orders of given brands and statuses since a date',
				description: 'Get orders by status, brand, fulfillment model and start date',
			},
		],
		default: 'get',
	},
	...get.description,
	...getAll.description,
];

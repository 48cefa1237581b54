import type { INodeProperties } from 'n8n-workflow';

import type { Operation } from '../operation';
import { getAll } from './getAll.operation';

/** Inventory Forecast: its operations and their parameters. */
export const operations: Record<string, Operation> = {
	getAll: getAll,
};

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['inventoryForecast'] } },
		options: [
			{
				name: 'Get Many',
				value: 'getAll',
				action: 'Get many inventory forecasts of given brands',
				description: 'Get inventory forecasts',
			},
		],
		default: 'getAll',
	},
	...getAll.description,
];

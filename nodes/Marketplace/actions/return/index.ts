import type { INodeProperties } from 'n8n-workflow';

import type { Operation } from '../operation';
import { getAll } from './getAll.operation';

/** Return: its operations and their parameters. */
export const operations: Record<string, Operation> = {
	getAll: getAll,
};

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['return'] } },
		options: [
			{
				name: 'Get Many',
				value: 'getAll',
				action: 'Get many returns of given statuses and brands',
				description: 'Get returns',
			},
		],
		default: 'getAll',
	},
	...getAll.description,
];

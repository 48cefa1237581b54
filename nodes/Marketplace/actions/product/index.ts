import type { INodeProperties } from 'n8n-workflow';

import type { Operation } from '../operation';
import { getAll } from './getAll.operation';

/** Product: its operations and their parameters. */
export const operations: Record<string, Operation> = {
	getAll: getAll,
};

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['product'] } },
		options: [
			{
				name: 'Get Many',
				value: 'getAll',
				action: 'Get many products of given brands',
				description: 'Get products',
			},
		],
		default: 'getAll',
	},
	...getAll.description,
];

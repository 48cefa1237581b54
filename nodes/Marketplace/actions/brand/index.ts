import type { INodeProperties } from 'n8n-workflow';

import type { Operation } from '../operation';
import { getAll } from './getAll.operation';

/** Brand: its operations and their parameters. */
export const operations: Record<string, Operation> = {
	getAll: getAll,
};

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['brand'] } },
		options: [
			{
				name: 'Get Many',
				value: 'getAll',
				action: 'Get many brands your API key can access',
				description: 'Discover the brands your API key can access',
			},
		],
		default: 'getAll',
	},
	...getAll.description,
];

import type { INodeProperties } from 'n8n-workflow';

import type { Operation } from '../operation';
import { get } from './get.operation';

/** Brand Health: its operations and their parameters. */
export const operations: Record<string, Operation> = {
	get: get,
};

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['brandHealth'] } },
		options: [
			{
				name: 'Get',
				value: 'get',
				action: 'Get the health bands and scores of a brand',
				description: 'Get the health dimensions and bands of a brand',
			},
		],
		default: 'get',
	},
	...get.description,
];

import type { INodeProperties } from 'n8n-workflow';

import type { Operation } from '../operation';
import { connect } from './connect.operation';

/** Sale Channel: its operations and their parameters. */
export const operations: Record<string, Operation> = {
	connect: connect,
};

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['saleChannel'] } },
		options: [
			{
				name: 'Connect',
				value: 'connect',
				action: 'Connect a brand to a sale channel',
				description: 'Connect a brand to a marketplace',
			},
		],
		default: 'connect',
	},
	...connect.description,
];

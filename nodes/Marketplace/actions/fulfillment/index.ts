import type { INodeProperties } from 'n8n-workflow';

import type { Operation } from '../operation';
import { markPacked } from './markPacked.operation';

/** Fulfillment: its operations and their parameters. */
export const operations: Record<string, Operation> = {
	markPacked: markPacked,
};

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['fulfillment'] } },
		options: [
			{
				name: 'Mark Orders Packed',
				value: 'markPacked',
				action: 'Mark orders packed by order ID',
				description: 'Mark the orders of the input items as packed, in batches',
			},
		],
		default: 'markPacked',
	},
	...markPacked.description,
];

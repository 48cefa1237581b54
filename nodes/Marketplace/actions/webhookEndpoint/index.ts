import type { INodeProperties } from 'n8n-workflow';

import type { Operation } from '../operation';
import { create } from './create.operation';
import { deleteOperation } from './delete.operation';
import { get } from './get.operation';
import { getAll } from './getAll.operation';
import { getDeliveries } from './getDeliveries.operation';
import { rotateSecret } from './rotateSecret.operation';
import { test } from './test.operation';
import { update } from './update.operation';

/** Webhook Endpoint: its operations and their parameters. */
export const operations: Record<string, Operation> = {
	create: create,
	delete: deleteOperation,
	get: get,
	getDeliveries: getDeliveries,
	getAll: getAll,
	rotateSecret: rotateSecret,
	test: test,
	update: update,
};

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['webhookEndpoint'] } },
		options: [
			{
				name: 'Create',
				value: 'create',
				action: 'Create a webhook endpoint',
				description: 'Register an https address for events; the secret is shown once',
			},
			{
				name: 'Delete',
				value: 'delete',
				action: 'Delete a webhook endpoint',
				description: 'Delete one of your webhook endpoints',
			},
			{
				name: 'Get',
				value: 'get',
				action: 'Get a webhook endpoint',
				description: 'Get one of your webhook endpoints',
			},
			{
				name: 'Get Deliveries',
				value: 'getDeliveries',
				action: 'Get deliveries of a webhook endpoint',
				description: 'Get the deliveries made to an endpoint, newest first',
			},
			{
				name: 'Get Many',
				value: 'getAll',
				action: 'Get many webhook endpoints',
				description: 'Get many of your webhook endpoints',
			},
			{
				name: 'Rotate Secret',
				value: 'rotateSecret',
				action: 'Rotate the secret of a webhook endpoint',
				description: 'Get a new signing secret; the old one keeps signing for 24 hours',
			},
			{
				name: 'Test',
				value: 'test',
				action: 'Send a test event to a webhook endpoint',
				description: 'Send one webhook.test event (a single attempt)',
			},
			{
				name: 'Update',
				value: 'update',
				action: 'Update a webhook endpoint',
				description: 'Change the URL, description, event types or status of an endpoint',
			},
		],
		default: 'create',
	},
	...create.description,
	...deleteOperation.description,
	...get.description,
	...getDeliveries.description,
	...getAll.description,
	...rotateSecret.description,
	...test.description,
	...update.description,
];

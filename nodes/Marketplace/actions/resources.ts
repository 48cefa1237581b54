/**
 * Every resource of the action node. Each resource folder's index.ts holds
 * its operation selector and a table of its operations, one file each.
 */
import type { INodeProperties } from 'n8n-workflow';

import * as brand from './brand';
import * as brandHealth from './brandHealth';
import * as fulfillment from './fulfillment';
import * as inventoryForecast from './inventoryForecast';
import type { Operation } from './operation';
import * as order from './order';
import * as product from './product';
import * as purchaseOrder from './purchaseOrder';
import * as returnResource from './return';
import * as saleChannel from './saleChannel';
import * as webhookEndpoint from './webhookEndpoint';

/** The dispatch table: resource -> operation value -> operation. */
export const operations: Record<string, Record<string, Operation>> = {
	brand: brand.operations,
	brandHealth: brandHealth.operations,
	fulfillment: fulfillment.operations,
	inventoryForecast: inventoryForecast.operations,
	order: order.operations,
	product: product.operations,
	purchaseOrder: purchaseOrder.operations,
	return: returnResource.operations,
	saleChannel: saleChannel.operations,
	webhookEndpoint: webhookEndpoint.operations,
};

export const nodeProperties: INodeProperties[] = [
	{
		displayName: 'Resource',
		name: 'resource',
		type: 'options',
		noDataExpression: true,
		options: [
			{ name: 'Brand', value: 'brand' },
			{ name: 'Brand Health', value: 'brandHealth' },
			{ name: 'Fulfillment', value: 'fulfillment' },
			{ name: 'Inventory Forecast', value: 'inventoryForecast' },
			{ name: 'Order', value: 'order' },
			{ name: 'Product', value: 'product' },
			{ name: 'Purchase Order', value: 'purchaseOrder' },
			{ name: 'Return', value: 'return' },
			{ name: 'Sale Channel', value: 'saleChannel' },
			{ name: 'Webhook Endpoint', value: 'webhookEndpoint' },
		],
		default: 'order',
	},
	...brand.description,
	...brandHealth.description,
	...fulfillment.description,
	...inventoryForecast.description,
	...order.description,
	...product.description,
	...purchaseOrder.description,
	...returnResource.description,
	...saleChannel.description,
	...webhookEndpoint.description,
];

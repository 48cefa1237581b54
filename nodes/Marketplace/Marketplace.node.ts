import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { requestOptionsProperty } from '../shared/requestOptions';
import { operationSubtitle } from '../shared/subtitle';
import { nodeProperties } from './actions/resources';
import { methods } from './methods';
import { router } from './actions/router';

export class Marketplace implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Marketplace',
		name: 'marketplace',
		icon: {
			light: 'file:../shared/icons/marketplace.svg',
			dark: 'file:../shared/icons/marketplace.dark.svg',
		},
		group: ['transform'],
		version: 1,
		subtitle: operationSubtitle(nodeProperties, ['fulfillment.markPacked']),
		description:
			'Manage marketplace sales: sale channels, products, orders, returns, purchase orders, brand health, inventory forecasts, fulfillment and webhook endpoints',
		defaults: { name: 'Marketplace' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'marketplaceApi', required: true }],
		properties: [...nodeProperties, requestOptionsProperty],
	};

	methods = methods;

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		// On Error: Continue turns a failed item into an output item carrying its error
		// (itemErrors.ts) instead of failing the node: read once here, applied by the operations
		return await router.call(this, this.continueOnFail());
	}
}

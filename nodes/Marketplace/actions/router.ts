import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { errorItem, toNodeError } from './itemErrors';
import type { Operation } from './operation';
import { operations } from './resources';

/**
 * Runs the chosen operation. Per-item operations are checked for every item first, so bad input
 * fails (or, with continueOnFail, becomes an error item) before any request is sent; then each
 * item runs in order and its records become output items paired with it. With `continueOnFail`
 * (On Error: Continue) a failed item becomes an error item and the others go on.
 */
export async function router(
	this: IExecuteFunctions,
	continueOnFail: boolean,
): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const resource = this.getNodeParameter('resource', 0) as string;
	const operationName = this.getNodeParameter('operation', 0) as string;
	const operation: Operation | undefined = operations[resource]?.[operationName];
	if (!operation) {
		throw new NodeOperationError(
			this.getNode(),
			`The operation "${operationName}" of "${resource}" is not supported`,
		);
	}
	if (operation.kind === 'batch')
		return [await operation.execute.call(this, items, continueOnFail)];

	const inputs = items.map((_, itemIndex) => {
		try {
			return { ok: true as const, input: operation.parse.call(this, itemIndex) };
		} catch (error) {
			const nodeError = toNodeError(this, error, itemIndex);
			if (!continueOnFail) throw nodeError;
			return { ok: false as const, error: nodeError };
		}
	});

	const output: INodeExecutionData[] = [];
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		const parsed = inputs[itemIndex];
		if (!parsed.ok) {
			output.push(errorItem(parsed.error, itemIndex));
			continue;
		}
		try {
			const records = await operation.run.call(this, parsed.input, itemIndex);
			for (const json of records) output.push({ json, pairedItem: { item: itemIndex } });
		} catch (error) {
			const nodeError = toNodeError(this, error, itemIndex);
			if (!continueOnFail) throw nodeError;
			output.push(errorItem(nodeError, itemIndex));
		}
	}
	return [output];
}

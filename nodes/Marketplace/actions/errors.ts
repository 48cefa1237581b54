import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { InputError } from '../../shared/validation';

/** Any error of an item as the n8n error it should be shown as, carrying the item index. */
export function toNodeError(
	ctx: IExecuteFunctions,
	error: unknown,
	itemIndex: number,
): NodeApiError | NodeOperationError {
	if (error instanceof NodeApiError || error instanceof NodeOperationError) {
		if (error.context.itemIndex === undefined) error.context.itemIndex = itemIndex;
		return error;
	}
	if (error instanceof InputError) {
		return new NodeOperationError(ctx.getNode(), `Invalid parameter "${error.field}": ${error.problem}`, {
			itemIndex,
			description: 'Nothing was sent to the service. Fix the parameter and run again.',
		});
	}
	return new NodeOperationError(ctx.getNode(), error as Error, { itemIndex });
}

/**
 * The output item of a failed item under either "On Error: Continue" setting: `{ error, details }`.
 * n8n routes an item to the error output only when its json has no keys but error, message and
 * details (WorkflowExecute.handleNodeErrorOutput), so everything else goes into details.
 */
export function errorItem(error: NodeApiError | NodeOperationError, itemIndex: number, extra: IDataObject = {}): INodeExecutionData {
	const details: IDataObject = { ...extra };
	if (error.description) details.description = error.description;
	if (error instanceof NodeApiError && error.httpCode) details.httpCode = error.httpCode;
	return { json: { error: error.message, details }, pairedItem: { item: itemIndex } };
}

/**
 * Errors per item: any error of an item as the n8n error to show (with its item index), and the
 * output item of a failed item under n8n's "On Error: Continue" settings.
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { invalidParameter } from '../../shared/invalidParameter';
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
	if (error instanceof InputError)
		return invalidParameter(ctx.getNode(), error, { itemIndex, retry: 'run' });
	return new NodeOperationError(ctx.getNode(), error as Error, { itemIndex });
}

/**
 * The output item of a failed item under either "On Error: Continue" setting: `{ error, details }`.
 * n8n routes an item to the error output only when its json has no keys but error, message and
 * details (WorkflowExecute.handleNodeErrorOutput), so everything else goes into details.
 */
export function errorItem(
	error: NodeApiError | NodeOperationError,
	itemIndex: number,
	extra: IDataObject = {},
): INodeExecutionData {
	const details: IDataObject = { ...extra };
	if (error.description) details.description = error.description;
	if (error instanceof NodeApiError && error.httpCode) details.httpCode = error.httpCode;
	return { json: { error: error.message, details }, pairedItem: { item: itemIndex } };
}

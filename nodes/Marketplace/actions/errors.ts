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

/** The output item of a failed item under "Continue (using error output)" / continueOnFail. */
export function errorItem(
	error: Error & { description?: string | null; httpCode?: string | null },
	itemIndex: number,
	extra: IDataObject = {},
): INodeExecutionData {
	const json: IDataObject = { ...extra, error: error.message };
	if (error.description) json.description = error.description;
	if (error.httpCode) json.httpCode = error.httpCode;
	return { json, pairedItem: { item: itemIndex } };
}

import type { INode } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { InputError } from './validation';

/**
 * The error every node shows for a parameter it refused before sending anything: the field and
 * what is wrong in the message (the only part n8n shows in toasts), the way on in the description.
 */
export function invalidParameter(
	node: INode,
	error: InputError,
	options: { itemIndex?: number; retry: 'run' | 'activate' },
): NodeOperationError {
	return new NodeOperationError(node, `Invalid parameter "${error.field}": ${error.problem}`, {
		itemIndex: options.itemIndex,
		description: `Nothing was sent to the service. Fix the parameter and ${options.retry} again.`,
	});
}

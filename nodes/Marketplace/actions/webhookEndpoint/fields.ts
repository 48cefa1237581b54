import type { IDataObject, INodeProperties } from 'n8n-workflow';

import { toId } from '../../../shared/validation';
import { param } from '../common';
import type { IExecuteFunctions } from 'n8n-workflow';

export const endpointIdProperty: INodeProperties = {
	displayName: 'Webhook Endpoint ID',
	name: 'endpointId',
	type: 'string',
	required: true,
	default: '',
	placeholder: '12',
	description: 'ID of one of your webhook endpoints',
};

export function endpointIdOf(ctx: IExecuteFunctions, itemIndex: number): { id: number } {
	return { id: toId(param(ctx, 'endpointId', itemIndex), 'Webhook Endpoint ID') };
}

export const SECRET_NOTICE =
	'Store this secret now: the service returns it only in this answer and never again. Rotate it to get a new one.';

/** Create and rotate answer `{ webhookEndpoint, secret }`: flattened, with the notice beside the secret. */
export function withSecretNotice(body: IDataObject): IDataObject[] {
	const endpoint = (body.webhookEndpoint ?? {}) as IDataObject;
	return [{ ...endpoint, secret: body.secret, secretNotice: SECRET_NOTICE }];
}

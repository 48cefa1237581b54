import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { pickedId } from '../pickers';

export { endpointProperty } from '../pickers';

export function endpointIdOf(ctx: IExecuteFunctions, itemIndex: number): { id: number } {
	return { id: pickedId(ctx, 'endpointId', itemIndex) };
}

export const SECRET_NOTICE =
	'Store this secret now: the service returns it only in this answer and never again. Rotate it to get a new one.';

/** Create and rotate answer `{ webhookEndpoint, secret }`: flattened, with the notice beside the secret. */
export function withSecretNotice(body: IDataObject): IDataObject[] {
	const endpoint = (body.webhookEndpoint ?? {}) as IDataObject;
	return [{ ...endpoint, secret: body.secret, secretNotice: SECRET_NOTICE }];
}

/**
 * The endpoint's signing secrets: what a rotation changes, and the rotate-secret request itself (made on activation, and by a delivery that finds the secret was
 * rotated elsewhere).
 */
import type { IDataObject, IHookFunctions, IWebhookFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { apiRequest, newIdempotencyKey, type TransportSettings } from '../shared/transport/request';
import { SECRET_OVERLAP_MS, type EndpointRecord } from './store';

/** The record after a rotation: the new secret, and the old one kept for the overlap. */
export function withNewSecret(
	record: EndpointRecord,
	secret: string,
	nowMs: number,
): EndpointRecord {
	const next: EndpointRecord = { ...record, secret, secretAt: nowMs };
	delete next.previousSecret;
	delete next.previousSecretUntil;
	if (record.secret && record.secret !== secret) {
		next.previousSecret = record.secret;
		next.previousSecretUntil = nowMs + SECRET_OVERLAP_MS;
	}
	return next;
}

/** The secret of a create or rotate answer: `{ webhookEndpoint, secret }` (read tolerantly). */
export function secretOf(body: unknown): string | undefined {
	if (!body || typeof body !== 'object') return undefined;
	const record = body as IDataObject;
	if (typeof record.secret === 'string') return record.secret;
	const inner = record.webhookEndpoint as IDataObject | undefined;
	return inner && typeof inner.secret === 'string' ? inner.secret : undefined;
}

/** Rotates the endpoint's signing secret and returns the new one (the service shows it only here). */
export async function rotateSecret(
	ctx: IHookFunctions | IWebhookFunctions,
	endpointId: number,
	settings: TransportSettings,
): Promise<string> {
	const { body } = await apiRequest.call(
		ctx,
		{
			route: 'rotateWebhookEndpointSecret',
			pathParams: { id: endpointId },
			idempotencyKey: newIdempotencyKey(),
		},
		settings,
	);
	const secret = secretOf(body);
	if (!secret) {
		throw new NodeOperationError(
			ctx.getNode(),
			`Rotating the secret of webhook endpoint ${endpointId} returned no secret`,
		);
	}
	return secret;
}

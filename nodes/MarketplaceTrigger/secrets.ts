/**
 * The endpoint's signing secrets: which ones verify a delivery, what a rotation changes, and the
 * rotate-secret request itself (made on activation, and by a delivery that finds the secret was
 * rotated elsewhere).
 */
import type { IDataObject, IHookFunctions, IWebhookFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { apiRequest, newIdempotencyKey, type TransportSettings } from '../shared/transport/request';
import { parseSecret } from '../shared/webhookVerifier';
import type { EndpointRecord } from './store';

/** After a rotation the service signs with the previous secret too, for 24 hours. */
export const SECRET_OVERLAP_MS = 24 * 3_600_000;

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

/** HMAC keys to verify with at `nowMs`: the current secret, plus the previous one during the overlap. */
export function verificationKeys(record: EndpointRecord | undefined, nowMs: number): Buffer[] {
	if (!record) return [];
	const secrets: string[] = [];
	if (record.secret) secrets.push(record.secret);
	if (
		record.previousSecret &&
		typeof record.previousSecretUntil === 'number' &&
		nowMs < record.previousSecretUntil
	) {
		secrets.push(record.previousSecret);
	}
	const keys: Buffer[] = [];
	for (const secret of secrets) {
		try {
			keys.push(parseSecret(secret));
		} catch {
			// a malformed stored secret verifies nothing; the other one may still do
		}
	}
	return keys;
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

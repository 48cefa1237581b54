/**
 * The endpoint record: what the trigger keeps in the workflow's static data, one record per webhook
 * URL (the production URL and the test URL of "Listen for test event" never overwrite each other):
 * the endpoint's id at the service and its signing secrets. Only the webhook methods (lifecycle.ts)
 * write it; webhook() (receive.ts) only reads it, so a delivery never makes n8n save the static data.
 */
import type { IDataObject } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { isRecord } from '../shared/isRecord';
import {
	apiRequest,
	newIdempotencyKey,
	type TransportContext,
	type TransportSettings,
} from '../shared/transport/request';

/** After a rotation the service signs with the previous secret too, for 24 hours. */
export const SECRET_OVERLAP_MS = 24 * 3_600_000;

/**
 * A secret the watch took for refused deliveries is not replaced again for this long (watch.ts; nor by
 * the activation's check, lifecycle.ts): refused again, a new one does not help.
 */
export const RENEWAL_HOLDS_MS = 24 * 3_600_000;

export interface EndpointRecord {
	endpointId: number;
	/** the current signing secret (`whsec_...`) */
	secret: string;
	/** the secret before the last rotation, accepted until `previousSecretUntil` (Unix ms) */
	previousSecret?: string;
	previousSecretUntil?: number;
	/** the endpoint of the production URL, which the watch looks after (watch.ts) */
	production?: boolean;
	/** the watch took a new secret for refused deliveries: when, and the newest delivery it had judged */
	renewed?: { at: number; afterDeliveryId: number };
	/** the service had disabled the endpoint, from when to when: the workflow is told once (a notice) */
	disabledPeriod?: { from: string; to: string };
}

type StaticData = IDataObject;

/** The record of the endpoint at `url`, if the webhook methods registered one. */
export function readRecord(staticData: StaticData, url: string): EndpointRecord | undefined {
	const endpoints = isRecord(staticData.endpoints) ? staticData.endpoints : {};
	const record = endpoints[url];
	if (!isRecord(record) || typeof record.endpointId !== 'number') return undefined;
	if (typeof record.secret !== 'string') return undefined;
	const { endpointId, secret, previousSecret, previousSecretUntil } = record;
	return {
		endpointId,
		secret,
		...(typeof previousSecret === 'string' && typeof previousSecretUntil === 'number'
			? { previousSecret, previousSecretUntil }
			: {}),
		...(record.production === true ? { production: true } : {}),
		...(isRecord(record.renewed) ? { renewed: record.renewed as EndpointRecord['renewed'] } : {}),
		...(isRecord(record.disabledPeriod)
			? { disabledPeriod: record.disabledPeriod as EndpointRecord['disabledPeriod'] }
			: {}),
	};
}

/**
 * The production endpoint's URL and record: the one marked `production`, else the only record
 * (a record written before the mark existed).
 */
export function productionRecord(
	staticData: StaticData,
): { url: string; record: EndpointRecord } | undefined {
	const urls = Object.keys(isRecord(staticData.endpoints) ? staticData.endpoints : {});
	const found = urls
		.map((url) => ({ url, record: readRecord(staticData, url) }))
		.filter((e): e is { url: string; record: EndpointRecord } => e.record !== undefined);
	return (
		found.find((e) => e.record.production === true) ?? (found.length === 1 ? found[0] : undefined)
	);
}

/**
 * Sets (or with `undefined` removes) the record of `url`. It assigns the top-level key, so n8n sees
 * the change and saves the static data when the webhook method returns.
 */
export function writeRecord(
	staticData: StaticData,
	url: string,
	record: EndpointRecord | undefined,
): void {
	const endpoints = { ...(isRecord(staticData.endpoints) ? staticData.endpoints : {}) };
	if (record === undefined) delete endpoints[url];
	else endpoints[url] = { ...record };
	staticData.endpoints = endpoints;
}

/** The secrets a delivery may be signed with at `nowMs`: the current one, and the previous during the overlap. */
export function verificationSecrets(record: EndpointRecord | undefined, nowMs: number): string[] {
	if (!record) return [];
	const overlap = record.previousSecret !== undefined && nowMs < (record.previousSecretUntil ?? 0);
	return overlap ? [record.secret, record.previousSecret!] : [record.secret];
}

/** The record after a rotation: the new secret, and the old one kept for the overlap. */
export function withNewSecret(
	record: EndpointRecord | undefined,
	endpointId: number,
	secret: string,
	nowMs: number,
): EndpointRecord {
	const same = record?.endpointId === endpointId;
	const kept = same ? { ...record, secret } : { endpointId, secret };
	delete kept.previousSecret;
	delete kept.previousSecretUntil;
	const old = same ? record.secret : undefined;
	if (old === undefined || old === secret) return kept;
	return { ...kept, previousSecret: old, previousSecretUntil: nowMs + SECRET_OVERLAP_MS };
}

/** The secret of a create or rotate answer: `{ webhookEndpoint, secret }` (read tolerantly). */
export function secretOf(body: unknown): string | undefined {
	if (!isRecord(body)) return undefined;
	if (typeof body.secret === 'string') return body.secret;
	const inner = body.webhookEndpoint;
	return isRecord(inner) && typeof inner.secret === 'string' ? inner.secret : undefined;
}

/** Rotates the endpoint's signing secret and returns the new one (the service shows it only here). */
export async function rotateSecret(
	ctx: TransportContext,
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

/**
 * Event types and the event envelope the service delivers. Pure: no n8n imports.
 */
import { createHash } from 'node:crypto';

import { SUBSCRIBABLE_EVENT_TYPES, type SubscribableEventType } from '../shared/routes';
import { KEY_LENGTH } from './dedup';

export const TEST_EVENT_TYPE = 'webhook.test';

export function isSubscribable(type: string): type is SubscribableEventType {
	return (SUBSCRIBABLE_EVENT_TYPES as readonly string[]).includes(type);
}

/** The chosen event types: known, unique, in the table's order. */
export function normaliseEventTypes(value: unknown): SubscribableEventType[] {
	const chosen = new Set(Array.isArray(value) ? value.map(String) : []);
	return SUBSCRIBABLE_EVENT_TYPES.filter((type) => chosen.has(type));
}

/** True when both lists name the same event types (order and repeats ignored). */
export function sameEventTypes(a: readonly string[], b: readonly string[]): boolean {
	const left = new Set(a);
	const right = new Set(b);
	return left.size === right.size && [...left].every((type) => right.has(type));
}

export interface EventEnvelope {
	id: string;
	type: string;
	createdAt: string;
	data: Record<string, unknown>;
}

/** Reads the envelope from the raw body; undefined when it is not a JSON object with the 2.3 fields. */
export function parseEnvelope(rawBody: Buffer): EventEnvelope | undefined {
	let parsed: unknown;
	try {
		parsed = JSON.parse(rawBody.toString('utf8'));
	} catch {
		return undefined;
	}
	if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
	const { id, type, createdAt, data } = parsed as Record<string, unknown>;
	if (typeof id !== 'string' || typeof type !== 'string' || typeof createdAt !== 'string')
		return undefined;
	if (!data || typeof data !== 'object' || Array.isArray(data)) return undefined;
	return { id, type, createdAt, data: data as Record<string, unknown> };
}

/** What to read for the "current state" of an event (6.1 "Read next"), if anything. */
export type StateRead =
	| { route: 'getOrder'; pathParams: { id: number } }
	| { route: 'getBrandHealth'; query: { brandId: number } };

const positiveInteger = (value: unknown): value is number =>
	typeof value === 'number' && Number.isSafeInteger(value) && value > 0;

export function stateReadFor(event: EventEnvelope): StateRead | undefined {
	if (event.type.startsWith('order.') && positiveInteger(event.data.orderId)) {
		return { route: 'getOrder', pathParams: { id: event.data.orderId } };
	}
	if (event.type.startsWith('brand_health.') && positiveInteger(event.data.brandId)) {
		return { route: 'getBrandHealth', query: { brandId: event.data.brandId } };
	}
	return undefined;
}

/**
 * The key a webhook-id is remembered under: 72 bits of its SHA-256 digest, so that ids of any
 * length cost the same 12 characters in static data (two of 10,000 ids collide with a
 * probability of about 1e-14).
 */
export function dedupKey(webhookId: string): string {
	return createHash('sha256').update(webhookId).digest('base64url').slice(0, KEY_LENGTH);
}

/**
 * What the trigger keeps in the workflow's static data (`getWorkflowStaticData('node')`).
 *
 * Everything is keyed by the webhook URL the record belongs to, so the production URL and the test
 * URL ("listen for test event") never overwrite each other:
 *
 *     endpoints: { [webhookUrl]: EndpointRecord }   the endpoint registered for that URL
 *     seen:      { [webhookUrl]: DedupState }       webhook-ids already accepted at that URL
 *
 * Pure: works on plain objects, no n8n imports.
 */
import { DedupStore, type DedupState } from './dedup';
import { parseSecret } from '../shared/webhookVerifier';

/** Spec 6.5 / part 8: after a rotation the previous secret still signs for 24 hours. */
export const SECRET_OVERLAP_MS = 24 * 3_600_000;

export interface MissedEventsNotice {
	/** when the trigger re-enabled the endpoint */
	reEnabledAt: string;
	/** the endpoint's updatedAt when it was found disabled (about when it was disabled) */
	disabledSince: string | null;
	disabledReason: string | null;
	message: string;
}

export interface EndpointRecord {
	endpointId: number;
	/** current signing secret (`whsec_...`) */
	secret?: string;
	/** the secret before the last rotation this trigger made, accepted until previousSecretUntil */
	previousSecret?: string;
	/** Unix ms */
	previousSecretUntil?: number;
	eventTypes: string[];
	/** how the record came to be: 'created' by create(), 'adopted' by checkExists() */
	origin: 'created' | 'adopted';
	/** set when checkExists re-enabled a disabled endpoint; shown once on the next event */
	missedEvents?: MissedEventsNotice;
}

type Bag = Record<string, unknown>;

const isRecord = (value: unknown): value is Bag =>
	typeof value === 'object' && value !== null && !Array.isArray(value);

function section(data: Bag, name: 'endpoints' | 'seen'): Bag {
	const value = data[name];
	return isRecord(value) ? value : {};
}

export function getRecord(data: Bag, url: string): EndpointRecord | undefined {
	const record = section(data, 'endpoints')[url];
	if (!isRecord(record) || typeof record.endpointId !== 'number') return undefined;
	return JSON.parse(JSON.stringify(record)) as EndpointRecord;
}

/** Writes by assigning the top-level key, so n8n notices the change and saves it. */
export function setRecord(data: Bag, url: string, record: EndpointRecord): void {
	data.endpoints = { ...section(data, 'endpoints'), [url]: JSON.parse(JSON.stringify(record)) as Bag };
}

export function clearRecord(data: Bag, url: string): void {
	const endpoints = { ...section(data, 'endpoints') };
	if (!(url in endpoints)) return;
	delete endpoints[url];
	data.endpoints = endpoints;
}

/** The record after a rotation: the new secret, and the old one kept for the overlap. */
export function withNewSecret(record: EndpointRecord, secret: string, nowMs: number): EndpointRecord {
	const next: EndpointRecord = { ...record, secret };
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

export function loadSeen(data: Bag, url: string): DedupStore {
	return DedupStore.fromState(section(data, 'seen')[url]);
}

export function saveSeen(data: Bag, url: string, store: DedupStore): void {
	data.seen = { ...section(data, 'seen'), [url]: store.toState() as unknown as Bag };
}

export type { DedupState };

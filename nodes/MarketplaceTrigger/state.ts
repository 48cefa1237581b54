/**
 * What the trigger keeps in the workflow's static data (`getWorkflowStaticData('node')`).
 *
 * Everything is keyed by the webhook URL the record belongs to, so the production URL and the test
 * URL ("listen for test event") never overwrite each other:
 *
 *     endpoints: { [webhookUrl]: EndpointRecord }   the endpoint registered for that URL
 *     seen:      { [webhookUrl]: DedupState }       webhook-ids already accepted at that URL
 *     missed:    { [webhookUrl]: MissedWindow }     a Disabled endpoint deleted on deactivation,
 *                                                   told on the first event after re-activation
 *     orders:    { [webhookUrl]: DedupState }       orders whose order.created event was accepted,
 *                                                   until a catch-up window passed them (catchUp.ts)
 *     caughtUpTo: { [webhookUrl]: number }          the catch-up cursor: every order created before it
 *                                                   (the service's clock, Unix ms) ran or was caught up
 *
 * `endpoints` is removed on deactivation; the others stay, so a workflow published again picks up
 * where it stopped.
 *
 * Pure: works on plain objects, no n8n imports.
 */
import { DedupStore, type DedupState } from './dedup';
import { isRecord } from '../shared/isRecord';
import { parseSecret } from '../shared/webhookVerifier';

/** After a rotation the service signs with the previous secret too, for 24 hours. */
export const SECRET_OVERLAP_MS = 24 * 3_600_000;

/**
 * The service disables an endpoint after 5 days without a successful delivery; events of those
 * days, and of up to the whole retry schedule before them, were never delivered.
 */
export const UNDELIVERED_BEFORE_DISABLING_MS = (5 * 24 + 42) * 3_600_000;

/** A Disabled endpoint as the trigger last saw it. */
export interface MissedWindow {
	endpointId: number;
	/** the endpoint's updatedAt when it was found Disabled (about when it was disabled) */
	disabledSince: string | null;
	disabledReason: string | null;
}

export interface MissedEventsNotice {
	/** when the trigger re-enabled the endpoint or registered a new one */
	reEnabledAt: string;
	disabledSince: string | null;
	disabledReason: string | null;
	/** events created from here to `missedUntil` may never have been delivered */
	missedFrom: string | null;
	missedUntil: string;
	/** when the endpoint works again, by the service's clock (its updatedAt or createdAt then): no delivery was under way before */
	worksAgainAt: string;
	message: string;
}

/**
 * The notice for the first event after a Disabled endpoint was re-enabled or replaced at `nowMs`,
 * when the service says it works again at `worksAgainAt` (its own clock; `nowMs` if it did not say).
 */
export function missedEventsNotice(
	window: MissedWindow,
	nowMs: number,
	worksAgainAt?: string,
): MissedEventsNotice {
	const since = window.disabledSince ? Date.parse(window.disabledSince) : NaN;
	const missedFrom = Number.isFinite(since)
		? new Date(since - UNDELIVERED_BEFORE_DISABLING_MS).toISOString()
		: null;
	const missedUntil = new Date(nowMs).toISOString();
	const works =
		worksAgainAt !== undefined && Number.isFinite(Date.parse(worksAgainAt))
			? worksAgainAt
			: missedUntil;
	return {
		reEnabledAt: missedUntil,
		disabledSince: window.disabledSince,
		disabledReason: window.disabledReason,
		missedFrom,
		missedUntil,
		worksAgainAt: works,
		message:
			`Webhook endpoint ${window.endpointId} was Disabled (${window.disabledReason ?? 'by a user'}` +
			`${window.disabledSince ? ` since about ${window.disabledSince}` : ''}). The service does not resend events it could not deliver: ` +
			`events created ${missedFrom ? `from ${missedFrom} ` : ''}until ${missedUntil} may be missing. With Catch Up Missed Orders on and ` +
			'Order Created among the event types, the trigger brings the orders created meanwhile; cancellations, returns and brand health changes of that window are not recovered ' +
			'(read them with the Marketplace node).',
	};
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
	/** set when a Disabled endpoint was re-enabled or replaced; shown once, on the next event */
	missedEvents?: MissedEventsNotice;
	/** Unix ms of the last rotation the trigger made because of a rotation it did not make */
	recoveredAt?: number;
	/** Unix ms when the trigger obtained `secret` (creation or rotation) */
	secretAt?: number;
	/** Unix ms of a recent delivery verified with a held secret (saved in steps, so up to minutes behind) */
	lastVerifiedAt?: number;
}

type Bag = Record<string, unknown>;

function section(data: Bag, name: 'endpoints' | 'seen' | 'missed' | 'orders' | 'caughtUpTo'): Bag {
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
	data.endpoints = {
		...section(data, 'endpoints'),
		[url]: JSON.parse(JSON.stringify(record)) as Bag,
	};
}

export function clearRecord(data: Bag, url: string): void {
	const endpoints = { ...section(data, 'endpoints') };
	if (!(url in endpoints)) return;
	delete endpoints[url];
	data.endpoints = endpoints;
}

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

export function getMissedWindow(data: Bag, url: string): MissedWindow | undefined {
	const window = section(data, 'missed')[url];
	return isRecord(window) && typeof window.endpointId === 'number'
		? (window as unknown as MissedWindow)
		: undefined;
}

export function setMissedWindow(data: Bag, url: string, window: MissedWindow | undefined): void {
	const missed = { ...section(data, 'missed') };
	if (window) missed[url] = { ...window };
	else if (url in missed) delete missed[url];
	else return;
	data.missed = missed;
}

export function loadSeen(data: Bag, url: string): DedupStore {
	return DedupStore.fromState(section(data, 'seen')[url]);
}

export function saveSeen(data: Bag, url: string, store: DedupStore): void {
	data.seen = { ...section(data, 'seen'), [url]: store.toState() as unknown as Bag };
}

export function loadOrders(data: Bag, url: string): DedupStore {
	return DedupStore.fromState(section(data, 'orders')[url]);
}

export function saveOrders(data: Bag, url: string, store: DedupStore): void {
	data.orders = { ...section(data, 'orders'), [url]: store.toState() as unknown as Bag };
}

export function getCaughtUpTo(data: Bag, url: string): number | undefined {
	const value = section(data, 'caughtUpTo')[url];
	return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export function setCaughtUpTo(data: Bag, url: string, ms: number | undefined): void {
	const cursors = { ...section(data, 'caughtUpTo') };
	if (ms === undefined) delete cursors[url];
	else cursors[url] = ms;
	data.caughtUpTo = cursors;
}

export type { DedupState };

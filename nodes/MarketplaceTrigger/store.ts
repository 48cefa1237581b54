/**
 * The store: what the trigger keeps in the workflow's static data (`getWorkflowStaticData('node')`),
 * one request's view of it (EndpointStore), and the key set its sections are made of (KeySet).
 * Pure: no n8n imports, no clock of its own (callers pass times).
 *
 * Glossary (one word per thing, used the same way in every file of the trigger):
 * - endpoint: the webhook endpoint registered with the service for one webhook URL of the workflow.
 *   Everything in the static data is keyed by that URL, so the production URL and the test URL
 *   ("Listen for test event") never overwrite each other.
 * - record (`endpoints[url]`): the endpoint's id, signing secret(s), event types, the missed-events
 *   notice still to show, and when a delivery was last verified.
 * - key, known, deliveredOrders, cursor: the facts that keep each event once, in the table at the top of
 *   once.ts (what each holds, for how long, who writes and reads it).
 * - missed window (`missed[url]`): a Disabled endpoint that deactivation deleted, told on the first
 *   event after the next activation.
 *
 * `endpoints` is removed on deactivation; the other sections stay, so a workflow published again picks
 * up where it stopped.
 */
import type { KeyObject } from 'node:crypto';

import { isRecord } from '../shared/isRecord';
import { signingKey } from '../shared/webhookVerifier';
import { KeySet } from './keySet';
import type { EndpointMemory, KeySection, KeyToSave } from './memory';

/** After a rotation the service signs with the previous secret too, for 24 hours. */
export const SECRET_OVERLAP_MS = 24 * 3_600_000;

/** The time of the last verified delivery is written when it moved this far (each write makes n8n save the whole static data). */
const VERIFIED_AT_STEP_MS = 10 * 60_000;

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
	/** Unix ms of a recent delivery verified with a held secret (written in steps, so up to minutes behind) */
	lastVerifiedAt?: number;
}

export type { KeySection };

type Bag = Record<string, unknown>;
type SectionName = 'endpoints' | KeySection | 'missed' | 'cursor';

function section(data: Bag, name: SectionName): Bag {
	const value = data[name];
	return isRecord(value) ? value : {};
}

/** Writes one URL's entry of a section by assigning the top-level key, so n8n notices the change and saves it. */
function writeEntry(data: Bag, name: SectionName, url: string, value: unknown): void {
	const entries = { ...section(data, name) };
	if (value === undefined) {
		if (!(url in entries)) return;
		delete entries[url];
	} else entries[url] = value;
	data[name] = entries;
}

/**
 * One request's (or hook's) view of the static data of one endpoint: read once when it begins, and
 * written back, section by section, only where it changed (every write makes n8n save the whole
 * static data). The keys are not the view's: they are this process's memory of the endpoint, which
 * the saved keys join when the view is read, and which `writeBack` writes whole (once.ts says why).
 */
export class EndpointStore {
	/** the record (a copy: change it, then call `recordChanged`) */
	record: EndpointRecord | undefined;
	missed: MissedWindow | undefined;
	/** the cursor: the saved one, or this process's if it is newer */
	cursor: number | undefined;
	private readonly changed = new Set<SectionName>();
	/** the key sections as loaded, to write back only what differs */
	private readonly loaded: { known: unknown; deliveredOrders: unknown };

	private constructor(
		private readonly data: Bag,
		readonly url: string,
		private readonly memory: EndpointMemory,
	) {
		const record = section(data, 'endpoints')[url];
		this.record =
			isRecord(record) && typeof record.endpointId === 'number'
				? (JSON.parse(JSON.stringify(record)) as EndpointRecord)
				: undefined;
		const missed = section(data, 'missed')[url];
		this.missed =
			isRecord(missed) && typeof missed.endpointId === 'number'
				? ({ ...missed } as unknown as MissedWindow)
				: undefined;
		this.loaded = {
			known: section(data, 'known')[url],
			deliveredOrders: section(data, 'deliveredOrders')[url],
		};
		memory.known.join(KeySet.fromState(this.loaded.known));
		memory.deliveredOrders.join(KeySet.fromState(this.loaded.deliveredOrders));
		const cursor = section(data, 'cursor')[url];
		this.cursor = typeof cursor === 'number' && Number.isFinite(cursor) ? cursor : undefined;
	}

	/**
	 * Reads the endpoint's sections of `data`, with what this process's `memory` of the endpoint knows
	 * and a save may not have taken: its keys, its newer cursor, a notice it already showed (gone), when
	 * it last verified a delivery.
	 */
	static read(data: Bag, url: string, memory: EndpointMemory): EndpointStore {
		const store = new EndpointStore(data, url, memory);
		if (memory.cursor > (store.cursor ?? -Infinity)) store.setCursor(memory.cursor);
		const record = store.record;
		if (!record) return store;
		if (record.missedEvents && memory.shownNotices.has(record.missedEvents.reEnabledAt)) {
			delete record.missedEvents;
			store.changed.add('endpoints');
		}
		if (memory.lastVerifiedAt !== undefined) store.verifiedAt(memory.lastVerifiedAt);
		return store;
	}

	/** A delivery was verified at `ms`: the record says so once it moved VERIFIED_AT_STEP_MS. */
	verifiedAt(ms: number): void {
		const record = this.record;
		if (!record || ms - (record.lastVerifiedAt ?? 0) < VERIFIED_AT_STEP_MS) return;
		record.lastVerifiedAt = ms;
		this.changed.add('endpoints');
	}

	/**
	 * HMAC keys to verify with at `nowMs`: the record's secret, plus the previous one during the
	 * overlap. This process's memory of the endpoint keeps them set up, and only while the record
	 * holds their secrets, so a rotation or a deactivation leaves none behind.
	 */
	verificationKeys(nowMs: number): KeyObject[] {
		const record = this.record;
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
		const held = this.memory.signingKeys;
		const keys = new Map<string, KeyObject>();
		for (const secret of secrets) {
			try {
				keys.set(secret, held.get(secret) ?? signingKey(secret));
			} catch {
				// a malformed stored secret verifies nothing; the other one may still do
			}
		}
		this.memory.signingKeys = keys;
		return [...keys.values()];
	}

	/** True when `key` is in `known` (an accepted event, a caught-up order) and has not expired at `nowMs`. */
	isKnown(key: string, nowMs: number): boolean {
		return this.memory.known.has(key, nowMs);
	}

	/** True when the order key `key` is in `deliveredOrders` (its event ran; kept until the cursor passes it). */
	wasDelivered(key: string): boolean {
		return this.memory.deliveredOrders.includes(key);
	}

	/** Adds one key, to this process's memory: to `known` until it expires, or to `deliveredOrders` with its order's creation time. */
	add(one: KeyToSave): void {
		if (one.section === 'known') this.memory.known.keep(one.key, one.expiresAt);
		else this.memory.deliveredOrders.keep(one.key, one.createdAt);
	}

	/** Sets the cursor; this process's copy keeps the newest it reached. */
	setCursor(ms: number | undefined): void {
		this.cursor = ms;
		if (ms !== undefined) this.memory.cursor = Math.max(this.memory.cursor, ms);
		this.changed.add('cursor');
	}

	recordChanged(): void {
		this.changed.add('endpoints');
	}

	/** Removes the record (the endpoint is gone or deleted). */
	clearRecord(): void {
		this.record = undefined;
		this.changed.add('endpoints');
	}

	setMissed(window: MissedWindow | undefined): void {
		this.missed = window;
		this.changed.add('missed');
	}

	/**
	 * Writes what differs from what was loaded into the static data (n8n saves it when the request or
	 * hook ends): every key this process's memory holds, and what the view changed.
	 */
	writeBack(nowMs: number): void {
		const { data, url } = this;
		const { known, deliveredOrders } = this.memory;
		known.prune(nowMs);
		if (!known.isStoredAs(this.loaded.known)) writeEntry(data, 'known', url, known.toState());
		// an order is kept only until the cursor has passed it
		if (this.cursor !== undefined) deliveredOrders.prune(this.cursor);
		if (!deliveredOrders.isStoredAs(this.loaded.deliveredOrders))
			writeEntry(data, 'deliveredOrders', url, deliveredOrders.toState());
		if (this.changed.has('cursor')) writeEntry(data, 'cursor', url, this.cursor);
		if (this.changed.has('endpoints'))
			writeEntry(data, 'endpoints', url, this.record && JSON.parse(JSON.stringify(this.record)));
		if (this.changed.has('missed'))
			writeEntry(data, 'missed', url, this.missed && { ...this.missed });
		this.changed.clear();
	}
}

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
 * - key, seen, orders, cursor, pending keys: the facts that keep each event once, in the table
 *   at the top of once.ts (what each holds, for how long, who writes and reads it).
 * - missed window (`missed[url]`): a Disabled endpoint that deactivation deleted, told on the first
 *   event after the next activation.
 *
 * `endpoints` is removed on deactivation; the other sections stay, so a workflow published again picks
 * up where it stopped.
 */
import type { KeyObject } from 'node:crypto';

import { isRecord } from '../shared/isRecord';
import { signingKey } from '../shared/webhookVerifier';
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
type SectionName = 'endpoints' | KeySection | 'missed' | 'caughtUpTo';

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
 * One request's view of the static data of one endpoint: read once when the request begins, and
 * written back, section by section, only where it changed (every write makes n8n save the whole
 * static data). Activation code (with no process memory) uses it the same way.
 */
export class EndpointStore {
	/** the record (a copy: change it, then call `recordChanged`) */
	record: EndpointRecord | undefined;
	missed: MissedWindow | undefined;
	readonly seen: KeySet;
	readonly orders: KeySet;
	/** the cursor: the saved one, or this process's if it is newer */
	cursor: number | undefined;
	private readonly changed = new Set<SectionName>();

	private constructor(
		private readonly data: Bag,
		readonly url: string,
		private readonly memory: EndpointMemory | undefined,
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
		this.seen = KeySet.fromState(section(data, 'seen')[url]);
		this.orders = KeySet.fromState(section(data, 'orders')[url]);
		const cursor = section(data, 'caughtUpTo')[url];
		this.cursor = typeof cursor === 'number' && Number.isFinite(cursor) ? cursor : undefined;
	}

	/**
	 * Reads the endpoint's sections of `data`. With this process's `memory` of the endpoint, the view
	 * also holds what the process knows and a save has not taken yet: its newer cursor, a notice it
	 * already showed (gone), when it last verified a delivery; `isKnown` also answers from its pending keys.
	 */
	static read(
		data: Bag,
		url: string,
		memory?: EndpointMemory,
		confirm?: { nowMs: number; afterMs: number },
	): EndpointStore {
		const store = new EndpointStore(data, url, memory);
		if (!memory) return store;
		if (confirm) store.confirmPending(memory, confirm.nowMs - confirm.afterMs);
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

	/** Pending keys accepted before `acceptedBefore` that this copy holds are confirmed: no longer pending. */
	private confirmPending(memory: EndpointMemory, acceptedBefore: number): void {
		for (const [name, pending] of memory.pending) {
			if (pending.acceptedAt > acceptedBefore) continue;
			const held =
				pending.section === 'seen'
					? this.seen.has(pending.key, pending.expiresAt - 1)
					: this.orders.includes(pending.key) || (this.cursor ?? -Infinity) > pending.createdAt;
			if (held) memory.pending.delete(name);
		}
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
		const held = this.memory?.signingKeys ?? new Map<string, KeyObject>();
		const keys = new Map<string, KeyObject>();
		for (const secret of secrets) {
			try {
				keys.set(secret, held.get(secret) ?? signingKey(secret));
			} catch {
				// a malformed stored secret verifies nothing; the other one may still do
			}
		}
		if (this.memory) this.memory.signingKeys = keys;
		return [...keys.values()];
	}

	/** True when `key` ran: in `seen` until its expiry, in `orders` until the cursor passes it; or pending in this process. */
	isKnown(section: KeySection, key: string, nowMs: number): boolean {
		if (this.memory?.isPending(section, key, nowMs)) return true;
		return section === 'seen' ? this.seen.has(key, nowMs) : this.orders.includes(key);
	}

	/** Adds one key: to `seen` until it expires, or to `orders` with its order's creation time. */
	add(one: KeyToSave): void {
		const ms = one.section === 'seen' ? one.expiresAt : one.createdAt;
		if (this.keys(one.section).keep(one.key, ms)) this.changed.add(one.section);
	}

	setCursor(ms: number | undefined): void {
		this.cursor = ms;
		this.changed.add('caughtUpTo');
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
	 * Writes what changed into the static data (n8n saves it when the request or hook ends), with the
	 * keys this process has not confirmed yet.
	 */
	writeBack(nowMs: number): void {
		for (const pending of this.memory?.pending.values() ?? []) this.add(pending);
		const { data, url } = this;
		if (this.changed.has('seen')) {
			this.seen.prune(nowMs);
			writeEntry(data, 'seen', url, this.seen.toState());
		}
		if (this.changed.has('orders')) {
			// an order is kept only until the cursor has passed it
			if (this.cursor !== undefined) this.orders.prune(this.cursor);
			writeEntry(data, 'orders', url, this.orders.toState());
		}
		if (this.changed.has('caughtUpTo')) writeEntry(data, 'caughtUpTo', url, this.cursor);
		if (this.changed.has('endpoints'))
			writeEntry(data, 'endpoints', url, this.record && JSON.parse(JSON.stringify(this.record)));
		if (this.changed.has('missed'))
			writeEntry(data, 'missed', url, this.missed && { ...this.missed });
		this.changed.clear();
	}

	private keys(section: KeySection): KeySet {
		return section === 'seen' ? this.seen : this.orders;
	}
}

/** Keys kept at most; beyond it the keys that expire first are dropped first. */
export const DEFAULT_MAX_ENTRIES = 10_000;

/** Length of a key (once.ts `deliveryKey`: 72 bits of a SHA-256 digest in base64url). */
export const KEY_LENGTH = 12;

const MINUTE_MS = 60_000;
const KEY_PATTERN = /^[A-Za-z0-9_-]*$/;

export interface DedupState {
	v: 2;
	/** expiry minute (Unix minutes, base 36) -> the keys expiring then, concatenated */
	e: Record<string, string>;
}

/**
 * The keys by expiry minute, each bucket its keys concatenated as they are stored: loading a stored
 * copy, pruning it and saving it cost one step per minute, not per id, and a lookup is a string
 * search, so the work of a delivery does not grow with the number of ids kept.
 */
export class KeySet {
	/** expiry minute (Unix minutes, rounded up, so an id is never forgotten early) -> keys concatenated */
	private readonly buckets = new Map<number, string>();
	private count = 0;
	private index?: Map<string, number>;

	constructor(readonly maxEntries: number = DEFAULT_MAX_ENTRIES) {
		if (!(Number.isInteger(maxEntries) && maxEntries > 0))
			throw new RangeError('maxEntries must be a positive integer');
	}

	/** Rebuilds a store from its serialised state; malformed buckets are skipped. */
	static fromState(state: unknown, maxEntries: number = DEFAULT_MAX_ENTRIES): KeySet {
		const store = new KeySet(maxEntries);
		const e = state && typeof state === 'object' ? (state as { e?: unknown }).e : undefined;
		if (!e || typeof e !== 'object') return store;
		for (const [minuteText, keys] of Object.entries(e as Record<string, unknown>)) {
			const minute = parseInt(minuteText, 36);
			// a minute before 2160 (Unix minutes below 1e8): anything else is not a state this store wrote
			if (
				!Number.isSafeInteger(minute) ||
				minute <= 0 ||
				minute >= 1e8 ||
				minute.toString(36) !== minuteText
			)
				continue;
			if (
				typeof keys !== 'string' ||
				keys.length === 0 ||
				keys.length % KEY_LENGTH !== 0 ||
				!KEY_PATTERN.test(keys)
			)
				continue;
			store.buckets.set(minute, keys);
			store.count += keys.length / KEY_LENGTH;
		}
		store.trim();
		return store;
	}

	get size(): number {
		return this.count;
	}

	/** True when `key` is kept and has not expired at `nowMs`. */
	has(key: string, nowMs: number): boolean {
		const minute = this.expiryOf(key);
		return minute !== undefined && minute * MINUTE_MS > nowMs;
	}

	/** True when `key` is in the set, whatever its minute (`orders`: the minute is a creation time). */
	includes(key: string): boolean {
		return this.expiryOf(key) !== undefined;
	}

	/** Keeps `key` until at least `untilMs` (a later expiry it already has is kept); true if this store changed. */
	keep(key: string, untilMs: number): boolean {
		const changed = this.keepUntilMinute(key, Math.ceil(untilMs / MINUTE_MS));
		this.trim();
		return changed;
	}

	/** Drops the keys whose minute is at or before `nowMs`. */
	prune(nowMs: number): void {
		for (const [minute, keys] of [...this.buckets]) {
			if (minute * MINUTE_MS > nowMs) continue;
			this.dropKeys(minute, keys, '');
		}
	}

	toState(): DedupState {
		const e: Record<string, string> = {};
		for (const minute of this.sortedMinutes()) e[minute.toString(36)] = this.buckets.get(minute)!;
		return { v: 2, e };
	}

	/** The latest expiry minute of `key`, if it is stored. */
	private expiryOf(key: string): number | undefined {
		return this.minutes().get(key);
	}

	/**
	 * Every key's minute, made at the first lookup: a request looks up each key its process holds
	 * pending (about 15 s of traffic), which one string search each made grow with the set's size.
	 */
	private minutes(): Map<string, number> {
		if (this.index) return this.index;
		const index = new Map<string, number>();
		for (const [minute, keys] of this.buckets)
			for (let i = 0; i < keys.length; i += KEY_LENGTH) {
				const key = keys.slice(i, i + KEY_LENGTH);
				// a key stored under two minutes (a hand-edited state) counts with the later one
				if ((index.get(key) ?? -Infinity) < minute) index.set(key, minute);
			}
		return (this.index = index);
	}

	private keepUntilMinute(key: string, minute: number): boolean {
		const current = this.expiryOf(key);
		if (current !== undefined && current >= minute) return false;
		if (current !== undefined) {
			const keys = this.buckets.get(current)!;
			const at = indexOfKey(keys, key);
			const rest = keys.slice(0, at) + keys.slice(at + KEY_LENGTH);
			if (rest) this.buckets.set(current, rest);
			else this.buckets.delete(current);
			this.count--;
		}
		this.buckets.set(minute, (this.buckets.get(minute) ?? '') + key);
		this.index?.set(key, minute);
		this.count++;
		return true;
	}

	/** Replaces the keys of bucket `minute` by `kept` (a tail of them), forgetting the others. */
	private dropKeys(minute: number, keys: string, kept: string): void {
		if (kept) this.buckets.set(minute, kept);
		else this.buckets.delete(minute);
		this.count -= (keys.length - kept.length) / KEY_LENGTH;
		if (!this.index) return;
		for (let i = 0; i < keys.length - kept.length; i += KEY_LENGTH) {
			const key = keys.slice(i, i + KEY_LENGTH);
			if (this.index.get(key) === minute) this.index.delete(key);
		}
	}

	private sortedMinutes(): number[] {
		return [...this.buckets.keys()].sort((a, b) => a - b);
	}

	/** Beyond `maxEntries`, drops the keys that expire first. */
	private trim(): void {
		for (const minute of this.count > this.maxEntries ? this.sortedMinutes() : []) {
			const keys = this.buckets.get(minute)!;
			const over = (this.count - this.maxEntries) * KEY_LENGTH;
			if (over <= 0) return;
			this.dropKeys(minute, keys, over >= keys.length ? '' : keys.slice(over));
		}
	}
}

/** Where `key` starts in `keys` (concatenated keys), at a key boundary; -1 if absent. */
function indexOfKey(keys: string, key: string): number {
	for (let at = keys.indexOf(key); at >= 0; at = keys.indexOf(key, at + 1)) {
		if (at % KEY_LENGTH === 0) return at;
	}
	return -1;
}

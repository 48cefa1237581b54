/**
 * The store: what the trigger keeps in the workflow's static data (`getWorkflowStaticData('node')`),
 * one request's view of it (EndpointStore), and the key set its sections are made of (DedupStore).
 * Pure: no n8n imports, no clock of its own (callers pass times).
 *
 * Glossary (one word per thing, used the same way in every file of the trigger):
 * - endpoint: the webhook endpoint registered with the service for one webhook URL of the workflow.
 *   Everything in the static data is keyed by that URL, so the production URL and the test URL
 *   ("Listen for test event") never overwrite each other.
 * - record (`endpoints[url]`): the endpoint's id, signing secret(s), event types, the missed-events
 *   notice still to show, and when a delivery was last verified.
 * - key: 12 characters, the start of a SHA-256 digest: a delivery key (of the `webhook-id` header,
 *   which the service makes equal to the event's `id`) or an order key (of `order.created#<orderId>`).
 *   The item a run gets carries the event's own `id`, never a key.
 * - seen (`seen[url]`): keys of what ran: delivery keys, and order keys of caught-up orders. Each
 *   is kept until an expiry: as long as the service could still deliver that event again.
 * - orders (`orders[url]`): order keys of orders whose order.created delivery ran. Each is kept, with
 *   the order's creation time, until the cursor passes that time.
 * - cursor (`caughtUpTo[url]`, the service's clock, Unix ms): every order created before it ran or was
 *   caught up. This process's newest cursor is in its memory (memory.ts) until a save takes it.
 * - missed window (`missed[url]`): a Disabled endpoint that deactivation deleted, told on the first
 *   event after the next activation.
 * - pending key (memory.ts): a key this process accepted and has not yet confirmed: it goes into every
 *   static data this process writes, since a save of another process may have dropped it.
 * - confirmed: read back from the static data by a request that began TriggerSettings.confirmAfterMs
 *   after the key was accepted, when no older copy can be saved over it any more.
 *
 * `endpoints` is removed on deactivation; the other sections stay, so a workflow published again picks
 * up where it stopped.
 */
import { createHash, type KeyObject } from 'node:crypto';

import { isRecord } from '../shared/isRecord';
import { signingKey } from '../shared/webhookVerifier';
import type { EndpointMemory, KeySection, PendingKey } from './memory';

export const ORDER_CREATED = 'order.created';

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

/** The delivery key of a `webhook-id` (72 bits of its SHA-256: two of 10,000 keys collide with a probability of about 1e-14). */
export function deliveryKey(webhookId: string): string {
	return createHash('sha256').update(webhookId).digest('base64url').slice(0, KEY_LENGTH);
}

/** The order key of an order: kept once its order.created event ran or it was caught up. */
export function orderKey(orderId: unknown): string {
	return deliveryKey(`${ORDER_CREATED}#${String(orderId)}`);
}

/** Until when a delivery key accepted at `nowMs` is kept: as long as the service could send that event again. */
export function deliveryKeptUntil(eventCreatedAt: string, nowMs: number): number {
	return nowMs + retentionFor(nowMs - Date.parse(eventCreatedAt));
}

/** Until when a caught-up order's key is kept in `seen`: as long as the service may still deliver its event. */
export function caughtUpKeptUntil(createdAtMs: number, nowMs: number): number {
	// the service may deliver an event until its last retry, about 42 hours after it was created
	const retryHorizon =
		RETRY_GAPS_MS.reduce((sum, gap) => sum + gap, 0) + CLOCK_TOLERANCE_MS + RETENTION_SLACK_MS;
	const created = Number.isFinite(createdAtMs) ? createdAtMs : nowMs;
	return Math.max(created + retryHorizon, nowMs + retentionFor(Infinity));
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
	readonly seen: DedupStore;
	readonly orders: DedupStore;
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
		this.seen = DedupStore.fromState(section(data, 'seen')[url]);
		this.orders = DedupStore.fromState(section(data, 'orders')[url]);
		const cursor = section(data, 'caughtUpTo')[url];
		this.cursor = typeof cursor === 'number' && Number.isFinite(cursor) ? cursor : undefined;
	}

	/**
	 * Reads the endpoint's sections of `data`. With this process's `memory` of the endpoint, the view
	 * also holds what the process knows and a save has not taken yet: its newer cursor, a notice it
	 * already showed (gone), when it last verified a delivery; `ran` also answers from its pending keys.
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
					? this.seen.has(pending.key, pending.untilMs - 1)
					: this.orders.includes(pending.key) || (this.cursor ?? -Infinity) > pending.untilMs;
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
	ran(section: KeySection, key: string, nowMs: number): boolean {
		if (this.memory?.isPending(section, key, nowMs)) return true;
		return section === 'seen' ? this.seen.has(key, nowMs) : this.orders.includes(key);
	}

	/** Adds one key: to `seen` until `untilMs`, or to `orders` with its order's creation time. */
	add(key: Pick<PendingKey, 'section' | 'key' | 'untilMs'>): void {
		if (this.keys(key.section).keep(key.key, key.untilMs)) this.changed.add(key.section);
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

	private keys(section: KeySection): DedupStore {
		return section === 'seen' ? this.seen : this.orders;
	}
}

/*
 * The key set (DedupStore). The service's rule: receivers de-duplicate by webhook-id. A key is kept
 * only as long as the service could still send it again: the service retries an event only when an
 * attempt got no 2xx, each retry after a fixed gap (1 min, 5 min, 30 min, 2 h, 5 h, 10 h, 24 h), so a
 * key accepted at attempt k can come back only after the gap that follows attempt k. `retentionFor`
 * estimates k from the event's age, erring towards a later attempt (a longer gap); a duplicate that
 * does come back is kept again from its own arrival. Keeping keys by need instead of for a fixed 72
 * hours keeps the static data, which n8n writes whole, small: about (events per second x 15 minutes)
 * keys in steady traffic.
 *
 * Serialised form, 12 characters per key: `{ v: 2, e: { <expiry minute, base 36>: <keys concatenated> } }`.
 * In `orders` the minute is the order's creation time, not an expiry.
 */

/** Gaps after attempts 1..7 of a delivery (the service makes at most 8 attempts). */
export const RETRY_GAPS_MS: readonly number[] = [1, 5, 30, 120, 300, 600, 1440].map(
	(m) => m * 60_000,
);

/** The signature check accepts timestamps up to 5 minutes off, so clocks may differ by that much. */
export const CLOCK_TOLERANCE_MS = 5 * 60_000;

/** Added to every retention: delivery time, timeouts and queueing at the service. */
export const RETENTION_SLACK_MS = 10 * 60_000;

/** Keys kept at most; beyond it the keys that expire first are dropped first. */
export const DEFAULT_MAX_ENTRIES = 10_000;

/** Length of a key (`dedupKey`: 72 bits of a SHA-256 digest in base64url). */
export const KEY_LENGTH = 12;

const MINUTE_MS = 60_000;
const KEY_PATTERN = /^[A-Za-z0-9_-]*$/;

/**
 * How long a key accepted now must be kept, given the event's age (now minus its
 * `createdAt`): until the service's next attempt could arrive, plus slack. The attempt is taken as
 * the latest one the age allows (with the clock tolerance), never an earlier one, so the gap is
 * never too short. An age that cannot be read gets the longest retention.
 */
export function retentionFor(ageMs: number): number {
	const longest = RETRY_GAPS_MS[RETRY_GAPS_MS.length - 1] + RETENTION_SLACK_MS;
	if (!Number.isFinite(ageMs)) return longest;
	const age = Math.max(0, ageMs);
	let attemptStart = 0;
	for (const gap of RETRY_GAPS_MS) {
		if (age + CLOCK_TOLERANCE_MS < attemptStart + gap) return gap + RETENTION_SLACK_MS;
		attemptStart += gap;
	}
	return longest;
}

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
export class DedupStore {
	/** expiry minute (Unix minutes, rounded up, so an id is never forgotten early) -> keys concatenated */
	private readonly buckets = new Map<number, string>();
	private count = 0;
	/**
	 * key -> minute, built when a store takes part in an operation over many keys (`merge`, `uncovered`)
	 * or starts empty: one lookup is a string search, many are one map each (a save request merges
	 * about a second's keys into thousands; searching the strings for each made it 10-100 ms).
	 */
	private index?: Map<string, number>;

	constructor(readonly maxEntries: number = DEFAULT_MAX_ENTRIES) {
		if (!(Number.isInteger(maxEntries) && maxEntries > 0))
			throw new RangeError('maxEntries must be a positive integer');
		this.index = new Map();
	}

	/** Rebuilds a store from its serialised state; malformed buckets are skipped. */
	static fromState(state: unknown, maxEntries: number = DEFAULT_MAX_ENTRIES): DedupStore {
		const store = new DedupStore(maxEntries);
		store.index = undefined;
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

	/** Adds every key of `other` with the later of the two expiries; true if this store changed. */
	merge(other: DedupStore): boolean {
		this.buildIndex();
		let changed = false;
		for (const [key, minute] of other.entries())
			changed = this.keepUntilMinute(key, minute) || changed;
		this.trim();
		return changed;
	}

	/** The keys of `other` this set does not keep as long as `other` does. */
	uncovered(other: DedupStore): string[] {
		this.buildIndex();
		const keys: string[] = [];
		for (const [key, minute] of other.entries())
			if ((this.expiryOf(key) ?? -Infinity) < minute) keys.push(key);
		return keys;
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

	/** Every key with its expiry minute. */
	private *entries(): Generator<[string, number]> {
		for (const [minute, keys] of this.buckets) {
			for (let i = 0; i < keys.length; i += KEY_LENGTH)
				yield [keys.slice(i, i + KEY_LENGTH), minute];
		}
	}

	/** The latest expiry minute of `key`, if it is stored. */
	private expiryOf(key: string): number | undefined {
		if (this.index) return this.index.get(key);
		let latest: number | undefined;
		for (const [minute, keys] of this.buckets) {
			if ((latest === undefined || minute > latest) && indexOfKey(keys, key) >= 0) latest = minute;
		}
		return latest;
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

	private buildIndex(): void {
		if (this.index) return;
		const index = new Map<string, number>();
		for (const [minute, keys] of this.buckets)
			for (let i = 0; i < keys.length; i += KEY_LENGTH) {
				const key = keys.slice(i, i + KEY_LENGTH);
				// a key stored under two minutes (a hand-edited state) counts with the later one
				if ((index.get(key) ?? -Infinity) < minute) index.set(key, minute);
			}
		this.index = index;
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

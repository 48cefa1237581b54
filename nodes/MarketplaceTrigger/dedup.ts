/**
 * The store of accepted webhook-ids (the service's rule: receivers de-duplicate by webhook-id).
 *
 * Pure: no n8n imports, no clock of its own (callers pass times), JSON-serialisable state so the
 * trigger can keep it in the workflow's static data.
 *
 * An id is kept only as long as the service could still send it again: the service retries an
 * event only when an attempt got no 2xx, each retry after a fixed gap (1 min, 5 min, 30 min, 2 h,
 * 5 h, 10 h, 24 h), so an id accepted at attempt k can come back only after the gap that follows
 * attempt k. `retentionFor` estimates k from the event's age, erring towards a later attempt (a
 * longer gap); a duplicate that does come back is remembered again from its own arrival. Keeping
 * ids by need instead of for a fixed 72 hours keeps the store, which n8n writes whole with every
 * saved delivery, small: about (events per second x 15 minutes) ids in steady traffic.
 *
 * Serialised form, 12 characters per id: `{ v: 2, e: { <expiry minute, base 36>: <keys concatenated> } }`.
 */

/** Gaps after attempts 1..7 of a delivery (the service makes at most 8 attempts). */
export const RETRY_GAPS_MS: readonly number[] = [1, 5, 30, 120, 300, 600, 1440].map(
	(m) => m * 60_000,
);

/** The signature check accepts timestamps up to 5 minutes off, so clocks may differ by that much. */
export const CLOCK_TOLERANCE_MS = 5 * 60_000;

/** Added to every retention: delivery time, timeouts and queueing at the service. */
export const RETENTION_SLACK_MS = 10 * 60_000;

/** Ids kept at most; beyond it the ids that expire first are dropped first. */
export const DEFAULT_MAX_ENTRIES = 10_000;

/** Length of a key (`dedupKey`: 72 bits of a SHA-256 digest in base64url). */
export const KEY_LENGTH = 12;

const MINUTE_MS = 60_000;
const KEY_PATTERN = /^[A-Za-z0-9_-]*$/;

/**
 * How long an id accepted now must be remembered, given the event's age (now minus its
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

/** The keys concatenated in `text` (the serialised form), or none when it is malformed. */
export function splitKeys(text: unknown): string[] {
	if (typeof text !== 'string' || text.length % KEY_LENGTH !== 0 || !KEY_PATTERN.test(text))
		return [];
	const keys: string[] = [];
	for (let i = 0; i < text.length; i += KEY_LENGTH) keys.push(text.slice(i, i + KEY_LENGTH));
	return keys;
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

	constructor(readonly maxEntries: number = DEFAULT_MAX_ENTRIES) {
		if (!(Number.isInteger(maxEntries) && maxEntries > 0))
			throw new RangeError('maxEntries must be a positive integer');
	}

	/** Rebuilds a store from its serialised state; malformed buckets are skipped. */
	static fromState(state: unknown, maxEntries: number = DEFAULT_MAX_ENTRIES): DedupStore {
		const store = new DedupStore(maxEntries);
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

	/** True when `key` is remembered and has not expired at `nowMs`. */
	has(key: string, nowMs: number): boolean {
		const minute = this.expiryOf(key);
		return minute !== undefined && minute * MINUTE_MS > nowMs;
	}

	/** Remembers `key` until at least `untilMs` (a later expiry it already has is kept); true if this store changed. */
	remember(key: string, untilMs: number): boolean {
		const changed = this.keepUntilMinute(key, Math.ceil(untilMs / MINUTE_MS));
		this.trim();
		return changed;
	}

	/** Adds every key of `other` with the later of the two expiries; true if this store changed. */
	merge(other: DedupStore): boolean {
		let changed = false;
		for (const [key, minute] of other.entries())
			changed = this.keepUntilMinute(key, minute) || changed;
		this.trim();
		return changed;
	}

	/** The keys of `other` this store does not remember as long as `other` does. */
	uncovered(other: DedupStore): string[] {
		const keys: string[] = [];
		for (const [key, minute] of other.entries())
			if ((this.expiryOf(key) ?? -Infinity) < minute) keys.push(key);
		return keys;
	}

	/** Drops the ids expired at `nowMs`. */
	prune(nowMs: number): void {
		for (const [minute, keys] of [...this.buckets]) {
			if (minute * MINUTE_MS > nowMs) continue;
			this.buckets.delete(minute);
			this.count -= keys.length / KEY_LENGTH;
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
		this.count++;
		return true;
	}

	private sortedMinutes(): number[] {
		return [...this.buckets.keys()].sort((a, b) => a - b);
	}

	/** Beyond `maxEntries`, drops the ids that expire first. */
	private trim(): void {
		for (const minute of this.count > this.maxEntries ? this.sortedMinutes() : []) {
			const keys = this.buckets.get(minute)!;
			const over = (this.count - this.maxEntries) * KEY_LENGTH;
			if (over <= 0) return;
			if (over >= keys.length) {
				this.buckets.delete(minute);
				this.count -= keys.length / KEY_LENGTH;
			} else {
				this.buckets.set(minute, keys.slice(over));
				this.count -= over / KEY_LENGTH;
			}
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

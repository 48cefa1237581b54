/**
 * The key set the static data sections `known` and `deliveredOrders` are made of (once.ts says what
 * they hold), and each process's copy of them (memory.ts). Pure: no n8n imports, no clock of its own.
 */

/** Keys kept at most; beyond it the keys with the earliest minutes are dropped first. */
export const DEFAULT_MAX_ENTRIES = 10_000;

/** Length of a key (once.ts `deliveryKey`: 72 bits of a SHA-256 digest in base64url). */
export const KEY_LENGTH = 12;

const MINUTE_MS = 60_000;
const KEY_PATTERN = /^[A-Za-z0-9_-]*$/;

export interface DedupState {
	v: 2;
	/** minute (Unix minutes, base 36; KeySet says what it means) -> its keys, concatenated */
	e: Record<string, string>;
}

/**
 * Keys, each with a minute, the time after which `prune` may drop it: in `known` the minute it
 * expires (pruned by the clock), in `deliveredOrders` the minute its order was created (pruned by the
 * cursor) (once.ts). Stored by minute, each bucket its keys concatenated: loading a stored copy,
 * pruning it and saving it cost one step per minute, not per key; lookups go through an index of
 * every key, made once (a process's copy keeps it from request to request).
 */
export class KeySet {
	/** minute (Unix minutes, rounded up, so a key is never forgotten early) -> keys concatenated */
	private readonly buckets = new Map<number, string>();
	private count = 0;
	private index?: Map<string, number>;

	constructor(readonly maxEntries: number = DEFAULT_MAX_ENTRIES) {
		if (!(Number.isInteger(maxEntries) && maxEntries > 0))
			throw new RangeError('maxEntries must be a positive integer');
	}

	/** Rebuilds a set from its stored state; malformed buckets are skipped. */
	static fromState(state: unknown, maxEntries: number = DEFAULT_MAX_ENTRIES): KeySet {
		const set = new KeySet(maxEntries);
		const e = state && typeof state === 'object' ? (state as { e?: unknown }).e : undefined;
		if (!e || typeof e !== 'object') return set;
		for (const [minuteText, keys] of Object.entries(e as Record<string, unknown>)) {
			const minute = parseInt(minuteText, 36);
			// a minute before 2160 (Unix minutes below 1e8): anything else is not a state this set wrote
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
			set.buckets.set(minute, keys);
			set.count += keys.length / KEY_LENGTH;
		}
		set.trim();
		return set;
	}

	get size(): number {
		return this.count;
	}

	/** True when `key` is kept with a minute after `nowMs` (in `known`: it has not expired). */
	has(key: string, nowMs: number): boolean {
		const minute = this.minuteOf(key);
		return minute !== undefined && minute * MINUTE_MS > nowMs;
	}

	/** True when `key` is in the set, whatever its minute (`deliveredOrders`: the minute is a creation time). */
	includes(key: string): boolean {
		return this.minuteOf(key) !== undefined;
	}

	/** Keeps `key` with its minute at `atMs` or later (a later one it already has stays); true if the set changed. */
	keep(key: string, atMs: number): boolean {
		const changed = this.keepWithMinute(key, Math.ceil(atMs / MINUTE_MS));
		this.trim();
		return changed;
	}

	/**
	 * Adds the keys of `other` (each with the later of its two minutes). A bucket of `other` that
	 * starts this set's bucket of the same minute costs one comparison: keys are appended to a
	 * bucket, so a copy this set wrote earlier joins at that cost, however many keys it holds.
	 */
	join(other: KeySet): void {
		for (const [minute, keys] of other.buckets) {
			if (this.buckets.get(minute)?.startsWith(keys)) continue;
			for (let i = 0; i < keys.length; i += KEY_LENGTH)
				this.keepWithMinute(keys.slice(i, i + KEY_LENGTH), minute);
		}
		this.trim();
	}

	/** True when `state` (a stored state, as read) holds exactly these keys in the same order. */
	isStoredAs(state: unknown): boolean {
		const e = state && typeof state === 'object' ? (state as { e?: unknown }).e : undefined;
		if (!e || typeof e !== 'object') return this.count === 0;
		const stored = e as Record<string, unknown>;
		if (Object.keys(stored).length !== this.buckets.size) return false;
		for (const [minute, keys] of this.buckets)
			if (stored[minute.toString(36)] !== keys) return false;
		return true;
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

	/** The (latest) minute of `key`, if it is stored. */
	private minuteOf(key: string): number | undefined {
		return this.minutes().get(key);
	}

	/**
	 * Every key's minute, made at the first lookup and kept up to date after it: a process's copy
	 * (memory.ts) keeps it from request to request, so a lookup does not grow with the set's size.
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

	private keepWithMinute(key: string, minute: number): boolean {
		const current = this.minuteOf(key);
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

	/** Beyond `maxEntries`, drops the keys with the earliest minutes first. */
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

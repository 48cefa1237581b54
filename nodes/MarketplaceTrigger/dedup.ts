/**
 * A bounded store of accepted webhook-ids (spec 6.4.5: receivers de-duplicate by webhook-id).
 *
 * Pure: no n8n imports, no clock of its own (callers pass `nowMs`), JSON-serialisable state so the
 * trigger can keep it in the workflow's static data and survive an n8n restart.
 *
 * - An id is remembered for `retentionMs` after it was accepted (default 72 h, beyond the ~42 h
 *   retry horizon of 6.4.2 plus the 5-minute timestamp tolerance).
 * - At most `maxEntries` ids are kept (default 10,000); when full, the oldest is dropped first.
 * - `merge` unions two stores, so a copy overwritten by a concurrent save can be repaired from
 *   another copy (process memory) without losing ids.
 */

export interface DedupOptions {
	/** largest number of ids kept; the oldest is dropped first */
	maxEntries: number;
	/** how long an accepted id is remembered, in milliseconds */
	retentionMs: number;
}

export const DEFAULT_DEDUP_OPTIONS: DedupOptions = {
	maxEntries: 10_000,
	retentionMs: 72 * 3_600_000,
};

/** Serialised form: parallel arrays, oldest first (compact in static data, order-preserving). */
export interface DedupState {
	ids: string[];
	/** acceptance time of each id, Unix milliseconds */
	at: number[];
}

export class DedupStore {
	/** id -> acceptance time; Map iteration order is insertion order, i.e. oldest first */
	private readonly entries = new Map<string, number>();

	readonly options: DedupOptions;

	constructor(options: Partial<DedupOptions> = {}) {
		this.options = { ...DEFAULT_DEDUP_OPTIONS, ...options };
		if (!(Number.isInteger(this.options.maxEntries) && this.options.maxEntries > 0)) {
			throw new RangeError('maxEntries must be a positive integer');
		}
		if (!(this.options.retentionMs > 0)) throw new RangeError('retentionMs must be positive');
	}

	/** Rebuilds a store from its serialised state; malformed input gives an empty store. */
	static fromState(state: unknown, options: Partial<DedupOptions> = {}): DedupStore {
		const store = new DedupStore(options);
		if (state && typeof state === 'object') {
			const { ids, at } = state as Partial<DedupState>;
			if (Array.isArray(ids) && Array.isArray(at) && ids.length === at.length) {
				const pairs: Array<[string, number]> = [];
				for (let i = 0; i < ids.length; i++) {
					if (typeof ids[i] === 'string' && typeof at[i] === 'number' && Number.isFinite(at[i])) {
						pairs.push([ids[i], at[i]]);
					}
				}
				store.addAll(pairs);
			}
		}
		return store;
	}

	get size(): number {
		return this.entries.size;
	}

	/** True when `id` was accepted and has not yet expired at `nowMs`. */
	has(id: string, nowMs: number): boolean {
		const at = this.entries.get(id);
		return at !== undefined && nowMs - at < this.options.retentionMs;
	}

	/** Records `id` as accepted at `nowMs` (an id already present keeps its first time). */
	add(id: string, nowMs: number): void {
		if (this.entries.has(id) && !this.has(id, nowMs)) this.entries.delete(id);
		if (!this.entries.has(id)) this.addAll([[id, nowMs]]);
		this.prune(nowMs);
	}

	/** Adds every id of `other` (keeping the earlier time of an id present in both). */
	merge(other: DedupStore): void {
		const times = new Map(this.entries);
		for (const [id, at] of other.entries) {
			const mine = times.get(id);
			if (mine === undefined || at < mine) times.set(id, at);
		}
		// stable sort by time: equal times keep this store's order first
		const all = [...times].sort((a, b) => a[1] - b[1]);
		this.entries.clear();
		for (const [id, at] of all) this.entries.set(id, at);
		this.trim();
	}

	/** Drops expired ids and, beyond `maxEntries`, the oldest ones. */
	prune(nowMs: number): void {
		for (const [id, at] of this.entries) {
			if (nowMs - at >= this.options.retentionMs) this.entries.delete(id);
		}
		this.trim();
	}

	toState(): DedupState {
		const ids: string[] = [];
		const at: number[] = [];
		for (const [id, time] of this.entries) {
			ids.push(id);
			at.push(time);
		}
		return { ids, at };
	}

	/** Inserts pairs keeping the map ordered by time (oldest first), then enforces the bound. */
	private addAll(pairs: Array<[string, number]>): void {
		if (pairs.length === 0) return;
		const last = this.lastTime();
		const inOrder = pairs.every((p, i) => (i === 0 ? p[1] >= last : p[1] >= pairs[i - 1][1]));
		if (inOrder) {
			for (const [id, at] of pairs) if (!this.entries.has(id)) this.entries.set(id, at);
		} else {
			const all = [...this.entries, ...pairs.filter(([id]) => !this.entries.has(id))];
			// stable sort: equal times keep their relative order
			all.sort((a, b) => a[1] - b[1]);
			this.entries.clear();
			for (const [id, at] of all) if (!this.entries.has(id)) this.entries.set(id, at);
		}
		this.trim();
	}

	private lastTime(): number {
		let last = -Infinity;
		for (const at of this.entries.values()) last = at;
		return last;
	}

	private trim(): void {
		let excess = this.entries.size - this.options.maxEntries;
		if (excess <= 0) return;
		for (const id of this.entries.keys()) {
			if (excess-- <= 0) break;
			this.entries.delete(id);
		}
	}
}

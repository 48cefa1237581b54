/**
 * One request's view of what the static data holds for its endpoint: loaded once per request,
 * united with what this process knows (memory.ts), and written back only where it changed (every
 * write makes n8n save the whole static data). Pure: no n8n imports.
 */
import type { DedupStore } from './dedup';
import type { EndpointMemory } from './memory';
import {
	getCaughtUpTo,
	getRecord,
	loadOrders,
	loadSeen,
	saveOrders,
	saveSeen,
	setCaughtUpTo,
	setRecord,
	type EndpointRecord,
} from './state';

/** The time of the last verified delivery is saved when it moved this far (each save writes the whole static data). */
const VERIFIED_AT_STEP_MS = 10 * 60_000;

type Bag = Record<string, unknown>;
/** `ids`: webhook-ids and caught-up orders (`seen`); `orders`: orders whose event was accepted. */
type Kind = 'ids' | 'orders';

export class StoredEndpoint {
	/** the endpoint record (a copy: change it, then call `recordChanged`) */
	record: EndpointRecord | undefined;
	/** accepted webhook-ids and caught-up orders (see also `knows`) */
	readonly seen: DedupStore;
	/** orders whose order.created event was accepted and that no catch-up window has passed yet */
	readonly orders: DedupStore;
	/** every order created before this (the service's clock, Unix ms) ran or was caught up */
	caughtUpTo: number | undefined;
	private readonly changed = new Set<Kind | 'record' | 'cursor'>();

	constructor(
		private readonly data: Bag,
		readonly url: string,
	) {
		this.record = getRecord(data, url);
		this.seen = loadSeen(data, url);
		this.orders = loadOrders(data, url);
		this.caughtUpTo = getCaughtUpTo(data, url);
	}

	/**
	 * Unites the stored state with what this process knows, as of `nowMs`: the keys it accepted and
	 * no sync has stored yet (so a save of this request keeps them), its catch-up cursor, the notice
	 * it already showed and when it last verified a delivery. Costs one step per key not yet stored
	 * and per expiry minute, not per id kept.
	 */
	absorb(memory: EndpointMemory, nowMs: number): void {
		for (const entry of memory.pending.values()) if (!entry.stored) this.remember(entry);
		this.seen.prune(nowMs);
		if (memory.caughtUpTo > (this.caughtUpTo ?? -Infinity)) this.setCaughtUpTo(memory.caughtUpTo);
		// an order is kept only until a catch-up window has passed it
		if (this.caughtUpTo !== undefined) this.orders.prune(this.caughtUpTo);
		const record = this.record;
		if (!record) return;
		if (record.missedEvents && memory.shownNotices.has(record.missedEvents.reEnabledAt)) {
			delete record.missedEvents;
			this.changed.add('record');
		}
		const verified = memory.lastVerifiedAt;
		if (verified !== undefined && verified - (record.lastVerifiedAt ?? 0) >= VERIFIED_AT_STEP_MS) {
			record.lastVerifiedAt = verified;
			this.changed.add('record');
		}
	}

	/** True when `key` of `kind` is stored here or held by this process: a duplicate, or an order already run. */
	knows(memory: EndpointMemory, kind: Kind, key: string, nowMs: number): boolean {
		if (memory.holds(kind, key, nowMs)) return true;
		return kind === 'ids' ? this.seen.has(key, nowMs) : this.orders.has(key, -Infinity);
	}

	private storeOf(kind: Kind): DedupStore {
		return kind === 'ids' ? this.seen : this.orders;
	}

	/** Adds the keys of `keys` to the store of `kind`. */
	add(kind: Kind, keys: DedupStore): void {
		if (this.storeOf(kind).merge(keys)) this.changed.add(kind);
	}

	/**
	 * Remembers an accepted key in the store its kind names: an id (or a caught-up order) until
	 * `untilMs`; an order whose event was accepted until a catch-up window passes its creation, `untilMs`.
	 */
	remember({ key, kind, untilMs }: { key: string; kind: Kind; untilMs: number }): void {
		if (this.storeOf(kind).remember(key, untilMs)) this.changed.add(kind);
	}

	setCaughtUpTo(ms: number | undefined): void {
		this.caughtUpTo = ms;
		this.changed.add('cursor');
	}

	recordChanged(): void {
		this.changed.add('record');
	}

	/** Writes what changed back into the static data. */
	save(): void {
		if (this.changed.has('ids')) saveSeen(this.data, this.url, this.seen);
		if (this.changed.has('orders')) saveOrders(this.data, this.url, this.orders);
		if (this.changed.has('cursor')) setCaughtUpTo(this.data, this.url, this.caughtUpTo);
		if (this.changed.has('record') && this.record) setRecord(this.data, this.url, this.record);
		this.changed.clear();
	}
}

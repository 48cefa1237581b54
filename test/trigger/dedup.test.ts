/**
 * The pure dedup store of the Marketplace Trigger: retention, bound (oldest dropped first),
 * JSON round trip, merge of two copies, tolerance of malformed state.
 */
import fc from 'fast-check';

import { DedupStore, DEFAULT_DEDUP_OPTIONS } from '../../nodes/MarketplaceTrigger/dedup';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 1);

test('defaults: 10,000 ids, remembered at least 48 hours (the ~42 h retry horizon)', () => {
	expect(DEFAULT_DEDUP_OPTIONS.maxEntries).toBe(10_000);
	expect(DEFAULT_DEDUP_OPTIONS.retentionMs).toBeGreaterThanOrEqual(48 * HOUR);
	const store = new DedupStore();
	store.add('evt_1', T0);
	expect(store.has('evt_1', T0 + 48 * HOUR)).toBe(true);
	expect(store.has('evt_2', T0)).toBe(false);
});

test('an id expires after the retention and is pruned', () => {
	const store = new DedupStore({ retentionMs: 10 * HOUR });
	store.add('a', T0);
	store.add('b', T0 + 5 * HOUR);
	expect(store.has('a', T0 + 10 * HOUR - 1)).toBe(true);
	expect(store.has('a', T0 + 10 * HOUR)).toBe(false);
	store.prune(T0 + 10 * HOUR);
	expect(store.toState()).toEqual({ ids: ['b'], at: [T0 + 5 * HOUR] });
});

test('bounded: beyond maxEntries the oldest ids are dropped first', () => {
	const store = new DedupStore({ maxEntries: 3 });
	for (let i = 1; i <= 5; i++) store.add(`id${i}`, T0 + i);
	expect(store.size).toBe(3);
	expect(store.toState().ids).toEqual(['id3', 'id4', 'id5']);
	expect(store.has('id1', T0 + 10)).toBe(false);
	expect(store.has('id5', T0 + 10)).toBe(true);
});

test('re-adding a known id keeps its first time (no refresh, no duplicate entry)', () => {
	const store = new DedupStore({ retentionMs: 10 * HOUR });
	store.add('a', T0);
	store.add('a', T0 + 9 * HOUR);
	expect(store.toState()).toEqual({ ids: ['a'], at: [T0] });
});

test('state round trip through JSON, as kept in workflow static data', () => {
	const store = new DedupStore();
	store.add('x', T0);
	store.add('y', T0 + 1);
	const copy = DedupStore.fromState(JSON.parse(JSON.stringify(store.toState())));
	expect(copy.has('x', T0 + 2)).toBe(true);
	expect(copy.has('y', T0 + 2)).toBe(true);
	expect(copy.toState()).toEqual(store.toState());
});

test('malformed state gives an empty store, bad pairs are skipped', () => {
	for (const bad of [undefined, null, 7, 'x', [], { ids: ['a'] }, { ids: ['a', 'b'], at: [1] }]) {
		expect(DedupStore.fromState(bad).size).toBe(0);
	}
	const partly = DedupStore.fromState({ ids: ['a', 5, 'c'], at: [T0, T0, 'no'] });
	expect(partly.toState()).toEqual({ ids: ['a'], at: [T0] });
});

test('merge unites two copies (a save overwritten by a concurrent one loses nothing), oldest first', () => {
	const a = new DedupStore();
	a.add('one', T0 + 1);
	a.add('three', T0 + 3);
	const b = new DedupStore();
	b.add('two', T0 + 2);
	b.add('three', T0 + 0);
	a.merge(b);
	expect(a.toState()).toEqual({ ids: ['three', 'one', 'two'], at: [T0, T0 + 1, T0 + 2] });
	const state = a.toState();
	expect(new Set(state.ids)).toEqual(new Set(['one', 'two', 'three']));
	expect(state.at).toEqual([...state.at].sort((x, y) => x - y));
	expect(state.at[state.ids.indexOf('three')]).toBe(T0);
});

test('invalid options are refused', () => {
	expect(() => new DedupStore({ maxEntries: 0 })).toThrow(RangeError);
	expect(() => new DedupStore({ retentionMs: 0 })).toThrow(RangeError);
});

test('property: a store behaves like a model (bounded, time-ordered, recent ids remembered)', () => {
	const op = fc.record({ id: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g'), dt: fc.integer({ min: 0, max: 3 * HOUR }) });
	fc.assert(
		fc.property(fc.array(op, { maxLength: 60 }), fc.integer({ min: 1, max: 5 }), (ops, maxEntries) => {
			const retentionMs = 5 * HOUR;
			const store = new DedupStore({ maxEntries, retentionMs });
			// model: insertion-ordered map id -> time, pruned by age then trimmed from the oldest
			let model: Array<[string, number]> = [];
			let now = T0;
			for (const { id, dt } of ops) {
				now += dt;
				const alive = model.find(([m, at]) => m === id && now - at < retentionMs);
				if (!alive) {
					model = model.filter(([m]) => m !== id);
					model.push([id, now]);
				}
				model = model.filter(([, at]) => now - at < retentionMs);
				if (model.length > maxEntries) model = model.slice(model.length - maxEntries);
				store.add(id, now);
				expect(store.toState()).toEqual({ ids: model.map(([m]) => m), at: model.map(([, at]) => at) });
				expect(store.size).toBeLessThanOrEqual(maxEntries);
				expect(store.has(id, now)).toBe(true);
			}
		}),
	);
});

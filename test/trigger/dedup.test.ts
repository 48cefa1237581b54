/**
 * The pure id store of the Marketplace Trigger: retention by the service's retry schedule, the
 * bound (ids expiring first dropped first), the compact JSON form, tolerance
 * of malformed state.
 */
import fc from 'fast-check';

import { KeySet, DEFAULT_MAX_ENTRIES, KEY_LENGTH } from '../../nodes/MarketplaceTrigger/keySet';
import {
	CLOCK_TOLERANCE_MS,
	RETENTION_SLACK_MS,
	RETRY_GAPS_MS,
	retentionFor,
} from '../../nodes/MarketplaceTrigger/once';
import { EndpointStore } from '../../nodes/MarketplaceTrigger/store';
import { deliveryKey } from '../../nodes/MarketplaceTrigger/once';
import { EndpointMemory } from '../../nodes/MarketplaceTrigger/memory';

const MIN = 60_000;
const HOUR = 60 * MIN;
const T0 = Date.UTC(2026, 0, 1);
const key = (n: number) => deliveryKey(`evt_${n}`);

test("the retry schedule is the service's: 1 min, 5 min, 30 min, 2 h, 5 h, 10 h, 24 h", () => {
	expect(RETRY_GAPS_MS).toEqual([
		1 * MIN,
		5 * MIN,
		30 * MIN,
		2 * HOUR,
		5 * HOUR,
		10 * HOUR,
		24 * HOUR,
	]);
});

test("retentionFor: the gap after the latest attempt the event's age allows, plus slack", () => {
	// attempt start times: 0, 1 min, 6 min, 36 min, 2 h 36, 7 h 36, 17 h 36, 41 h 36; the receiver's
	// clock may be up to 5 minutes behind, so a fresh event may already be at its second attempt
	expect(retentionFor(0)).toBe(5 * MIN + RETENTION_SLACK_MS);
	expect(retentionFor(-HOUR)).toBe(5 * MIN + RETENTION_SLACK_MS);
	expect(retentionFor(6 * MIN - CLOCK_TOLERANCE_MS - 1)).toBe(5 * MIN + RETENTION_SLACK_MS);
	expect(retentionFor(6 * MIN - CLOCK_TOLERANCE_MS)).toBe(30 * MIN + RETENTION_SLACK_MS);
	expect(retentionFor(36 * MIN)).toBe(2 * HOUR + RETENTION_SLACK_MS);
	expect(retentionFor(17 * HOUR)).toBe(10 * HOUR + RETENTION_SLACK_MS);
	expect(retentionFor(17 * HOUR + 31 * MIN)).toBe(24 * HOUR + RETENTION_SLACK_MS);
	expect(retentionFor(100 * HOUR)).toBe(24 * HOUR + RETENTION_SLACK_MS);
	expect(retentionFor(NaN)).toBe(24 * HOUR + RETENTION_SLACK_MS);
});

test("property: an id is still remembered when the service's next attempt arrives (clock off by up to 5 min)", () => {
	const starts = RETRY_GAPS_MS.reduce<number[]>(
		(acc, gap) => [...acc, acc[acc.length - 1] + gap],
		[0],
	);
	fc.assert(
		fc.property(
			fc.integer({ min: 0, max: 6 }),
			fc.integer({ min: 0, max: 10 * MIN }),
			fc.integer({ min: -CLOCK_TOLERANCE_MS, max: CLOCK_TOLERANCE_MS }),
			fc.integer({ min: 0, max: 10_000 }),
			(attempt, delay, skew, late) => {
				// accepted at `attempt` (0-based), which went out `delay` after its scheduled time; the
				// receiver's clock is `skew` off the service's
				const acceptedAt = T0 + starts[attempt] + delay + skew;
				const nextAttemptAt = T0 + starts[attempt] + delay + RETRY_GAPS_MS[attempt] + late;
				const store = new KeySet();
				store.keep('k'.repeat(KEY_LENGTH), acceptedAt + retentionFor(acceptedAt - T0));
				expect(store.has('k'.repeat(KEY_LENGTH), nextAttemptAt + skew)).toBe(true);
			},
		),
	);
});

test('remember keeps the later expiry; has() is false from the expiry on; prune drops expired ids', () => {
	const store = new KeySet();
	store.keep(key(1), T0 + 10 * MIN);
	store.keep(key(1), T0 + 5 * MIN);
	store.keep(key(2), T0 + 20 * MIN);
	expect(store.has(key(1), T0 + 10 * MIN - 1)).toBe(true);
	expect(store.has(key(1), T0 + 10 * MIN)).toBe(false);
	expect(store.has(key(3), T0)).toBe(false);
	store.prune(T0 + 10 * MIN);
	expect(store.size).toBe(1);
	expect(store.has(key(2), T0 + 10 * MIN)).toBe(true);
});

test('bounded: beyond maxEntries the ids that expire first are dropped first', () => {
	const store = new KeySet(3);
	store.keep(key(1), T0 + 50 * MIN);
	store.keep(key(2), T0 + 10 * MIN);
	store.keep(key(3), T0 + 30 * MIN);
	store.keep(key(4), T0 + 40 * MIN);
	expect(store.size).toBe(3);
	expect(store.has(key(2), T0)).toBe(false);
	for (const n of [1, 3, 4]) expect(store.has(key(n), T0)).toBe(true);
	expect(DEFAULT_MAX_ENTRIES).toBe(10_000);
});

test('compact JSON form: 12 characters per id, grouped by expiry minute; round trip', () => {
	const store = new KeySet();
	for (let n = 0; n < 100; n++) store.keep(key(n), T0 + (n % 2 === 0 ? 11 : 70) * MIN);
	const state = JSON.parse(JSON.stringify(store.toState()));
	expect(state.v).toBe(2);
	expect(Object.keys(state.e)).toHaveLength(2);
	expect(Object.values(state.e as Record<string, string>).join('')).toHaveLength(100 * KEY_LENGTH);
	// about 12 bytes per id plus a few per minute
	expect(JSON.stringify(state).length).toBeLessThan(100 * KEY_LENGTH + 60);
	const copy = KeySet.fromState(state);
	expect(copy.toState()).toEqual(store.toState());
	expect(copy.has(key(0), T0 + 11 * MIN - 1)).toBe(true);
	expect(copy.has(key(0), T0 + 11 * MIN)).toBe(false);
	expect(copy.has(key(1), T0 + 69 * MIN)).toBe(true);
});

test('malformed state gives an empty store; malformed buckets are skipped', () => {
	for (const bad of [
		undefined,
		null,
		7,
		'x',
		[],
		{ ids: ['a'] },
		{ e: 5 },
		{ e: { zz: 'short' } },
		{ e: { '1': 'a b c d e f g h' } },
	]) {
		expect(KeySet.fromState(bad).size).toBe(0);
	}
	const good = key(1);
	const partly = KeySet.fromState({
		v: 2,
		e: { notanumber: good, [Math.ceil((T0 + HOUR) / MIN).toString(36)]: good, x1: 12 },
	});
	expect(partly.size).toBe(1);
	expect(partly.has(good, T0)).toBe(true);
});

test('invalid options are refused', () => {
	expect(() => new KeySet(0)).toThrow(RangeError);
	expect(() => new KeySet(1.5)).toThrow(RangeError);
});

test('property: a store behaves like a model (bounded, expiries kept, earliest expiry dropped first)', () => {
	const op = fc.record({
		id: fc.integer({ min: 0, max: 6 }),
		keepMin: fc.integer({ min: 1, max: 120 }),
		dtMin: fc.integer({ min: 0, max: 30 }),
	});
	fc.assert(
		fc.property(
			fc.array(op, { maxLength: 60 }),
			fc.integer({ min: 1, max: 5 }),
			(ops, maxEntries) => {
				const store = new KeySet(maxEntries);
				const model = new Map<string, number>();
				let now = T0;
				for (const { id, keepMin, dtMin } of ops) {
					now += dtMin * MIN;
					store.prune(now);
					for (const [k, until] of model) if (until <= now) model.delete(k);
					const until = now + keepMin * MIN;
					model.set(key(id), Math.max(model.get(key(id)) ?? 0, until));
					store.keep(key(id), until);
					while (model.size > maxEntries) {
						const first = Math.min(...model.values());
						// several ids may share the earliest expiry minute: the store drops one of them
						const victims = [...model].filter(([, t]) => t === first).map(([k]) => k);
						const dropped = victims.find((k) => !store.has(k, now)) ?? victims[0];
						model.delete(dropped);
					}
					expect(store.size).toBe(model.size);
					for (const [k] of model) expect(store.has(k, now)).toBe(true);
					expect(store.has(key(id), now) || model.size === maxEntries).toBe(true);
				}
			},
		),
	);
});

/** Keeps `keys[id]` in `set` until minute `min` after T0, for each of `keeps`; returns `set`. */
const keepAll = (set: KeySet, keys: string[], keeps: Array<{ id: number; min: number }>) => {
	for (const { id, min } of keeps) set.keep(keys[id], T0 + min * MIN);
	return set;
};

/** Whether `set` has each of `keys` at each minute from T0 to T0 + `minutes`, as `has` answers. */
const keptAt = (set: KeySet, keys: string[], minutes: number) =>
	Array.from({ length: minutes * keys.length }, (_, i) =>
		set.has(keys[i % keys.length], T0 + Math.floor(i / keys.length) * MIN),
	);

test('join: the union of two sets, each key with the later of its minutes; isStoredAs tells a stored copy that differs', () => {
	const a = new KeySet();
	const b = new KeySet();
	a.keep(key(1), T0 + 10 * MIN);
	a.keep(key(2), T0 + 10 * MIN);
	b.keep(key(2), T0 + 20 * MIN);
	b.keep(key(3), T0 + 5 * MIN);
	const bStored = b.toState();
	a.join(b);
	expect(a.size).toBe(3);
	expect(a.has(key(2), T0 + 15 * MIN)).toBe(true);
	expect(a.has(key(3), T0 + 4 * MIN)).toBe(true);
	expect(a.isStoredAs(bStored)).toBe(false);
	expect(a.isStoredAs(JSON.parse(JSON.stringify(a.toState())))).toBe(true);
	expect(new KeySet().isStoredAs(undefined)).toBe(true);
	expect(a.isStoredAs(undefined)).toBe(false);
});

test("property: joining two sets equals keeping every key of both in one (the process's copy loses no key)", () => {
	const keys = Array.from({ length: 21 }, (_, id) => key(id));
	const keeps = fc.array(
		fc.record({ id: fc.integer({ min: 0, max: 20 }), min: fc.integer({ min: 1, max: 60 }) }),
		{ maxLength: 30 },
	);
	fc.assert(
		fc.property(keeps, keeps, (left, right) => {
			const a = keepAll(new KeySet(), keys, left);
			const both = keepAll(new KeySet(), keys, [...left, ...right]);
			a.join(keepAll(new KeySet(), keys, right));
			expect(a.size).toBe(both.size);
			expect(keptAt(a, keys, 62)).toEqual(keptAt(both, keys, 62));
		}),
	);
});

test('property: joining a stored copy of an earlier state of the same set, kept on from there, equals keeping every key of both', () => {
	const keys = Array.from({ length: 21 }, (_, id) => key(id));
	const keep = fc.record({
		id: fc.integer({ min: 0, max: 20 }),
		min: fc.integer({ min: 1, max: 6 }),
	});
	fc.assert(
		fc.property(
			fc.array(keep, { maxLength: 20 }),
			fc.array(keep, { maxLength: 20 }),
			fc.array(keep, { maxLength: 20 }),
			(before, mine, theirs) => {
				// a process's copy and a save it wrote earlier, which another request then kept keys in
				const a = keepAll(new KeySet(), keys, before);
				const b = KeySet.fromState(JSON.parse(JSON.stringify(a.toState())));
				const both = keepAll(new KeySet(), keys, [...before, ...mine, ...theirs]);
				keepAll(a, keys, mine);
				a.join(keepAll(b, keys, theirs));
				expect(a.size).toBe(both.size);
				expect(keptAt(a, keys, 8)).toEqual(keptAt(both, keys, 8));
			},
		),
	);
});

test("EndpointStore with this process's memory: keys another process saved are kept, and a key a save dropped is written again", () => {
	const memory = new EndpointMemory('url');
	const saved = (data: Record<string, unknown>) =>
		KeySet.fromState((data.known as Record<string, unknown> | undefined)?.url);
	// another process saved key 1
	const fromOther = new KeySet();
	fromOther.keep(key(1), T0 + 30 * MIN);
	const data: Record<string, unknown> = { known: { url: fromOther.toState() } };
	const first = EndpointStore.read(data, 'url', memory);
	first.add({ section: 'known', key: key(2), expiresAt: T0 + 30 * MIN });
	first.writeBack(T0);
	expect(saved(data).has(key(1), T0)).toBe(true);
	expect(saved(data).has(key(2), T0)).toBe(true);
	// a save of an older copy (only key 1) overwrites it; the next request of this process puts key 2 back
	data.known = { url: fromOther.toState() };
	EndpointStore.read(data, 'url', memory).writeBack(T0);
	expect(saved(data).has(key(2), T0)).toBe(true);
	// nothing differs from what was loaded: nothing is written, so n8n has nothing to save
	const unchanged = { known: data.known };
	EndpointStore.read(unchanged, 'url', memory).writeBack(T0);
	expect(unchanged.known).toBe(data.known);
	// keys leave only when they expire
	EndpointStore.read(data, 'url', memory).writeBack(T0 + 31 * MIN);
	expect(saved(data).size).toBe(0);
});

test('signing keys: set up once per secret, and only while the record holds the secret (a rotation leaves none behind)', () => {
	const memory = new EndpointMemory('https://n8n.example.com/webhook/x/webhook');
	const first = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
	const second = `whsec_${Buffer.alloc(32, 2).toString('base64')}`;
	const data: Record<string, unknown> = {
		endpoints: { [memory.url]: { endpointId: 1, secret: first, eventTypes: [] } },
	};
	const [key] = EndpointStore.read(data, memory.url, memory).verificationKeys(0);
	expect(EndpointStore.read(data, memory.url, memory).verificationKeys(0)).toEqual([key]);
	expect(EndpointStore.read(data, memory.url, memory).verificationKeys(0)[0]).toBe(key);
	// rotated: the previous secret during its overlap, then the new one alone
	data.endpoints = {
		[memory.url]: {
			endpointId: 1,
			secret: second,
			previousSecret: first,
			previousSecretUntil: 1_000,
			eventTypes: [],
		},
	};
	const during = EndpointStore.read(data, memory.url, memory).verificationKeys(500);
	expect(during).toHaveLength(2);
	expect(during[1]).toBe(key);
	const after = EndpointStore.read(data, memory.url, memory).verificationKeys(1_000);
	expect(after).toEqual([during[0]]);
	expect([...memory.signingKeys.keys()]).toEqual([second]);
});

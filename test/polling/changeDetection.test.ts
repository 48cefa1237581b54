import fc from 'fast-check';

import {
	detectChanges,
	fingerprintOf,
	planPoll,
	readPollState,
	toEventKinds,
	type OrderRecord,
	type PollState,
	type WatchSettings,
} from '../../nodes/MarketplacePollingTrigger/changeDetection';
import { latestOrder } from '../../nodes/shared/orders';
import { InputError } from '../../nodes/shared/validation';

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const T0 = Date.parse('2026-11-20T12:00:00.000Z');

const settings = (over: Partial<WatchSettings> = {}): WatchSettings => ({
	events: ['created'],
	statuses: [],
	brandIds: [],
	lookbackDays: 7,
	overlapMs: 10 * MIN,
	maxTracked: 10_000,
	...over,
});

const order = (
	id: number,
	status: string,
	createdAtMs: number,
	updatedAtMs = createdAtMs,
): OrderRecord => ({
	id,
	brandId: 1,
	status,
	createdAt: new Date(createdAtMs).toISOString(),
	updatedAt: new Date(updatedAtMs).toISOString(),
});

/** One poll as the node does it: plan, then the service's filter (createdAt >= startDate), then detect. */
function poll(state: PollState | undefined, all: OrderRecord[], s: WatchSettings, now: number) {
	const plan = planPoll(state, s, now);
	const answer = all.filter((o) => Date.parse(String(o.createdAt)) >= plan.startMs);
	return { plan, ...detectChanges(state, answer, plan, s, now) };
}

describe('planPoll', () => {
	test('first run without a start date: a window of the overlap before now, nothing counts as new', () => {
		const plan = planPoll(undefined, settings(), T0 + 123);
		expect(plan).toEqual({ startMs: T0 - 10 * MIN, reportNewFromMs: Infinity });
	});

	test('first run with a start date reports from it; status tracking reaches back the lookback', () => {
		const start = T0 - 3 * DAY;
		expect(planPoll(undefined, settings({ firstStartMs: start }), T0)).toEqual({
			startMs: start,
			reportNewFromMs: start,
		});
		expect(
			planPoll(undefined, settings({ events: ['statusChanged'], lookbackDays: 7 }), T0).startMs,
		).toBe(T0 - 7 * DAY);
		// A start date older than the lookback wins.
		expect(
			planPoll(
				undefined,
				settings({ events: ['statusChanged'], lookbackDays: 1, firstStartMs: start }),
				T0,
			).startMs,
		).toBe(start);
	});

	test('later runs: since the previous poll minus the overlap, whole seconds', () => {
		const { state } = poll(undefined, [], settings(), T0);
		const plan = planPoll(state, settings(), T0 + 5 * MIN + 750);
		expect(plan).toEqual({ startMs: T0 - 10 * MIN, reportNewFromMs: -Infinity });
		const later = planPoll(state, settings({ overlapMs: 1500 }), T0 + MIN);
		expect(later.startMs % 1000).toBe(0);
		expect(later.startMs).toBeLessThanOrEqual(T0 - 1500);
	});

	test('the window never moves back while the settings hold (host clock stepped back)', () => {
		const { state } = poll(undefined, [], settings(), T0);
		const second = poll(state, [], settings(), T0 + 20 * MIN);
		expect(second.plan.startMs).toBe(T0 - 10 * MIN);
		// clock stepped back 15 minutes: since - overlap would be earlier than the last startDate
		const stepped = planPoll(
			{ ...second.state, since: new Date(T0 - 5 * MIN).toISOString() },
			settings(),
			T0,
		);
		expect(stepped.startMs).toBe(Date.parse(second.state.startDate));
	});

	test('changed brands or lookback: re-baseline, only orders newer than the last poll are new', () => {
		const { state } = poll(undefined, [], settings(), T0);
		const plan = planPoll(state, settings({ brandIds: [3] }), T0 + MIN);
		expect(plan.reportNewFromMs).toBe(T0 - 10 * MIN);
		expect(fingerprintOf(settings({ brandIds: [2, 1] }))).toBe(
			fingerprintOf(settings({ brandIds: [1, 2] })),
		);
		expect(fingerprintOf(settings({ lookbackDays: 3 }))).toBe(
			fingerprintOf(settings({ lookbackDays: 9 })),
		);
		expect(fingerprintOf(settings({ events: ['statusChanged'], lookbackDays: 3 }))).not.toBe(
			fingerprintOf(settings({ events: ['statusChanged'], lookbackDays: 9 })),
		);
	});
});

describe('detectChanges', () => {
	test('first run reports nothing; orders created later are reported once, oldest first', () => {
		const history = [order(1, 'Created', T0 - 2 * MIN), order(2, 'Packed', T0 - 30 * DAY)];
		const first = poll(undefined, history, settings(), T0);
		expect(first.changes).toEqual([]);
		expect(Object.keys(first.state.seen)).toEqual(['1']);

		const all = [...history, order(4, 'Created', T0 + 2 * MIN), order(3, 'Created', T0 + MIN)];
		const second = poll(first.state, all, settings(), T0 + 3 * MIN);
		expect(second.changes.map((c) => [c.order.id, c.change])).toEqual([
			[3, { kind: 'created', status: 'Created', detectedAt: new Date(T0 + 3 * MIN).toISOString() }],
			[4, { kind: 'created', status: 'Created', detectedAt: new Date(T0 + 3 * MIN).toISOString() }],
		]);
		// The overlap returns 3 and 4 again: nothing is reported twice.
		const third = poll(second.state, all, settings(), T0 + 4 * MIN);
		expect(third.plan.startMs).toBeLessThan(T0 + MIN);
		expect(third.changes).toEqual([]);
	});

	test('an order that became visible late but within the overlap is still reported', () => {
		const first = poll(undefined, [], settings(), T0);
		const second = poll(first.state, [], settings(), T0 + MIN);
		// created before the second poll started, visible only afterwards
		const late = order(7, 'Created', T0 + 30_000);
		const third = poll(second.state, [late], settings(), T0 + 2 * MIN);
		expect(third.changes.map((c) => c.order.id)).toEqual([7]);
	});

	test('status changes: reported once per (order, status), with the previous status', () => {
		const s = settings({ events: ['statusChanged'] });
		const o = order(5, 'Created', T0 - 3 * DAY);
		const first = poll(undefined, [o], s, T0);
		expect(first.changes).toEqual([]);
		expect(first.state.seen['5']).toEqual([T0 - 3 * DAY, 'Created']);

		const cancelled = { ...o, status: 'Cancelled', updatedAt: new Date(T0 + MIN).toISOString() };
		const second = poll(first.state, [cancelled], s, T0 + 2 * MIN);
		expect(second.changes.map((c) => c.change)).toEqual([
			{
				kind: 'statusChanged',
				status: 'Cancelled',
				previousStatus: 'Created',
				detectedAt: new Date(T0 + 2 * MIN).toISOString(),
			},
		]);
		expect(poll(second.state, [cancelled], s, T0 + 3 * MIN).changes).toEqual([]);

		const returned = { ...o, status: 'Returned' };
		const fourth = poll(second.state, [returned], s, T0 + 4 * MIN);
		expect(fourth.changes.map((c) => [c.change.previousStatus, c.change.status])).toEqual([
			['Cancelled', 'Returned'],
		]);
		// Back to a status already reported: not again.
		expect(poll(fourth.state, [cancelled], s, T0 + 5 * MIN).changes).toEqual([]);
	});

	test('new orders are not reported as status changes unless only status changes are watched', () => {
		const first = poll(undefined, [], settings({ events: ['created', 'statusChanged'] }), T0);
		const fresh = [order(8, 'Created', T0 + 1000), order(9, 'Cancelled', T0 + 2000)];
		const both = poll(
			first.state,
			fresh,
			settings({ events: ['created', 'statusChanged'] }),
			T0 + MIN,
		);
		expect(both.changes.map((c) => [c.order.id, c.change.kind])).toEqual([
			[8, 'created'],
			[9, 'created'],
		]);
		const onlyStatus = poll(first.state, fresh, settings({ events: ['statusChanged'] }), T0 + MIN);
		expect(
			onlyStatus.changes.map((c) => [c.order.id, c.change.kind, c.change.previousStatus]),
		).toEqual([[9, 'statusChanged', undefined]]);
		// a status change is not reported when only new orders are watched
		const onlyNew = poll(
			both.state,
			[order(8, 'Packed', T0 + 1000)],
			settings({ events: ['created', 'statusChanged'] }),
			T0 + 2 * MIN,
		);
		expect(onlyNew.changes).toHaveLength(1);
		expect(
			poll(both.state, [order(8, 'Packed', T0 + 1000)], settings(), T0 + 2 * MIN).changes,
		).toEqual([]);
	});

	test('the statuses filter limits what is reported, not what is tracked', () => {
		const s = settings({ events: ['created', 'statusChanged'], statuses: ['Returned'] });
		const first = poll(undefined, [order(1, 'Created', T0 - DAY)], s, T0);
		const second = poll(
			first.state,
			[order(1, 'Cancelled', T0 - DAY), order(2, 'Created', T0 + 1)],
			s,
			T0 + MIN,
		);
		expect(second.changes).toEqual([]);
		expect(second.state.seen['1']).toEqual([T0 - DAY, 'Created', 'Cancelled']);
		const third = poll(second.state, [order(1, 'Returned', T0 - DAY)], s, T0 + 2 * MIN);
		expect(third.changes.map((c) => [c.change.previousStatus, c.change.status])).toEqual([
			['Cancelled', 'Returned'],
		]);
	});

	test('a start date on the first run reports the orders since then, once', () => {
		const s = settings({ firstStartMs: T0 - DAY });
		const all = [
			order(1, 'Created', T0 - 2 * DAY),
			order(2, 'Packed', T0 - DAY),
			order(3, 'Created', T0 - MIN),
		];
		const first = poll(undefined, all, s, T0);
		expect(first.changes.map((c) => c.order.id)).toEqual([2, 3]);
		expect(poll(first.state, all, s, T0 + MIN).changes).toEqual([]);
	});

	test('re-baselines after the brand filter changes instead of flooding', () => {
		const all = [order(1, 'Created', T0 - 5 * MIN), order(2, 'Created', T0 - DAY)];
		const first = poll(undefined, [], settings({ brandIds: [9] }), T0);
		const second = poll(
			first.state,
			[...all, order(3, 'Created', T0 + 1000)],
			settings({ brandIds: [1] }),
			T0 + MIN,
		);
		// 1 is inside the overlap of the last poll, 3 is newer; 2 is history
		expect(second.changes.map((c) => c.order.id)).toEqual([1, 3]);
	});

	test('forgets orders created before the window, and the size bound never turns old into new', () => {
		const s = settings({ events: ['created', 'statusChanged'], lookbackDays: 1, maxTracked: 3 });
		const all = [1, 2, 3, 4, 5].map((id) => order(id, 'Created', T0 - id * MIN));
		const first = poll(undefined, [...all, order(6, 'Created', T0 - 2 * DAY)], s, T0);
		expect(Object.keys(first.state.seen).sort()).toEqual(['1', '2', '3']);
		// 4 and 5 (dropped by the bound) come back in the window: not new, not reported
		const second = poll(first.state, all, s, T0 + MIN);
		expect(second.changes).toEqual([]);
		expect(Object.keys(second.state.seen).length).toBeLessThanOrEqual(3);
	});

	test('records without id or status are skipped', () => {
		const first = poll(undefined, [], settings(), T0);
		const second = poll(
			first.state,
			[
				{ status: 'Created', createdAt: new Date(T0).toISOString() },
				{ id: 3, createdAt: new Date(T0).toISOString() },
			],
			settings(),
			T0 + MIN,
		);
		expect(second.changes).toEqual([]);
	});

	test('property: however polls interleave with creations, each order is reported exactly once', () => {
		fc.assert(
			fc.property(
				fc.array(fc.integer({ min: 1, max: 20 * MIN }), { minLength: 1, maxLength: 30 }),
				fc.array(fc.integer({ min: 1, max: 5 * MIN }), { minLength: 1, maxLength: 15 }),
				(creationOffsets, pollGaps) => {
					const s = settings({ overlapMs: MIN });
					let state = poll(undefined, [], s, T0).state;
					const orders = creationOffsets.map((offset, i) => order(i + 1, 'Created', T0 + offset));
					const reported: unknown[] = [];
					let now = T0;
					for (const gap of [...pollGaps, 30 * MIN]) {
						now += gap;
						const visible = orders.filter((o) => Date.parse(String(o.createdAt)) <= now);
						const result = poll(state, visible, s, now);
						reported.push(...result.changes.map((c) => c.order.id));
						state = result.state;
					}
					expect([...reported].sort((a, b) => Number(a) - Number(b))).toEqual(
						orders.map((o) => o.id),
					);
				},
			),
		);
	});
});

describe('inputs and helpers', () => {
	test('toEventKinds needs one known kind at least', () => {
		expect(toEventKinds(['statusChanged', 'created', 'created'])).toEqual([
			'statusChanged',
			'created',
		]);
		expect(() => toEventKinds([])).toThrow(InputError);
		expect(() => toEventKinds(['deleted'])).toThrow(/Watch/);
	});

	test('readPollState accepts only its own shape', () => {
		const { state } = poll(undefined, [], settings(), T0);
		expect(readPollState(JSON.parse(JSON.stringify(state)))).toEqual(state);
		expect(readPollState(undefined)).toBeUndefined();
		expect(readPollState({ version: 2, ...{} })).toBeUndefined();
		expect(readPollState({ ...state, seen: null })).toBeUndefined();
	});

	test('latestOrder: newest createdAt among the wanted statuses', () => {
		const all = [
			order(1, 'Created', T0),
			order(2, 'Cancelled', T0 - MIN),
			order(3, 'Created', T0 - DAY),
		];
		expect(latestOrder(all, [])?.id).toBe(1);
		expect(latestOrder(all, ['Cancelled'])?.id).toBe(2);
		expect(latestOrder(all, ['Returned'])).toBeUndefined();
	});
});

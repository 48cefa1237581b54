/**
 * The check when the workflow starts (Catch Up Missed Orders, catchUp.ts `startCheck` and
 * `caughtUpOrders`): the first poll of an activation returns one check item `{marketplaceCheck, firstStartedAt, until}` (none at
 * the workflow's first start, which saves `startedAt`), n8n runs it, and its execute() reads the
 * orders created since 15 min before the newest hour marked in n8n's store (every published run
 * records `hour:<UTC hour>`, once.ts) among the 48 hours before the check's own; with no mark there,
 * since 48 h back; from the hour of an earlier gap mark (`gap:<UTC hour>`, left by a check whose read
 * failed, where its window began; the check that reads it removes it) when that is earlier; never
 * since before `startedAt`. In n8n-core's real engine against the sandbox over
 * HTTP, on one clock for both (helpers.ts `SharedClock`): no test waits for minutes.
 *
 * Orders made by `bench.control.createOrder` are delivered to an active endpoint (their runs mark
 * their hours); orders made by `generateOrders` are never delivered (a delivery that never came).
 * The check at an interval (option Check Every 5 Minutes) is in selfCatchUp.test.ts.
 */
import type { IDataObject, INode } from 'n8n-workflow';

import { CHECK_FIELD } from '../../nodes/MarketplaceTrigger/catchUp';
import {
	gapMark,
	LOOKED_BACK_MS,
	activeHourMark,
	windowStart,
} from '../../nodes/MarketplaceTrigger/marks';
import { isoSeconds } from '../../nodes/shared/transport/queryEncoding';
import { processedDataHash, type HarnessExecution } from '../engine/triggers';
import {
	caughtUp,
	registeredCrons,
	settle,
	type TriggerHarness,
	sharedClockSuite,
} from './helpers';

const { bench, shared } = sharedClockSuite();

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;
const DEAD = 'http://127.0.0.1:1/n8n-is-down';

/** The executions the checks started (not the deliveries'). */
const checks = (t: TriggerHarness) => t.executions.filter((e) => e.source === 'trigger');

/** The item of a check. */
const checkItem = (check: HarnessExecution) => check.input[0][0].json;

/** The startDate of each order-list read the sandbox received with `apiKey` after `since`. */
async function readsSince(apiKey: string, since = 0): Promise<string[]> {
	// a request refused for its key (401) has no route in the log: by path
	return (await bench.requestsOf(apiKey, since))
		.filter((r) => /\/orders$/.test(r.path.split('?')[0]))
		.map((r) => new URLSearchParams(r.rawQuery).get('startDate') ?? '');
}

/** Moves the shared clock on to `ms`. */
const to = async (ms: number) => {
	if (ms > shared.now()) await shared.advance(ms - shared.now());
};

/** Moves the shared clock to `minute` past the next full hour; returns that hour's start. */
async function nextHourAt(minute: number): Promise<number> {
	const hour = (Math.floor(shared.now() / HOUR_MS) + 1) * HOUR_MS;
	await to(hour + minute * MINUTE_MS);
	return hour;
}

/** The keys n8n's store holds for the trigger, as hashes in recording order. */
const storedHashes = (t: TriggerHarness) => (t.processedData()?.value.data ?? []) as string[];

/** An order the service creates and delivers; its run marks the hour. */
async function delivered(t: TriggerHarness, brandId: number): Promise<number> {
	const runs = t.runs.length;
	const { order } = await bench.control.createOrder({ brandId });
	await t.waitForRuns(runs + 1);
	return order.id;
}

/** A published workflow first started in the hour before hour 0, and an order delivered at 0:10 (its run marks hour 0). */
async function deliveredInHourZero() {
	const { apiKey, brandId } = await bench.user();
	const t = await bench.trigger(apiKey);
	await t.activate();
	const h0 = (await nextHourAt(5)) + HOUR_MS;
	await t.startTrigger();
	await settle(t);
	await to(h0 + 10 * MINUTE_MS);
	const order = await delivered(t, brandId);
	return { apiKey, brandId, t, h0, order };
}

/** An order whose delivery never came (the sandbox emits no event for it). */
const undelivered = async (brandId: number) =>
	(await bench.control.generateOrders({ count: 1, brandId })).firstId;

/** The workflow started again (n8n restarted): its first poll with activation 'init', and its check run. */
async function startAgain(t: TriggerHarness): Promise<void> {
	await t.stopTrigger();
	await t.startTrigger('init');
	await settle(t);
}

test('the first start of a workflow emits no check, reads nothing and records nothing; it saves startedAt, which later starts keep and name in their check', async () => {
	const { apiKey, brandId } = await bench.user();
	// an order from before the workflow was published: never this workflow's to run
	await bench.control.createOrder({ brandId });
	const t = await bench.trigger(apiKey);
	const before = shared.now();
	const response = await t.startTrigger();
	await settle(t);
	// the node has no trigger(): n8n starts its poll(), whose first poll is the start
	expect(response).toBeUndefined();
	expect(t.executions).toHaveLength(0);
	expect(await readsSince(apiKey)).toEqual([]);
	expect(t.processedData()).toBeUndefined();
	// saved by n8n when the activation ended; the former progress field is gone
	const startedAt = t.staticData.startedAt as number;
	expect(startedAt).toBeGreaterThanOrEqual(before);
	expect(startedAt).toBeLessThanOrEqual(shared.now());
	expect(t.staticData.checkedUntil).toBeUndefined();

	await shared.advance(MINUTE_MS);
	const beforeAgain = shared.now();
	await startAgain(t);
	expect(t.staticData.startedAt).toBe(startedAt);
	expect(checks(t)).toHaveLength(1);
	const item = checkItem(checks(t)[0]);
	expect(item).toEqual({
		[CHECK_FIELD]: 'start',
		firstStartedAt: new Date(startedAt).toISOString(),
		until: expect.any(String),
	});
	expect(Date.parse(String(item.until))).toBeGreaterThanOrEqual(beforeAgain);
	expect(Date.parse(String(item.until))).toBeLessThanOrEqual(shared.now());
	expect(caughtUp(t)).toEqual([]);
});

test('after an outage: the orders created meanwhile run once, at the check when n8n starts again, oldest first, marked caughtUp; their late deliveries output nothing', async () => {
	const { apiKey, brandId, userId } = await bench.user();
	const t = await bench.trigger(apiKey);
	await t.activate();
	await nextHourAt(5);
	await t.startTrigger();
	await settle(t);
	await t.stopTrigger();
	const startedAt = t.staticData.startedAt as number;
	// n8n is down: the service's attempts fail
	const [endpoint] = await bench.endpointsOf(userId);
	await bench.control.setEndpointUrl(endpoint.id, DEAD);
	const missed: Array<{ id: number; createdAt: string }> = [];
	for (let i = 0; i < 3; i++) {
		missed.push((await bench.control.createOrder({ brandId })).order);
		await shared.advance(10_000);
	}
	await bench.control.setEndpointUrl(endpoint.id, t.webhookUrl);
	const runsBefore = t.runs.length;
	const seq = await bench.lastSeq();

	const before = shared.now();
	await t.startTrigger('init');
	const after = shared.now();
	await settle(t);
	const [check] = checks(t);
	expect(checkItem(check)[CHECK_FIELD]).toBe('start');
	const until = Date.parse(String(checkItem(check).until));
	expect(until).toBeGreaterThanOrEqual(before);
	expect(until).toBeLessThanOrEqual(after);
	// nothing ran before (no hour marked): the check reads from the workflow's first start
	expect(await readsSince(apiKey, seq)).toEqual([isoSeconds(startedAt)]);
	// the check's run writes no static data (a queue-mode worker's run has none to write)
	expect(check.staticDataChanged).toBe(false);
	expect(t.runs).toHaveLength(runsBefore + 1);
	expect(caughtUp(t)).toEqual(missed.map((o) => o.id));
	expect(t.runs.at(-1)![0].map((i) => i.json)).toEqual(
		missed.map((order) => ({
			id: `caught_up_order.created_${order.id}`,
			type: 'order.created',
			createdAt: order.createdAt,
			data: { brandId, orderId: order.id },
			caughtUp: true,
		})),
	);
	// the orders and the check's hour are recorded
	expect(storedHashes(t)).toEqual(
		[...missed.map((o) => `order:${o.id}`), activeHourMark(until)].map(processedDataHash),
	);

	// the service's retries (+1 min after each failed attempt) reach n8n now: each starts an
	// execution with no output
	const executionsBefore = t.executions.length;
	await shared.advance(2 * MINUTE_MS);
	await settle(t);
	const deliveries = (await bench.control.deliveries(endpoint.id)).filter((d) =>
		missed.some((o) => o.id === (d.event.data as IDataObject).orderId),
	);
	expect(deliveries.map((d) => d.status)).toEqual(['Delivered', 'Delivered', 'Delivered']);
	const late = t.executions.slice(executionsBefore);
	expect(late).toHaveLength(3);
	expect(late.every((e) => e.source === 'webhook' && e.output?.[0].length === 0)).toBe(true);
	// and n8n starting again later re-reads them but does not run them again
	await startAgain(t);
	expect(t.runs).toHaveLength(runsBefore + 1);
	expect(caughtUp(t)).toEqual(missed.map((o) => o.id));
});

test("a check reads from 15 minutes before the newest hour the workflow ran something in, before the check's own hour: an order in that margin runs, one before it does not", async () => {
	const { apiKey, brandId } = await bench.user();
	const t = await bench.trigger(apiKey);
	await t.activate();
	const h0 = await nextHourAt(5);
	const at = async (hours: number, minutes: number) =>
		await to(h0 + hours * HOUR_MS + minutes * MINUTE_MS);
	await t.startTrigger();
	await settle(t);
	await t.stopTrigger();
	// the workflow is published and receives its deliveries (each run marks its hour); some
	// deliveries never come
	await at(0, 10);
	await delivered(t, brandId);
	await at(1, 30);
	const beforeMargin = await undelivered(brandId);
	await at(1, 50);
	const inMargin = await undelivered(brandId);
	await at(2, 10);
	await delivered(t, brandId);
	await at(2, 40);
	const afterMark = await undelivered(brandId);
	// a run in the check's own hour: the check does not count it (counted, the window would start at 2:45)
	await at(3, 5);
	await delivered(t, brandId);
	await at(3, 20);
	const seq = await bench.lastSeq();
	const runs = t.runs.length;

	await t.startTrigger('init');
	await settle(t);
	expect(await readsSince(apiKey, seq)).toEqual([isoSeconds(h0 + 2 * HOUR_MS - 15 * MINUTE_MS)]);
	expect(caughtUp(t)).toEqual([inMargin, afterMark]);
	expect(caughtUp(t)).not.toContain(beforeMargin);
	expect(t.runs).toHaveLength(runs + 1);
});

test('with no mark in the 48 hours before its hour, a check reads 48 hours back: an order older than that is not run (nor an older mark counted), a younger one is', async () => {
	const { apiKey, brandId } = await bench.user();
	const t = await bench.trigger(apiKey);
	await t.activate();
	const h0 = await nextHourAt(5);
	await t.startTrigger();
	await settle(t);
	await t.stopTrigger();
	// a run marks hour 0, then nothing runs for two days
	await to(h0 + 10 * MINUTE_MS);
	await delivered(t, brandId);
	await to(h0 + 20 * MINUTE_MS);
	const tooOld = await undelivered(brandId);
	await to(h0 + 2 * HOUR_MS + 20 * MINUTE_MS);
	const young = await undelivered(brandId);
	// hour 50: the hours looked at are 2 to 49
	await to(h0 + 50 * HOUR_MS + 10 * MINUTE_MS);
	const seq = await bench.lastSeq();

	await t.startTrigger('init');
	await settle(t);
	expect(caughtUp(t)).toEqual([young]);
	expect(caughtUp(t)).not.toContain(tooOld);
	const until = Date.parse(String(checkItem(checks(t)[0]).until));
	expect(await readsSince(apiKey, seq)).toEqual([isoSeconds(until - LOOKED_BACK_MS)]);
});

test('with no mark in 48 hours, a check never reads from before the workflow first started: an order created before it does not run', async () => {
	const { apiKey, brandId } = await bench.user();
	const t = await bench.trigger(apiKey);
	const beforeStart = await undelivered(brandId);
	await shared.advance(MINUTE_MS);
	await t.startTrigger();
	await settle(t);
	await t.stopTrigger();
	const startedAt = t.staticData.startedAt as number;
	await shared.advance(MINUTE_MS);
	const afterStart = await undelivered(brandId);
	await shared.advance(3 * HOUR_MS);
	const seq = await bench.lastSeq();

	await t.startTrigger('init');
	await settle(t);
	expect(await readsSince(apiKey, seq)).toEqual([isoSeconds(startedAt)]);
	expect(caughtUp(t)).toEqual([afterStart]);
	expect(caughtUp(t)).not.toContain(beforeStart);
});

test('orders that ran by their delivery are re-read in the margin but not run again: such a check is an execution with no output', async () => {
	const { apiKey, t, h0, order } = await deliveredInHourZero();
	expect(t.runs[0][0][0].json).toMatchObject({ data: { orderId: order } });
	expect(t.runs[0][0][0].json.caughtUp).toBeUndefined();
	await to(h0 + HOUR_MS + 5 * MINUTE_MS);
	for (let check = 0; check < 2; check++) {
		await shared.advance(5 * MINUTE_MS);
		const since = await bench.lastSeq();
		await startAgain(t);
		// both checks are in hour 1: the newest mark before it is the delivery's, hour 0
		expect(await readsSince(apiKey, since)).toEqual([isoSeconds(h0 - 15 * MINUTE_MS)]);
		const last = checks(t).at(-1)!;
		expect(last.error).toBeUndefined();
		expect(last.output).toEqual([[]]);
	}
	expect(t.runs).toHaveLength(1);
	expect(caughtUp(t)).toEqual([]);
});

test.each([
	['Catch Up Missed Orders off', ['order.created'], { catchUpMissedOrders: false }],
	['Order Created not subscribed', ['order.cancelled'], {}],
])(
	'%s: the start emits no check, reads no order and saves no startedAt',
	async (_, eventTypes, options) => {
		const { apiKey, brandId } = await bench.user();
		const t = await bench.trigger(apiKey, { eventTypes, options });
		const since = await bench.lastSeq();
		const response = await t.startTrigger();
		await bench.control.createOrder({ brandId });
		await startAgain(t);
		expect(response).toBeUndefined();
		expect(t.executions).toHaveLength(0);
		expect(registeredCrons()).toEqual([]);
		expect(await readsSince(apiKey, since)).toEqual([]);
		expect(t.staticData.startedAt).toBeUndefined();
	},
);

test('a long uptime with more orders than History Size (100) before an outage: the check at the restart runs the 2 orders of the outage and none of those before', async () => {
	const { apiKey, brandId, userId } = await bench.user();
	const t = await bench.trigger(apiKey, { options: { historySize: 100 } });
	await t.activate();
	const h0 = await nextHourAt(5);
	await t.startTrigger();
	await settle(t);
	// 120 orders delivered over 8 hours, 15 an hour: with the hour marks 128 keys, so the earliest
	// leave the store (a window from the start would run them again)
	const ran: number[] = [];
	for (let hour = 0; hour < 8; hour++) {
		await to(h0 + hour * HOUR_MS + 5 * MINUTE_MS);
		const orders = await Promise.all(
			Array.from({ length: 15 }, async () => await bench.control.createOrder({ brandId })),
		);
		ran.push(...orders.map(({ order }) => order.id));
		await t.waitForRuns(ran.length);
	}
	await settle(t);
	expect(t.runs).toHaveLength(120);
	expect(storedHashes(t)).toHaveLength(100);
	expect(storedHashes(t)).not.toContain(processedDataHash(`order:${ran[0]}`));

	// n8n is down from 7:10 to 9:20; two orders are created meanwhile
	await to(h0 + 7 * HOUR_MS + 10 * MINUTE_MS);
	await t.stopTrigger();
	const [endpoint] = await bench.endpointsOf(userId);
	await bench.control.setEndpointUrl(endpoint.id, DEAD);
	await to(h0 + 7 * HOUR_MS + 30 * MINUTE_MS);
	const first = (await bench.control.createOrder({ brandId })).order.id;
	await to(h0 + 8 * HOUR_MS + 30 * MINUTE_MS);
	const second = (await bench.control.createOrder({ brandId })).order.id;
	await to(h0 + 9 * HOUR_MS + 20 * MINUTE_MS);
	await bench.control.setEndpointUrl(endpoint.id, t.webhookUrl);
	const seq = await bench.lastSeq();

	await t.startTrigger('init');
	await settle(t);
	// from 15 minutes before hour 7, the last the workflow ran something in: hour 7's orders, all
	// still in the store, and the two
	expect(await readsSince(apiKey, seq)).toEqual([isoSeconds(h0 + 7 * HOUR_MS - 15 * MINUTE_MS)]);
	expect(
		checks(t)
			.at(-1)!
			.output?.[0].map((i) => (i.json.data as IDataObject).orderId),
	).toEqual([first, second]);
	expect(t.runs).toHaveLength(121);
	expect(caughtUp(t)).toEqual([first, second]);
});

/** A trigger started once (its first start reads nothing), and an order created after it whose delivery never came. */
async function startedOnce(sinceStartMs: number) {
	const user = await bench.user();
	const t = await bench.trigger(user.apiKey);
	await t.startTrigger();
	await settle(t);
	await t.stopTrigger();
	const missed = (await bench.control.createOrder({ brandId: user.brandId })).order.id;
	await shared.advance(sinceStartMs);
	return { ...user, t, missed };
}

/**
 * Starts the trigger again and moves the shared clock in steps until its check has ended (the read's
 * retries wait on it, 15 s at most): each step lets the transport's wait notice the clock (it looks
 * every 10 ms), so no retry is left waiting in real time.
 */
async function startAndStepUntilChecked(t: TriggerHarness): Promise<void> {
	const count = checks(t).length;
	await t.startTrigger('init');
	for (let step = 0; step < 50 && checks(t).filter((c) => c.run).length <= count; step++) {
		await shared.advance(4_000);
		await new Promise((r) => setTimeout(r, 20));
	}
	await settle(t);
}

/**
 * n8n's retry of a failed execution (Executions > Retry): the workflow runs again from the start node
 * with the same input. The harness has no public call for it; its run of an input is the same engine
 * path every emit takes.
 */
async function retryOf(t: TriggerHarness, failed: HarnessExecution): Promise<HarnessExecution> {
	const harness = t as unknown as {
		execute(
			source: 'trigger',
			mode: 'retry',
			input: HarnessExecution['input'],
		): Promise<HarnessExecution>;
	};
	return await harness.execute('trigger', 'retry', failed.input);
}

test("a read that fails (500 on every attempt) fails the check's execution with a NodeApiError and records only the gap mark of its window's hour; n8n's retry of it reads the same window, runs the order and removes the gap mark", async () => {
	const { apiKey, t, missed } = await startedOnce(20 * MINUTE_MS);
	const startedAt = t.staticData.startedAt as number;
	await bench.control.injectFault({ route: 'listOrders', mode: '500', count: 5 });
	const seq = await bench.lastSeq();
	await startAndStepUntilChecked(t);
	const failed = checks(t).at(-1)!;
	expect(failed.error?.name).toBe('NodeApiError');
	expect(failed.error?.message).toMatch(/500/);
	expect(failed.output).toBeNull();
	// the transport's five attempts, all from the first start (nothing marked)
	const attempts = await readsSince(apiKey, seq);
	expect(attempts).toEqual(Array(5).fill(isoSeconds(startedAt)));
	expect(t.runs).toHaveLength(0);
	// no hour mark and no probe mark: only the gap of the window, which began at the first start
	expect(storedHashes(t)).toEqual([processedDataHash(gapMark(startedAt))]);

	const retrySeq = await bench.lastSeq();
	const retried = await retryOf(t, failed);
	expect(retried.error).toBeUndefined();
	expect(retried.input).toEqual(failed.input);
	// the gap's hour is before the first start: from the first start, as the failed check
	expect(await readsSince(apiKey, retrySeq)).toEqual([attempts[0]]);
	expect(caughtUp(t)).toEqual([missed]);
	// the retry read the gap and removed its mark; its run recorded the order and its hour
	expect(storedHashes(t)).toEqual(
		[`order:${missed}`, activeHourMark(shared.now())].map(processedDataHash),
	);
});

test('a start after a failed check reads from the hour of the gap mark the failed check left (never before the first start), so its missed order runs without a manual retry, and removes the gap mark', async () => {
	const { apiKey, t, h0, missed, before } = await failedCheckInHourTwo();
	const startedAt = t.staticData.startedAt as number;
	expect(checks(t).at(-1)!.error?.name).toBe('NodeApiError');
	// the failed check read from 15 minutes before hour 0 (the newest hour marked): its gap mark is of
	// the hour before hour 0, and it is all the failed check added to the row (no hour mark)
	expect(storedHashes(t)).toEqual([...before, processedDataHash(gapMark(h0 - HOUR_MS))]);
	// the next start, in hour 3: the newest hour mark before it is still hour 0's, but the gap's hour
	// comes first; it began before the first start (5 past it), so the read starts there
	expect(startedAt).toBeGreaterThan(h0 - HOUR_MS);
	expect(startedAt).toBeLessThan(h0 - 15 * MINUTE_MS);
	await t.stopTrigger();
	await to(h0 + 3 * HOUR_MS + 10 * MINUTE_MS);
	const seq = await bench.lastSeq();
	await startAgain(t);
	expect(await readsSince(apiKey, seq)).toEqual([isoSeconds(startedAt)]);
	expect(caughtUp(t)).toEqual([missed]);
	expect(storedHashes(t)).toEqual([
		...before,
		...[`order:${missed}`, activeHourMark(h0 + 3 * HOUR_MS)].map(processedDataHash),
	]);
});

// Every published run records its hour, a delivery's too: the failed check's gap mark keeps the next
// check reading from where the failed one began, also when a delivery ran in between.
test('a start after a failed check reads the failed window again also when a delivery ran in between', async () => {
	const { brandId, t, h0, missed } = await failedCheckInHourTwo();
	// n8n runs on and receives a delivery in hour 2
	await to(h0 + 2 * HOUR_MS + 20 * MINUTE_MS);
	await delivered(t, brandId);
	await t.stopTrigger();
	await to(h0 + 3 * HOUR_MS + 10 * MINUTE_MS);
	await startAgain(t);
	expect(caughtUp(t)).toEqual([missed]);
});

// With continueOnFail the failed check's run outputs an error item and records no hour mark.
test('a start after a check that failed with continueOnFail reads the failed window again', async () => {
	const { t, h0, missed } = await failedCheckInHourTwo({ continueOnFail: true });
	expect(checks(t).at(-1)!.output?.[0][0].json.error).toMatch(/500/);
	await t.stopTrigger();
	await to(h0 + 3 * HOUR_MS + 10 * MINUTE_MS);
	await startAgain(t);
	expect(caughtUp(t)).toEqual([missed]);
});

/** A delivery in hour 0, n8n down in hour 1 (an order's delivery never comes), and in hour 2 a start whose check's read fails. */
async function failedCheckInHourTwo({ continueOnFail = false } = {}) {
	const { apiKey, brandId, t, h0 } = await deliveredInHourZero();
	await t.stopTrigger();
	await to(h0 + HOUR_MS);
	const missed = await undelivered(brandId);
	await to(h0 + 2 * HOUR_MS + 10 * MINUTE_MS);
	const before = storedHashes(t);
	if (continueOnFail) (t.node as INode).onError = 'continueRegularOutput';
	await bench.control.injectFault({ route: 'listOrders', mode: '500', count: 5 });
	await startAndStepUntilChecked(t);
	(t.node as INode).onError = undefined;
	return { apiKey, brandId, t, h0, missed, before };
}

test('a read refused (401, the key revoked) fails the check at once with a NodeApiError; with continueOnFail the check outputs an error item', async () => {
	const { apiKey, t } = await startedOnce(MINUTE_MS);
	await bench.control.revokeKey(apiKey);
	await startAgain(t);
	const failed = checks(t).at(-1)!;
	expect(failed.error?.name).toBe('NodeApiError');
	expect(failed.error?.message).toMatch(/401/);
	expect(failed.error?.message).toMatch(/revoked/);
	// not retried: a 401 is final
	expect(await readsSince(apiKey)).toHaveLength(1);

	(t.node as INode).onError = 'continueRegularOutput';
	await startAgain(t);
	const continued = checks(t).at(-1)!;
	expect(continued.error).toBeUndefined();
	expect(continued.output).toEqual([
		[
			{
				json: { error: expect.stringMatching(/^unauthorized \(401\): API key revoked/) },
				pairedItem: { item: 0 },
			},
		],
	]);
	expect(t.runs).toHaveLength(1);
});

test('deactivated while its check runs: the node has no trigger() and no close function, and n8n runs the check to its end (the order runs once)', async () => {
	const { t, missed } = await startedOnce(MINUTE_MS);
	// the read answers after 300 ms (real time: the shared clock is not moved meanwhile)
	await bench.control.injectFault({ route: 'listOrders', mode: 'hang', hangMs: 300 });
	const response = await t.startTrigger('init');
	expect(response?.closeFunction).toBeUndefined();
	await new Promise((r) => setTimeout(r, 50));
	expect(checks(t).at(-1)!.run).toBeUndefined();
	await t.stopTrigger();
	expect(checks(t).at(-1)!.run).toBeUndefined();
	await settle(t);
	expect(checks(t).at(-1)!.error).toBeUndefined();
	expect(caughtUp(t)).toEqual([missed]);
	expect(t.runs).toHaveLength(1);
});

test("windowStart (pure): 15 minutes before the newest marked hour before the check's own, or a gap if older; never beyond 48 hours nor before the first start", () => {
	const until = Date.UTC(2026, 11, 1, 12, 30);
	const checkHour = Date.UTC(2026, 11, 1, 12);
	const hour = (h: number) => Date.UTC(2026, 11, 1, h);
	const start = Date.UTC(2026, 10, 1);
	// the check's own hour is passed over: a retry reads what the check read
	expect(
		windowStart({ ran: [checkHour, hour(10), hour(9)], gaps: [] }, checkHour, until, start),
	).toBe(hour(10) - 15 * MINUTE_MS);
	expect(windowStart({ ran: [hour(10)], gaps: [hour(7)] }, checkHour, until, start)).toBe(hour(7));
	expect(windowStart({ ran: [], gaps: [] }, checkHour, until, start)).toBe(until - 48 * HOUR_MS);
	expect(windowStart({ ran: [], gaps: [] }, checkHour, until, hour(11))).toBe(hour(11));
});

/**
 * The check when the workflow starts (Catch Up Missed Orders, catchUp.ts `startChecks` and
 * `caughtUpOrders`): trigger() emits one check item, n8n runs it, and its execute() reads the orders
 * created since `checkedUntil - 15 min` (at most 48 h back). In n8n-core's real engine against the
 * sandbox over HTTP, on one clock for both (helpers.ts `SharedClock`): no test waits for minutes.
 *
 * The check at an interval (option Check Every 5 Minutes) is in selfCatchUp.test.ts.
 */
import type { IDataObject, INode } from 'n8n-workflow';

import {
	CHECK_MARGIN_MS,
	LOOKED_BACK_MS,
	CHECK_FIELD,
} from '../../nodes/MarketplaceTrigger/catchUp';
import { isoSeconds } from '../../nodes/shared/transport/queryEncoding';
import {
	caughtUp,
	registeredCrons,
	forgetCrons,
	settle,
	SharedClock,
	TriggerBench,
	type TriggerHarness,
} from './helpers';
import type { HarnessExecution } from '../engine/triggers';

const bench = new TriggerBench();
const shared = new SharedClock(bench);
beforeAll(async () => await bench.start());
afterAll(async () => await bench.close());
beforeEach(async () => {
	shared.install();
	// a day between tests: no order of an earlier test is within a check's window (brands repeat)
	await shared.advance(24 * HOUR_MS);
});
afterEach(async () => {
	await bench.closeHarnesses();
	forgetCrons();
	shared.uninstall();
});

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;
const DEAD = 'http://127.0.0.1:1/n8n-is-down';

/** The executions trigger()'s checks started (not the deliveries'). */
const checks = (t: TriggerHarness) => t.executions.filter((e) => e.source === 'trigger');

/** The window (ms) a check item names. */
function windowOf(check: HarnessExecution): { since: number; until: number } {
	const { since, until } = check.input[0][0].json;
	return { since: Date.parse(String(since)), until: Date.parse(String(until)) };
}

/** The startDate of each order-list read the sandbox received with `apiKey` after `since`. */
async function readsSince(apiKey: string, since = 0): Promise<string[]> {
	// a request refused for its key (401) has no route in the log: by path
	return (await bench.requestsOf(apiKey, since))
		.filter((r) => /\/orders$/.test(r.path.split('?')[0]))
		.map((r) => new URLSearchParams(r.rawQuery).get('startDate') ?? '');
}

/** The workflow started again (n8n restarted): trigger() with activation 'init', and its check run. */
async function startAgain(t: TriggerHarness): Promise<void> {
	await t.stopTrigger();
	await t.startTrigger('init');
	await settle(t);
}

test('the first start of a workflow reads nothing and starts no execution; it records its time as checkedUntil', async () => {
	const { apiKey, brandId } = await bench.user();
	// an order from before the workflow was published: never this workflow's to run
	await bench.control.createOrder({ brandId });
	const t = await bench.trigger(apiKey);
	const before = shared.now();
	const response = await t.startTrigger();
	await settle(t);
	// nothing of the node runs after trigger() returns: no close function
	expect(response).toEqual({});
	expect(t.executions).toHaveLength(0);
	expect(await readsSince(apiKey)).toEqual([]);
	// saved by n8n after trigger() returned
	expect(t.staticData.checkedUntil).toBeGreaterThanOrEqual(before);
	expect(t.staticData.checkedUntil).toBeLessThanOrEqual(shared.now());
});

test('after an outage: the orders created meanwhile run once, at the check when n8n starts again, oldest first, marked caughtUp; their late deliveries output nothing', async () => {
	const { apiKey, brandId, userId } = await bench.user();
	const t = await bench.trigger(apiKey);
	await t.activate();
	await t.startTrigger();
	await settle(t);
	await t.stopTrigger();
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
	const lastStart = t.staticData.checkedUntil as number;

	const before = shared.now();
	await t.startTrigger('init');
	const after = shared.now();
	await settle(t);
	const [check] = checks(t);
	// the window trigger() decided: from 15 minutes before the last start, until now
	expect(check.input[0][0].json[CHECK_FIELD]).toBe('start');
	const { since, until } = windowOf(check);
	expect(since).toBe(lastStart - CHECK_MARGIN_MS);
	expect(until).toBeGreaterThanOrEqual(before);
	expect(until).toBeLessThanOrEqual(after);
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
	// and n8n starting again later re-reads them (within the margin) but does not run them again
	await startAgain(t);
	expect(t.runs).toHaveLength(runsBefore + 1);
	expect(caughtUp(t)).toEqual(missed.map((o) => o.id));
});

test('a check reads at most 48 hours back: an order older than that is not run, a younger one is', async () => {
	const { apiKey, brandId } = await bench.user();
	const t = await bench.trigger(apiKey);
	await t.startTrigger();
	await settle(t);
	await t.stopTrigger();
	const tooOld = (await bench.control.createOrder({ brandId })).order.id;
	await shared.advance(2 * HOUR_MS);
	const young = (await bench.control.createOrder({ brandId })).order.id;
	await shared.advance(47 * HOUR_MS + 30 * MINUTE_MS);
	const seq = await bench.lastSeq();

	await t.startTrigger('init');
	await settle(t);
	expect(caughtUp(t)).toEqual([young]);
	expect(caughtUp(t)).not.toContain(tooOld);
	const { since, until } = windowOf(checks(t)[0]);
	expect(since).toBe(until - LOOKED_BACK_MS);
	expect(await readsSince(apiKey, seq)).toEqual([isoSeconds(since)]);
});

test('the 15-minute margin: a check reads from 15 minutes before the last one; an order in the margin that never ran runs, one before it does not', async () => {
	const { apiKey, brandId } = await bench.user();
	// no endpoint at the service: no order of this user is ever delivered
	const t = await bench.trigger(apiKey);
	const beforeMargin = (await bench.control.createOrder({ brandId })).order.id;
	await shared.advance(10 * MINUTE_MS);
	const inMargin = (await bench.control.createOrder({ brandId })).order.id;
	await shared.advance(10 * MINUTE_MS);
	await t.startTrigger();
	await settle(t);
	await t.stopTrigger();
	const lastCheck = t.staticData.checkedUntil as number;
	await shared.advance(5 * MINUTE_MS);
	const since = await bench.lastSeq();

	await t.startTrigger('init');
	await settle(t);
	expect(await readsSince(apiKey, since)).toEqual([isoSeconds(lastCheck - CHECK_MARGIN_MS)]);
	expect(caughtUp(t)).toEqual([inMargin]);
	expect(caughtUp(t)).not.toContain(beforeMargin);
});

test('orders that ran by their delivery are re-read in the margin but not run again: such a check is an execution with no output', async () => {
	const { apiKey, brandId } = await bench.user();
	const t = await bench.trigger(apiKey);
	await t.activate();
	await t.startTrigger();
	await settle(t);
	const delivered = (await bench.control.createOrder({ brandId })).order;
	await t.waitForRuns(1);
	expect(t.runs[0][0][0].json.caughtUp).toBeUndefined();
	for (let check = 0; check < 2; check++) {
		await shared.advance(5 * MINUTE_MS);
		const since = await bench.lastSeq();
		const checkedUntil = t.staticData.checkedUntil as number;
		await startAgain(t);
		const [startDate] = await readsSince(apiKey, since);
		expect(startDate).toBe(isoSeconds(checkedUntil - CHECK_MARGIN_MS));
		// the delivered order is within what this check read
		expect(Date.parse(delivered.createdAt)).toBeGreaterThanOrEqual(Date.parse(startDate));
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
	'%s: trigger() emits no check and registers no cron (Check Every 5 Minutes on)',
	async (_, eventTypes, options) => {
		const { apiKey, brandId } = await bench.user();
		const t = await bench.trigger(apiKey, {
			eventTypes,
			options: { ...options, checkEveryFiveMinutes: true },
		});
		const since = await bench.lastSeq();
		const response = await t.startTrigger();
		await bench.control.createOrder({ brandId });
		await settle(t);
		expect(response).toEqual({});
		expect(t.executions).toHaveLength(0);
		expect(registeredCrons()).toEqual([]);
		expect(await readsSince(apiKey, since)).toEqual([]);
		expect(t.staticData.checkedUntil).toBeUndefined();
	},
);

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

/** Starts the trigger again and moves the shared clock in steps until its check has ended (the read's retries wait on it). */
async function startAndStepUntilChecked(t: TriggerHarness): Promise<void> {
	const count = checks(t).length;
	await t.startTrigger('init');
	for (let step = 0; step < 20 && checks(t).filter((c) => c.run).length <= count; step++)
		await shared.advance(4_000);
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

test("a read that fails (500 on every attempt) fails the check's execution with a NodeApiError; n8n's retry of it reads the same window and runs the order", async () => {
	const { apiKey, t, missed } = await startedOnce(20 * MINUTE_MS);
	await bench.control.injectFault({ route: 'listOrders', mode: '500', count: 5 });
	const seq = await bench.lastSeq();
	await startAndStepUntilChecked(t);
	const failed = checks(t).at(-1)!;
	expect(failed.error?.name).toBe('NodeApiError');
	expect(failed.error?.message).toMatch(/500/);
	expect(failed.output).toBeNull();
	// the transport's five attempts
	expect(await readsSince(apiKey, seq)).toHaveLength(5);
	expect(t.runs).toHaveLength(0);

	const retried = await retryOf(t, failed);
	expect(retried.error).toBeUndefined();
	expect(caughtUp(t)).toEqual([missed]);
	expect(windowOf(retried)).toEqual(windowOf(failed));
});

// BUG (see the report): trigger() moves checkedUntil when it emits a check, whatever the check's run
// does, so when that run fails and nobody retries it in n8n, no later check reads its window again.
test.failing(
	'BUG: a start after a failed check reads the failed window again, so its missed order runs without a manual retry',
	async () => {
		const { t, missed } = await startedOnce(20 * MINUTE_MS);
		await bench.control.injectFault({ route: 'listOrders', mode: '500', count: 5 });
		await startAndStepUntilChecked(t);
		expect(checks(t).at(-1)!.error?.name).toBe('NodeApiError');
		await t.stopTrigger();
		await shared.advance(MINUTE_MS);
		await startAgain(t);
		expect(caughtUp(t)).toEqual([missed]);
	},
);

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

test('deactivated while its check runs: trigger() left no close function, and n8n runs the check to its end (the order runs once)', async () => {
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

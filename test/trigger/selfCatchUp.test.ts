/**
 * Check Every 5 Minutes (catchUp.ts `startChecks`): trigger() registers n8n's cron, and each tick
 * emits a check of the window since 15 minutes before the previous check. In n8n-core's real engine
 * against the sandbox over HTTP, n8n's scheduler replaced by one a test ticks (helpers.ts
 * `tickCrons`), on one clock for the trigger and the sandbox (helpers.ts `SharedClock`).
 */
import type { IDataObject } from 'n8n-workflow';

import { CHECK_CRON, CHECK_FIELD, CHECK_MARGIN_MS } from '../../nodes/MarketplaceTrigger/catchUp';
import {
	caughtUp,
	forgetCrons,
	registeredCrons,
	settle,
	SharedClock,
	tickCrons,
	TriggerBench,
	type TriggerHarness,
} from './helpers';

const bench = new TriggerBench();
const shared = new SharedClock(bench);
beforeAll(async () => await bench.start());
afterAll(async () => await bench.close());
beforeEach(async () => {
	shared.install();
	// a day between tests: no order of an earlier test is within a check's window (brands repeat)
	await shared.advance(24 * 3_600_000);
});
afterEach(async () => {
	await bench.closeHarnesses();
	forgetCrons();
	shared.uninstall();
});

const FIVE_MINUTES_MS = 5 * 60_000;
const interval = { options: { checkEveryFiveMinutes: true } };

/** The interval checks' executions. */
const ticks = (t: TriggerHarness) =>
	t.executions.filter(
		(e) => e.source === 'trigger' && e.input[0][0].json[CHECK_FIELD] === 'interval',
	);

/** Five minutes pass and n8n's cron fires; the check's run ends. */
async function tick(t: TriggerHarness): Promise<void> {
	await shared.advance(FIVE_MINUTES_MS);
	tickCrons();
	await settle(t);
}

/** The API keys of the order-list reads the sandbox received after `since`. */
async function readersSince(since: number): Promise<string[]> {
	return (await bench.control.requests(since))
		.filter((r) => r.route === 'listOrders')
		.map((r) => String(r.headers.authorization));
}

test('the option registers n8n cron every 5 minutes; without it none is registered', async () => {
	const { apiKey } = await bench.user();
	const off = await bench.trigger(apiKey);
	await off.startTrigger();
	expect(registeredCrons()).toEqual([]);
	const on = await bench.trigger(apiKey, interval);
	await on.startTrigger();
	expect(registeredCrons()).toEqual([CHECK_CRON]);
	expect(CHECK_CRON).toBe('0 */5 * * * *');
});

test('a tick runs a check of the window since 15 minutes before the previous check; finding nothing, it outputs nothing', async () => {
	const { apiKey } = await bench.user();
	const t = await bench.trigger(apiKey, interval);
	await t.startTrigger();
	const started = t.staticData.checkedUntil as number;
	const seq = await bench.lastSeq();
	await tick(t);
	await tick(t);
	expect(ticks(t)).toHaveLength(2);
	const [first, second] = ticks(t).map((e) => e.input[0][0].json as IDataObject);
	expect(Date.parse(String(first.since))).toBe(started - CHECK_MARGIN_MS);
	// the second window begins 15 minutes before the first tick's check
	expect(Date.parse(String(second.since))).toBe(Date.parse(String(first.until)) - CHECK_MARGIN_MS);
	expect(ticks(t).map((e) => [e.error, e.output])).toEqual([
		[undefined, [[]]],
		[undefined, [[]]],
	]);
	expect(await readersSince(seq)).toEqual([`Bearer ${apiKey}`, `Bearer ${apiKey}`]);
	expect(t.runs).toHaveLength(0);
});

test("orders whose deliveries a proxy drops while the trigger stays active run once at the next tick; the service's late retries output nothing", async () => {
	const { apiKey, brandId, userId } = await bench.user();
	const t = await bench.trigger(apiKey, interval);
	await t.activate();
	await t.startTrigger();
	const [endpoint] = await bench.endpointsOf(userId);
	// the proxy in front of n8n loses every delivery; n8n runs on
	await bench.control.setEndpointUrl(endpoint.id, 'http://127.0.0.1:1/proxy-drops-it');
	const dropped = [
		(await bench.control.createOrder({ brandId })).order.id,
		(await bench.control.createOrder({ brandId })).order.id,
	];
	await settle(t);
	expect(t.runs).toHaveLength(0);
	await tick(t);
	expect(caughtUp(t)).toEqual(dropped);
	expect(t.runs).toHaveLength(1);

	// the proxy is fixed: the service's retries (+1 min failed meanwhile, +5 min now) arrive
	await bench.control.setEndpointUrl(endpoint.id, t.webhookUrl);
	const executions = t.executions.length;
	await tick(t);
	const late = t.executions.slice(executions).filter((e) => e.source === 'webhook');
	expect(late).toHaveLength(2);
	expect(late.every((e) => e.output?.[0].length === 0)).toBe(true);
	expect(t.runs).toHaveLength(1);
	expect(caughtUp(t)).toEqual(dropped);
});

test('each check reads with the credential as it is at that check: a key changed in n8n is used from the next tick on', async () => {
	const { apiKey, brandId, userId } = await bench.user();
	const t = await bench.trigger(apiKey, interval);
	await t.startTrigger();
	const seq = await bench.lastSeq();
	await tick(t);
	// the user replaces the key in the credential, and revokes the old one at the service
	const { apiKey: newKey } = await bench.control.createKey(userId);
	t.credentialsHelper.setCredentials({
		marketplaceApi: { baseUrl: bench.sandbox.baseUrl, apiKey: newKey },
	});
	await bench.control.revokeKey(apiKey);
	const order = (await bench.control.createOrder({ brandId })).order.id;
	await tick(t);
	expect(await readersSince(seq)).toEqual([`Bearer ${apiKey}`, `Bearer ${newKey}`]);
	expect(ticks(t).map((e) => e.error)).toEqual([undefined, undefined]);
	expect(caughtUp(t)).toEqual([order]);
});

test('a failing interval check is covered by the next one: its window overlaps the failed one', async () => {
	const { apiKey, brandId, userId } = await bench.user();
	const t = await bench.trigger(apiKey, interval);
	await t.startTrigger();
	const order = (await bench.control.createOrder({ brandId })).order.id;
	await bench.control.revokeKey(apiKey);
	await tick(t);
	expect(ticks(t)[0].error?.name).toBe('NodeApiError');
	const { apiKey: fixed } = await bench.control.createKey(userId);
	t.credentialsHelper.setCredentials({
		marketplaceApi: { baseUrl: bench.sandbox.baseUrl, apiKey: fixed },
	});
	await tick(t);
	expect(ticks(t)[1].error).toBeUndefined();
	expect(caughtUp(t)).toEqual([order]);
});

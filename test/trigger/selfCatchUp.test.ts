/**
 * Check Every 5 Minutes (catchUp.ts `startChecks`): trigger() registers n8n's cron, and each tick
 * emits a check `{marketplaceCheck: 'interval', startedAt, until}`; its run reads from 15 minutes
 * before the newest hour marked in n8n's store before the tick's own (once.ts `hour:` marks, one
 * recorded by every run, a check's that finds nothing too), or from the workflow's first start when
 * there is none; a failed check marks no hour but leaves a gap mark (`gap:<UTC hour>` of where its
 * window began), so the next tick reads from that hour, and removes the mark. In n8n-core's real engine
 * against the sandbox over HTTP, n8n's scheduler replaced by one a test ticks (helpers.ts
 * `tickCrons`), on one clock for the trigger and the sandbox (helpers.ts `SharedClock`).
 */
import { CHECK_CRON, CHECK_FIELD } from '../../nodes/MarketplaceTrigger/catchUp';
import { gapMark } from '../../nodes/MarketplaceTrigger/catchUp';
import { hourMark } from '../../nodes/MarketplaceTrigger/once';
import { isoSeconds } from '../../nodes/shared/transport/queryEncoding';
import { processedDataHash } from '../engine/triggers';
import {
	caughtUp,
	registeredCrons,
	settle,
	tickCrons,
	type TriggerHarness,
	sharedClockSuite,
} from './helpers';

const { bench, shared } = sharedClockSuite();

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

/** The order-list reads the sandbox received after `since`. */
const listReadsSince = async (since: number) =>
	(await bench.control.requests(since)).filter((r) => r.route === 'listOrders');

/** The API keys of the order-list reads the sandbox received after `since`. */
const readersSince = async (since: number) =>
	(await listReadsSince(since)).map((r) => String(r.headers.authorization));

/** The startDate of each order-list read the sandbox received after `since`. */
const startDatesSince = async (since: number) =>
	(await listReadsSince(since)).map((r) => new URLSearchParams(r.rawQuery).get('startDate'));

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;

/** Moves the shared clock on to `ms`. */
const to = async (ms: number) => await shared.advance(ms - shared.now());

/** The start of the next full hour after the shared clock's time. */
const nextHour = () => (Math.floor(shared.now() / HOUR_MS) + 1) * HOUR_MS;

/** n8n's cron fires at `ms` (the shared clock moved there); the check's run ends. */
async function tickAt(t: TriggerHarness, ms: number): Promise<void> {
	await to(ms);
	tickCrons();
	await settle(t);
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

test("a tick's check reads from the first start while nothing is marked, then from 15 minutes before the newest hour marked before its own; finding nothing, it outputs nothing and records its hour", async () => {
	const { apiKey } = await bench.user();
	const t = await bench.trigger(apiKey, interval);
	const h0 = nextHour();
	await to(h0 + 5 * MINUTE_MS);
	await t.startTrigger();
	const startedAt = t.staticData.startedAt as number;
	const seq = await bench.lastSeq();
	// the first start emitted no check; ticks at 1:55, 2:05 and 2:10
	await tickAt(t, h0 + HOUR_MS + 55 * MINUTE_MS);
	await tickAt(t, h0 + 2 * HOUR_MS + 5 * MINUTE_MS);
	await tickAt(t, h0 + 2 * HOUR_MS + 10 * MINUTE_MS);
	expect(t.executions).toEqual(ticks(t));
	expect(ticks(t).map((e) => e.input[0][0].json)).toEqual(
		Array(3).fill({
			[CHECK_FIELD]: 'interval',
			startedAt: new Date(startedAt).toISOString(),
			until: expect.any(String),
		}),
	);
	// the tick at 2:10 does not count the mark of its own hour, which the tick at 2:05 recorded
	const fromHourOne = isoSeconds(h0 + HOUR_MS - 15 * MINUTE_MS);
	expect(await startDatesSince(seq)).toEqual([isoSeconds(startedAt), fromHourOne, fromHourOne]);
	expect(ticks(t).map((e) => [e.error, e.output])).toEqual(Array(3).fill([undefined, [[]]]));
	expect(await readersSince(seq)).toEqual(Array(3).fill(`Bearer ${apiKey}`));
	expect(t.runs).toHaveLength(0);
	expect(t.processedData()?.value.data).toEqual(
		[hourMark(h0 + HOUR_MS), hourMark(h0 + 2 * HOUR_MS)].map(processedDataHash),
	);
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

test('failing interval checks mark no hour but leave the gap mark of the hour their window began in, so the next tick that works reads from that hour, also an hour later, and removes the mark', async () => {
	const { apiKey, brandId, userId } = await bench.user();
	const t = await bench.trigger(apiKey, interval);
	// first started two hours before hour 0 (so the gap's hour, the one before hour 0, is after the
	// first start); a tick in hour 0 marks it
	const h0 = nextHour() + 2 * HOUR_MS;
	await to(h0 - 115 * MINUTE_MS);
	await t.startTrigger();
	const startedAt = t.staticData.startedAt as number;
	const seq0 = await bench.lastSeq();
	await tickAt(t, h0 + 10 * MINUTE_MS);
	expect(t.processedData()?.value.data).toEqual([processedDataHash(hourMark(h0))]);
	await bench.control.revokeKey(apiKey);
	const order = (await bench.control.createOrder({ brandId })).order.id;
	// ticks in hours 1 and 2 fail (401): the first reads from 15 minutes before hour 0 and leaves the
	// gap mark of the hour before hour 0; the second reads from that hour, and finds its mark there
	await tickAt(t, h0 + HOUR_MS + 25 * MINUTE_MS);
	expect(t.processedData()?.value.data).toEqual(
		[hourMark(h0), gapMark(h0 - HOUR_MS)].map(processedDataHash),
	);
	await tickAt(t, h0 + 2 * HOUR_MS + 5 * MINUTE_MS);
	expect(ticks(t).map((e) => e.error?.name)).toEqual([undefined, 'NodeApiError', 'NodeApiError']);
	// no hour mark of theirs, no probe mark, the one gap mark
	expect(t.processedData()?.value.data).toEqual(
		[hourMark(h0), gapMark(h0 - HOUR_MS)].map(processedDataHash),
	);
	const { apiKey: fixed } = await bench.control.createKey(userId);
	t.credentialsHelper.setCredentials({
		marketplaceApi: { baseUrl: bench.sandbox.baseUrl, apiKey: fixed },
	});
	const seq = await bench.lastSeq();
	await tickAt(t, h0 + 3 * HOUR_MS + 5 * MINUTE_MS);
	expect(ticks(t)[3].error).toBeUndefined();
	// the refused reads (401) have no route in the sandbox's log: by path
	const reads = (await bench.control.requests(seq0)).filter((r) =>
		/\/orders$/.test(r.path.split('?')[0]),
	);
	expect(reads.map((r) => new URLSearchParams(r.rawQuery).get('startDate'))).toEqual([
		isoSeconds(startedAt),
		isoSeconds(h0 - 15 * MINUTE_MS),
		isoSeconds(h0 - HOUR_MS),
		isoSeconds(h0 - HOUR_MS),
	]);
	expect(await startDatesSince(seq)).toEqual([isoSeconds(h0 - HOUR_MS)]);
	expect(caughtUp(t)).toEqual([order]);
	// the gap mark is gone; the working tick recorded the order and its hour
	expect(t.processedData()?.value.data).toEqual(
		[hourMark(h0), `order:${order}`, hourMark(h0 + 3 * HOUR_MS)].map(processedDataHash),
	);
});

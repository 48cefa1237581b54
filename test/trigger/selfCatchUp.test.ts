/**
 * trigger()'s catch-up check (catchUpCheck.ts), its schedule and its outages: with Catch Up Missed
 * Orders on, missed orders run without waiting for a delivery. The trigger in n8n-core's engine
 * (trigger() in its TriggerContext, each wake-up of n8n's cron made by the test), the sandbox over
 * real HTTP, and one clock for both (helpers.ts `SharedClock`).
 */
import type { IDataObject } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import {
	caughtUp,
	eventually,
	idsStored,
	restart,
	settle,
	SharedClock,
	TriggerBench,
	wakeChecks,
	type TriggerHarness,
} from './helpers';

const bench = new TriggerBench();
beforeAll(async () => await bench.start());
afterAll(async () => await bench.close());

const shared = new SharedClock(bench);
const SETTINGS = shared.settings;
const advance = async (ms: number) => await shared.advance(ms);

beforeEach(() => shared.install());
afterEach(async () => {
	await bench.closeHarnesses();
	shared.uninstall();
});

/** True for a webhook.test body (the check's test deliveries, the activation's). */
const testEventOf = (raw: Buffer) => {
	try {
		return (JSON.parse(raw.toString()) as { type?: string }).type === 'webhook.test';
	} catch {
		return false;
	}
};

/** The order-list reads of `apiKey` since request log seq `since`. */
const readsOf = async (apiKey: string, since: number) =>
	(await bench.requestsOf(apiKey, since)).filter(
		(r) => r.method === 'GET' && r.path === '/v1/orders',
	);

async function activeTrigger() {
	const { userId, apiKey, brandId } = await bench.user();
	const t = await bench.trigger(apiKey, {}, { settings: SETTINGS });
	await t.activate();
	await t.startTrigger();
	const [endpoint] = await bench.endpointsOf(userId);
	return { userId, apiKey, brandId, t, endpoint };
}

test('n8n down while orders arrive, then started with no further delivery: each missed order runs once within 45 s, from one read; the late retries and a restart with everything redelivered start nothing', async () => {
	const { apiKey, brandId, t, endpoint } = await activeTrigger();
	await bench.control.createOrder({ brandId });
	await t.waitForRuns(1);
	await advance(25_000);
	await settle(t);
	await idsStored(t);
	const runsBefore = t.runs.length;

	// n8n stops: its memory and trigger() are gone, the service's attempts are refused
	restart(t);
	await t.stopTrigger();
	await bench.control.setEndpointUrl(endpoint.id, 'http://127.0.0.1:1/n8n-is-down');
	const missed: number[] = [];
	for (let i = 0; i < 3; i++) {
		missed.push((await bench.control.createOrder({ brandId })).order.id as number);
		await advance(2_000);
	}
	// n8n starts: the activation hook runs ('init'), then trigger(); nothing is delivered after it
	await bench.control.setEndpointUrl(endpoint.id, t.webhookUrl);
	const since = await bench.lastSeq();
	await t.checkExists('init');
	await t.startTrigger('init');
	let ranAfterMs: number | undefined;
	for (let elapsed = 0; elapsed <= 45_000 && ranAfterMs === undefined; elapsed += 5_000) {
		await settle(t);
		if (caughtUp(t).length > 0) ranAfterMs = elapsed;
		else await advance(5_000);
	}
	expect(ranAfterMs).toBeDefined();
	expect(ranAfterMs!).toBeLessThanOrEqual(45_000);
	expect(t.runs.length).toBe(runsBefore + 1);
	expect(caughtUp(t)).toEqual(missed);
	expect((await readsOf(apiKey, since)).length).toBe(1);

	// a restart between the catch-up and the late events (its trigger() not started again); then the
	// service's retries, and every delivery sent again
	restart(t);
	await t.stopTrigger();
	const answered = t.responses.length;
	await advance(70_000);
	await settle(t);
	const ignored = () => t.responses.slice(answered).map((r) => (r.body as IDataObject)?.ignored);
	expect(ignored()).toEqual(missed.map(() => 'order-caught-up'));
	restart(t);
	const all = await bench.control.deliveries(endpoint.id);
	for (const delivery of all) await bench.control.redeliver(delivery.id);
	await settle(t);
	expect(t.runs.length).toBe(runsBefore + 1);
	// each answered 2xx and started nothing (a retry's key is kept from that attempt on: a duplicate now)
	// (a test delivery sent again is a catch-up check of its own: it may read, and starts no run)
	const answers = t.responses.slice(answered + missed.length).map((r) => r.body as IDataObject);
	const events = all.filter((d) => d.event.type !== 'webhook.test').map((d) => d.eventId);
	expect(events.map((id) => answers.find((a) => a.id === id)?.ignored)).toEqual(
		events.map(() => 'duplicate'),
	);
});

/** Steps the shared clock by `stepMs` up to `totalMs`, calling `each` with the time passed after every step. */
async function stepThrough(
	t: TriggerHarness,
	totalMs: number,
	stepMs: number,
	each: (elapsedMs: number) => Promise<void>,
): Promise<void> {
	for (let elapsed = stepMs; elapsed <= totalMs; elapsed += stepMs) {
		await advance(stepMs);
		await settle(t);
		await each(elapsed);
	}
}

test('every delivery dropped for ten minutes while orders are created: each runs once within six minutes, reads at least a minute apart; the late retries start nothing', async () => {
	const { apiKey, brandId, t, endpoint } = await activeTrigger();
	await bench.control.createOrder({ brandId });
	await t.waitForRuns(1);
	const since = await bench.lastSeq();
	// a proxy in front of n8n drops every delivery; n8n runs on
	await bench.control.setEndpointUrl(endpoint.id, 'http://127.0.0.1:1/proxy-drops-it');
	const created = new Map<number, number>();
	const ranAt = new Map<number, number>();
	const reads: number[] = [];
	let seq = since;
	await stepThrough(t, 16 * 60_000, 10_000, async (elapsed) => {
		if (elapsed % 110_000 === 0 && elapsed <= 10 * 60_000)
			created.set((await bench.control.createOrder({ brandId })).order.id as number, elapsed);
		for (const id of caughtUp(t)) if (!ranAt.has(id)) ranAt.set(id, elapsed);
		reads.push(...(await readsOf(apiKey, seq)).map(() => elapsed));
		seq = await bench.lastSeq();
	});
	expect(created.size).toBe(5);
	expect(caughtUp(t).sort()).toEqual([...created.keys()].sort());
	for (const [id, at] of created) expect(ranAt.get(id)! - at).toBeLessThanOrEqual(6 * 60_000);
	for (let i = 1; i < reads.length; i++)
		expect(reads[i] - reads[i - 1]).toBeGreaterThanOrEqual(60_000);
	// quiet again after the last order: one read every five minutes
	expect(reads.filter((at) => at > 12 * 60_000).length).toBeLessThanOrEqual(1);

	// the proxy is fixed: the service's retries of the dropped deliveries start nothing
	const runs = t.runs.length;
	await bench.control.setEndpointUrl(endpoint.id, t.webhookUrl);
	const answered = t.responses.length;
	await stepThrough(t, 40 * 60_000, 60_000, async () => {});
	const retried = t.responses.slice(answered).map((r) => (r.body as IDataObject)?.ignored);
	expect(retried.filter((reason) => reason === 'order-caught-up').length).toBe(created.size);
	expect(t.runs.length).toBe(runs);
});

test('an hour of quiet: one order-list read after activation, then one every five minutes (12 in the hour: 20 s after it, then every 5 min), and no run', async () => {
	const { apiKey, t } = await activeTrigger();
	const since = await bench.lastSeq();
	const requests = t.requests.length;
	await stepThrough(t, 60 * 60_000, 30_000, async () => {});
	expect((await readsOf(apiKey, since)).length).toBe(12);
	expect(t.runs.length).toBe(0);
	// the checks' test deliveries themselves: one every five minutes
	const sent = t.requests.slice(requests).filter((r) => testEventOf(r.rawBody));
	expect(sent.length).toBe(12);
});

test('orders created in the in-flight margin before a check, whose deliveries never come, run with the next check, five minutes later', async () => {
	const { apiKey, brandId, t, endpoint } = await activeTrigger();
	// one delivery gets through (this process receives them), then a proxy drops every one
	await bench.control.createOrder({ brandId });
	await t.waitForRuns(1);
	await bench.control.setEndpointUrl(endpoint.id, 'http://127.0.0.1:1/proxy-drops-it');
	// the first check comes 20 s after activation; its window ends 15 s before it
	await advance(10_000);
	const late = (await bench.control.createOrder({ brandId })).order.id as number;
	const since = await bench.lastSeq();
	await advance(10_000);
	await settle(t);
	expect((await readsOf(apiKey, since)).length).toBe(1);
	expect(caughtUp(t)).toEqual([]);
	let ranAfter: number | undefined;
	await stepThrough(t, 360_000, 5_000, async (elapsed) => {
		if (ranAfter === undefined && caughtUp(t).includes(late)) ranAfter = elapsed;
	});
	// the service's retry a minute later would have brought it, had a proxy not dropped it: no extra read for it
	expect(ranAfter).toBeGreaterThanOrEqual(295_000);
	expect(ranAfter).toBeLessThanOrEqual(305_000);
	expect(caughtUp(t)).toEqual([late]);
});

test("a user's Webhook Endpoint > Test is taken for a check: within a minute of this process's last read it reads nothing, after it the order list", async () => {
	const { apiKey, t, endpoint } = await activeTrigger();
	await advance(25_000);
	await settle(t);
	const byHand = async () =>
		await fetch(`${bench.sandbox.baseUrl}/v1/webhook-endpoints/${endpoint.id}/test`, {
			method: 'POST',
			headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': crypto.randomUUID() },
		});
	const since = await bench.lastSeq();
	await advance(30_000);
	expect((await byHand()).status).toBe(200);
	await t.settled();
	expect(await readsOf(apiKey, since)).toEqual([]);
	await advance(31_000);
	expect((await byHand()).status).toBe(200);
	await t.settled();
	expect((await readsOf(apiKey, since)).length).toBe(1);
	expect(t.runs).toEqual([]);
});

test('none with Catch Up Missed Orders off, none without Order Created, none on the test URL; deactivation ends them', async () => {
	const off = await bench.user();
	const withoutOption = await bench.trigger(
		off.apiKey,
		{ options: { catchUpMissedOrders: false } },
		{ settings: SETTINGS },
	);
	await withoutOption.activate();
	const other = await bench.user();
	const noOrders = await bench.trigger(
		other.apiKey,
		{ eventTypes: ['order.cancelled'] },
		{ settings: SETTINGS },
	);
	await noOrders.activate();
	const test = await bench.user();
	const listening = await bench.trigger(test.apiKey, {}, { settings: SETTINGS });
	await listening.activate('manual');
	for (const t of [withoutOption, noOrders]) await t.startTrigger();
	const active = await activeTrigger();
	const since = await bench.lastSeq();
	await advance(25_000);
	await settle(active.t);
	expect((await readsOf(active.apiKey, since)).length).toBe(1);
	await active.t.delete();
	await active.t.stopTrigger();
	const sinceDelete = await bench.lastSeq();
	await stepThrough(active.t, 20 * 60_000, 60_000, async () => {});
	for (const apiKey of [off.apiKey, other.apiKey, test.apiKey, active.apiKey])
		expect(await readsOf(apiKey, apiKey === active.apiKey ? sinceDelete : since)).toEqual([]);
	// production test deliveries: the activation check's, and the active trigger's one check
	for (const t of [withoutOption, noOrders, listening, active.t])
		expect(t.requests.filter((r) => testEventOf(r.rawBody) && r.mode === 'webhook')).toHaveLength(
			t === active.t ? 2 : t === listening ? 0 : 1,
		);
});

test('steady traffic (an order every 20 s for ten minutes): deliveries read nothing, a check every five minutes reads the order list, and nothing is caught up', async () => {
	const { apiKey, brandId, t } = await activeTrigger();
	const since = await bench.lastSeq();
	const reads: number[] = [];
	let seq = since;
	let orders = 0;
	await stepThrough(t, 10 * 60_000, 10_000, async (elapsed) => {
		if (elapsed % 20_000 === 0) {
			await bench.control.createOrder({ brandId });
			orders++;
			await settle(t);
		}
		reads.push(...(await readsOf(apiKey, seq)).map(() => elapsed));
		seq = await bench.lastSeq();
	});
	await settle(t);
	expect(t.runs.length).toBe(orders);
	expect(caughtUp(t)).toEqual([]);
	// 20 s after the start, then five minutes after each check
	expect(reads.length).toBeGreaterThanOrEqual(2);
	expect(reads.length).toBeLessThanOrEqual(3);
	for (let i = 1; i < reads.length; i++)
		expect(reads[i] - reads[i - 1]).toBeGreaterThanOrEqual(5 * 60_000);
});

test('a key rotated in n8n is used from the next check on; a revoked key is told once as a failed execution of the workflow, and again only after a check succeeded', async () => {
	const { userId, apiKey, t } = await activeTrigger();
	await advance(25_000);
	await settle(t);
	// the user rotates the key: a new key in the credential, the old one revoked at the service
	const rotated = (await bench.control.createKey(userId)).apiKey;
	t.credentialsHelper.setCredentials({
		marketplaceApi: { baseUrl: bench.sandbox.baseUrl, apiKey: rotated },
	});
	await bench.control.revokeKey(apiKey);
	const since = await bench.lastSeq();
	await advance(5 * 60_000);
	await settle(t);
	expect((await bench.requestsOf(rotated, since)).length).toBeGreaterThan(0);
	expect(await bench.requestsOf(apiKey, since)).toEqual([]);
	expect(t.triggerErrors).toEqual([]);

	// the credential's key is revoked too: each failing check is logged, the first one is told
	await bench.control.revokeKey(rotated);
	const failing = await bench.lastSeq();
	await stepThrough(t, 8 * 60_000, 60_000, async () => {});
	// the next check five minutes on, then one a minute
	expect((await bench.requestsOf(rotated, failing)).length).toBeGreaterThanOrEqual(3);
	expect(t.triggerErrors.map((e) => e.kind)).toEqual(['saveFailedExecution']);
	expect(t.triggerErrors[0].error.message).toMatch(/unauthorized|401/);
	expect(t.triggerErrors[0].error.message).not.toContain(rotated);

	// fixed in n8n: the next check succeeds; a later failure is told again
	const fixed = (await bench.control.createKey(userId)).apiKey;
	t.credentialsHelper.setCredentials({
		marketplaceApi: { baseUrl: bench.sandbox.baseUrl, apiKey: fixed },
	});
	await stepThrough(t, 60_000, 60_000, async () => {});
	expect((await bench.requestsOf(fixed, since)).length).toBeGreaterThan(0);
	await bench.control.revokeKey(fixed);
	await stepThrough(t, 6 * 60_000, 60_000, async () => {});
	expect(t.triggerErrors.map((e) => e.kind)).toEqual([
		'saveFailedExecution',
		'saveFailedExecution',
	]);
});

test('deactivation while a check runs: the close function waits for it, and nothing is emitted after it', async () => {
	const { apiKey, brandId, t, endpoint } = await activeTrigger();
	await bench.control.createOrder({ brandId });
	await t.waitForRuns(1);
	// deliveries dropped: the check reads the orders itself
	await bench.control.setEndpointUrl(endpoint.id, 'http://127.0.0.1:1/proxy-drops-it');
	await bench.control.createOrder({ brandId });
	await advance(40_000);
	const runs = t.runs.length;
	// the sandbox holds the check's order read until the close function was called
	await bench.control.injectFault({ route: 'listOrders', mode: 'hang', hangMs: 5_000 });
	const since = await bench.lastSeq();
	const check = wakeChecks();
	await eventually(async () => (await readsOf(apiKey, since)).length === 1);
	let closedAt: number | undefined;
	const closed = t.stopTrigger().then(() => (closedAt = t.runs.length));
	await sleep(50);
	expect(closedAt).toBeUndefined();
	await advance(5_000);
	await Promise.all([check, closed]);
	await t.settled();
	expect(closedAt).toBe(runs);
	expect(t.runs.length).toBe(runs);
});

/**
 * The watch (watch.ts): n8n polls the trigger (its poll(), Poll Times set from the option Watch Every,
 * 5 minutes by default), which reads the service's record of its endpoint and deliveries and acts on
 * that record only. In n8n-core's real engine against the sandbox over HTTP: each look is one poll as
 * n8n's PollTriggerExecutor runs it on the trigger's Workflow (the harness's `poll`), on one clock for
 * the trigger and the sandbox (helpers.ts `SharedClock`).
 */
import type { IDataObject } from 'n8n-workflow';
import { Expression } from 'n8n-workflow';

import { CHECK_FIELD } from '../../nodes/MarketplaceTrigger/catchUp';
import type { DeliveryRecord } from '../../nodes/MarketplaceTrigger/deliveryRecord';
import {
	DEFAULT_WATCH_MINUTES,
	judgeLook,
	WATCH_GIVES_UP_MS,
} from '../../nodes/MarketplaceTrigger/watch';
import { initN8nVmEngine } from '../engine/vmEngine';
import {
	caughtUp,
	publishedTrigger,
	recordOf,
	settle,
	sharedClockSuite,
	type TriggerHarness,
} from './helpers';

const { bench, shared } = sharedClockSuite();

const MINUTE_MS = 60_000;

/** The watch's interval passes and n8n polls; the run it started ends. */
async function tick(t: TriggerHarness, ms = DEFAULT_WATCH_MINUTES * MINUTE_MS): Promise<void> {
	await shared.advance(ms);
	await t.poll();
	await settle(t);
}

/** The executions the watch started, by their check's reason. */
const watchChecks = (t: TriggerHarness) =>
	t.executions
		.filter((e) => e.source === 'trigger')
		.map((e) => String(e.input[0][0].json[CHECK_FIELD]));

/** Calls the service's API with the user's key, as another workflow or a script would. */
async function api(apiKey: string, method: string, path: string, body?: IDataObject) {
	const response = await fetch(`${bench.sandbox.baseUrl}${path}`, {
		method,
		headers: {
			authorization: `Bearer ${apiKey}`,
			'content-type': 'application/json',
			'idempotency-key': `${Math.random()}`,
		},
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	return {
		status: response.status,
		body: (await response.json().catch(() => ({}))) as IDataObject,
	};
}

/** The watch's reads of the service after `since` (a request log seq). */
const watchReads = async (apiKey: string, since: number) =>
	(await bench.requestsOf(apiKey, since)).filter(
		(r) => r.route === 'getWebhookEndpoint' || r.route === 'listWebhookDeliveries',
	);

test('Poll Times follow Watch Every: every 5 minutes by default, every 15 with 15, hourly with 60, none with 0; a poll with the watch off reads nothing', async () => {
	const pollTimes = async (options: IDataObject) => {
		const { apiKey } = await bench.user();
		const t = await bench.trigger(apiKey, { options });
		return t.nodeParameter('pollTimes');
	};
	expect(await pollTimes({})).toEqual({ item: [{ mode: 'everyX', value: 5, unit: 'minutes' }] });
	expect(await pollTimes({ watchEvery: 15 })).toEqual({
		item: [{ mode: 'everyX', value: 15, unit: 'minutes' }],
	});
	expect(await pollTimes({ watchEvery: 60 })).toEqual({ item: [{ mode: 'everyHour', minute: 0 }] });
	expect(await pollTimes({ watchEvery: 0 })).toEqual({ item: [] });
	const { apiKey, t } = await publishedTrigger(bench, { options: { watchEvery: 0 } });
	const since = await bench.lastSeq();
	await t.poll();
	expect(await watchReads(apiKey, since)).toEqual([]);
});

test('all well: steady deliveries answered 2xx, then quiet: the watch starts no execution and reads the service twice a look', async () => {
	const { apiKey, brandId, t } = await publishedTrigger(bench);
	await t.startTrigger();
	const since = await bench.lastSeq();
	for (let look = 0; look < 3; look++) {
		for (let i = 0; i < 3; i++) await bench.control.createOrder({ brandId });
		await settle(t);
		await tick(t);
	}
	await tick(t);
	expect(t.runs).toHaveLength(9);
	expect(watchChecks(t)).toEqual([]);
	expect(t.executions.filter((e) => e.source === 'trigger')).toHaveLength(0);
	expect((await watchReads(apiKey, since)).length).toBe(2 * 4);
});

test("deliveries a proxy drops (no answer) run once at the watch's next look; the service's late retries output nothing", async () => {
	const { brandId, t, endpoint } = await publishedTrigger(bench);
	await t.startTrigger();
	await bench.control.setEndpointUrl(endpoint.id, 'http://127.0.0.1:1/proxy-drops-it');
	const dropped = [
		(await bench.control.createOrder({ brandId })).order.id,
		(await bench.control.createOrder({ brandId })).order.id,
	];
	await settle(t);
	expect(t.runs).toHaveLength(0);
	await tick(t);
	expect(watchChecks(t)).toEqual(['missed-delivery']);
	expect(caughtUp(t)).toEqual(dropped);
	// the proxy is fixed: the service's retries arrive and run nothing; the look after them is all well
	await bench.control.setEndpointUrl(endpoint.id, t.webhookUrl);
	await tick(t);
	await tick(t);
	expect(t.runs).toHaveLength(1);
	expect(watchChecks(t)).toEqual(['missed-delivery']);
});

test('a secret rotated elsewhere: once its 24 hours of two signatures end, the refused deliveries make the watch take a new secret; the service retries verify and each order runs once', async () => {
	const { apiKey, brandId, t, endpoint } = await publishedTrigger(bench);
	await t.startTrigger();
	const held = String(recordOf(t, t.webhookUrl)!.secret);
	expect(
		(await api(apiKey, 'POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`)).status,
	).toBe(200);
	await shared.advance(24 * 60 * MINUTE_MS + MINUTE_MS);
	const order = (await bench.control.createOrder({ brandId })).order.id;
	await settle(t);
	expect(t.responses.at(-1)?.status).toBe(401);
	expect(t.runs).toHaveLength(0);
	await tick(t);
	expect(watchChecks(t)).toEqual(['new-secret']);
	const renewed = recordOf(t, t.webhookUrl)!;
	expect(renewed.secret).not.toBe(held);
	// the check caught the order up; the service's retry now verifies and runs nothing more
	expect(caughtUp(t)).toEqual([order]);
	await tick(t);
	expect(t.responses.at(-1)?.status).toBe(200);
	expect(t.runs).toHaveLength(1);
	expect(watchChecks(t)).toEqual(['new-secret']);
});

test("refused again after its new secret (the service's clock 10 minutes ahead): no second rotation; the trigger's error says what to fix", async () => {
	const { apiKey, brandId, t } = await publishedTrigger(bench);
	await t.startTrigger();
	const ahead = 600;
	await shared.advance(0, ahead);
	const since = await bench.lastSeq();
	await bench.control.createOrder({ brandId });
	await settle(t);
	const skewedTick = async () => {
		await shared.advance(DEFAULT_WATCH_MINUTES * MINUTE_MS, ahead);
		await t.poll();
		await settle(t);
	};
	await skewedTick();
	expect(watchChecks(t)).toEqual(['new-secret']);
	// the next order's delivery is refused with the new secret too
	await bench.control.createOrder({ brandId });
	await settle(t);
	await skewedTick();
	await skewedTick();
	const rotations = (await bench.requestsOf(apiKey, since)).filter(
		(r) => r.route === 'rotateWebhookEndpointSecret',
	);
	expect(rotations).toHaveLength(1);
	expect(t.triggerErrors.map((e) => e.error.message)).toEqual([
		expect.stringMatching(/refused \(HTTP 401\) although the trigger took a new signing secret/),
	]);
});

test('an endpoint the service disabled is enabled again; the first item after it carries a notice from when to when, once', async () => {
	const { apiKey, brandId, t, endpoint } = await publishedTrigger(bench);
	await t.startTrigger();
	await api(apiKey, 'PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { status: 'Disabled' });
	const missed = (await bench.control.createOrder({ brandId })).order.id;
	await tick(t);
	expect((await bench.endpointsOf(endpoint.ownerUserId)).map((e) => e.status)).toEqual(['Enabled']);
	expect(watchChecks(t)).toEqual(['enabled-again']);
	const items = t.runs.flatMap((run) => run[0].map((item) => item.json));
	expect(items.map((json) => (json.data as IDataObject | undefined)?.orderId)).toEqual([missed]);
	expect(String(items[0].notice)).toMatch(
		/had disabled this trigger's webhook endpoint .* from \d{4}-.* until \d{4}-.*cannot be recovered/,
	);
	await bench.control.createOrder({ brandId });
	await settle(t);
	await tick(t);
	expect(t.runs.at(-1)![0][0].json.notice).toBeUndefined();
	expect(watchChecks(t)).toEqual(['enabled-again']);
});

test('an endpoint deleted at the service is registered again, with a secret the next deliveries verify with', async () => {
	const { apiKey, brandId, t, endpoint } = await publishedTrigger(bench);
	await t.startTrigger();
	expect((await api(apiKey, 'DELETE', `/v1/webhook-endpoints/${endpoint.id}`)).status).toBeLessThan(
		300,
	);
	await tick(t);
	expect(watchChecks(t)).toEqual(['registered-again']);
	const [again] = await bench.endpointsOf(endpoint.ownerUserId);
	expect(again.url).toBe(t.webhookUrl);
	expect(recordOf(t, t.webhookUrl)!.endpointId).toBe(again.id);
	const order = (await bench.control.createOrder({ brandId })).order.id;
	await settle(t);
	expect(t.responses.at(-1)?.status).toBe(200);
	expect(t.runs.at(-1)![0][0].json.data).toMatchObject({ orderId: order });
});

test("a revoked API key is the trigger's error at the next look; a service unreachable for 30 minutes too, not before", async () => {
	const revoked = await publishedTrigger(bench);
	await revoked.t.startTrigger();
	await bench.control.revokeKey(revoked.apiKey);
	await tick(revoked.t);
	expect(revoked.t.triggerErrors.map((e) => e.error.message)).toEqual([
		expect.stringMatching(/refuses the API key of this trigger's credential \(401/),
	]);

	const down = await publishedTrigger(bench);
	await down.t.startTrigger();
	down.t.credentialsHelper.setCredentials({
		marketplaceApi: { baseUrl: 'http://127.0.0.1:1', apiKey: down.apiKey },
	});
	const look = async () => await tick(down.t);
	for (let n = 0; n < WATCH_GIVES_UP_MS / (DEFAULT_WATCH_MINUTES * MINUTE_MS); n++) await look();
	expect(down.t.triggerErrors).toEqual([]);
	await look();
	expect(down.t.triggerErrors.map((e) => e.error.message)).toEqual([
		expect.stringMatching(/has not answered this trigger for 30 minutes/),
	]);
});

describe('judgeLook (pure)', () => {
	const d = (id: number, httpStatus: number | null, more: Partial<DeliveryRecord> = {}) => ({
		deliveryId: id,
		eventType: 'order.created',
		status: httpStatus !== null && httpStatus < 300 ? 'Succeeded' : 'Pending',
		attempts: 1,
		httpStatus,
		createdAt: 1_000 + id,
		...more,
	});
	const enabled = { status: 'Enabled' };
	const memory = { judgedUpTo: 10, activatedAt: 0 };

	test.each([
		['all 2xx', [d(12, 200), d(11, 204)], 'none', 12],
		['one with no answer', [d(12, 200), d(11, null)], 'check', 12],
		['a 503', [d(11, 503)], 'check', 11],
		['the newest answered 401', [d(12, 401), d(11, 200)], 'renewSecret', 12],
		['a 401 with a 2xx after it', [d(12, 200), d(11, 401)], 'check', 12],
		['a webhook.test refused', [d(11, 401, { eventType: 'webhook.test' })], 'none', 11],
		[
			'not attempted yet: judged later',
			[d(12, 500), d(11, null, { attempts: 0, status: 'Pending' })],
			'none',
			10,
		],
		['judged before', [d(10, 500), d(9, null)], 'none', 10],
	])('%s', (_, deliveries, kind, judgedUpTo) => {
		const { action, judgedUpTo: after } = judgeLook({ endpoint: enabled, deliveries }, memory);
		expect(action.kind).toBe(kind);
		expect(after).toBe(judgedUpTo);
	});

	test('gone, Disabled, refused after a renewal; the first look leaves what came before the start to the start check', () => {
		expect(judgeLook({ endpoint: 'gone', deliveries: [] }, memory).action.kind).toBe('register');
		expect(
			judgeLook({ endpoint: { status: 'Disabled', updatedAt: 'x' }, deliveries: [] }, memory)
				.action,
		).toEqual({ kind: 'enable', disabledSince: 'x' });
		const renewed = { ...memory, renewed: { at: 0, afterDeliveryId: 11 } };
		expect(judgeLook({ endpoint: enabled, deliveries: [d(12, 401)] }, renewed).action.kind).toBe(
			'refusedAfterRenewal',
		);
		const first = judgeLook(
			{ endpoint: enabled, deliveries: [d(12, 200), d(11, 500, { createdAt: 5 })] },
			{ activatedAt: 1_000 },
		);
		expect(first).toEqual({ action: { kind: 'none' }, judgedUpTo: 12 });
	});
});

describe("under n8n's vm expression engine (n8n 2.41's default)", () => {
	afterEach(async () => await Expression.disposeExpressionEngine());

	test('a look authenticates its reads: n8n holds an isolate for a poll (a cron callback of trigger() gets none)', async () => {
		const { apiKey, brandId, t, endpoint } = await publishedTrigger(bench);
		await t.startTrigger();
		// the activation above ran without it; from here expressions need an isolate, as in n8n 2.41
		await initN8nVmEngine();
		await bench.control.setEndpointUrl(endpoint.id, 'http://127.0.0.1:1/proxy-drops-it');
		const dropped = (await bench.control.createOrder({ brandId })).order.id;
		const since = await bench.lastSeq();
		await tick(t);
		expect((await watchReads(apiKey, since)).map((r) => r.status)).toEqual([200, 200]);
		expect(t.triggerErrors).toEqual([]);
		expect(caughtUp(t)).toEqual([dropped]);
	});
});

/**
 * webhook() of the Marketplace Trigger (receive.ts) in n8n-core's WebhookContext behind real HTTP,
 * with deliveries made and signed by the sandbox (standardwebhooks library) or by hand: each event
 * starts one run and n8n answers 200 on receipt; a copy starts an execution with no output; forged,
 * stale or unsigned requests get 401 and start nothing, write nothing and send nothing to the
 * service; unsubscribed types and webhook.test get 2xx; the rotation overlap; Fetch Current State
 * and its 503 on a transient failure.
 */
import { Logger } from '@n8n/backend-common';
import { Container } from '@n8n/di';
import type { IDataObject } from 'n8n-workflow';

import { parseSecret, signWebhook } from '../../nodes/shared/webhookVerifier';
import { transportClock } from '../transportClock';
import {
	forgetActivationTraffic,
	TriggerBench,
	eventually,
	recordOf,
	settle,
	SharedClock,
	signedHeaders,
	type TriggerHarness,
	publishedTrigger,
} from './helpers';

const bench = new TriggerBench();
beforeAll(async () => await bench.start());
afterAll(async () => await bench.close());
afterEach(async () => {
	jest.restoreAllMocks();
	await bench.control.clearFaults();
	await bench.control.settings({ timestampSkewSeconds: 0 });
	await bench.closeHarnesses();
});

/** A delivery signed by hand with the given secrets (for what the sandbox cannot produce). */
async function deliverSigned(
	t: TriggerHarness,
	secrets: string[],
	event: IDataObject,
	timestamp?: number,
) {
	const body = JSON.stringify(event);
	return await t.deliver(body, signedHeaders(event, secrets, body, timestamp));
}

const orderEvent = (id: string, orderId: number) => ({
	id,
	type: 'order.created',
	createdAt: new Date().toISOString(),
	data: { brandId: 1, orderId },
});

/** The number of items each execution output, in the order they started (null: no output at all). */
const outputs = (t: TriggerHarness) => t.executions.map((e) => e.output?.[0]?.length ?? null);

test('each event starts one run with id, type, createdAt and data, answered 200 on receipt; a redelivery (same webhook-id) is answered 200 and its execution outputs nothing', async () => {
	const { t, brandId, endpoint } = await publishedTrigger(bench, {
		eventTypes: ['order.created', 'order.cancelled'],
	});
	const created = await bench.control.createOrder({ brandId });
	await t.waitForRuns(1);
	const cancelled = await bench.control.cancelOrder(created.order.id as number);
	await t.waitForRuns(2);
	expect(t.runs.map((r) => r[0].map((i) => i.json))).toEqual([
		[{ ...created.event }],
		[{ ...cancelled.event }],
	]);
	expect(t.runs[0][0][0].json).toEqual({
		id: created.event.id,
		type: 'order.created',
		createdAt: created.event.createdAt,
		data: { brandId, orderId: created.order.id },
	});

	const first = (await bench.control.deliveries(endpoint.id)).find(
		(d) => d.eventId === created.event.id,
	)!;
	const again = await bench.control.redeliver(first.id);
	expect(again.responseStatusCode).toBe(200);
	await settle(t);
	expect(t.runs).toHaveLength(2);
	expect(outputs(t)).toEqual([1, 1, 0]);
	// n8n answers on receipt (onReceived, noData): an empty 200 for each
	expect(t.responses.map((r) => [r.status, r.text])).toEqual([
		[200, ''],
		[200, ''],
		[200, ''],
	]);
	expect(t.executions.every((e) => e.error === undefined && e.mode === 'webhook')).toBe(true);
});

describe('401 for a request that does not verify: logged, no execution, nothing written, no request to the service', () => {
	/** What a refused request must leave unchanged, and the check that it did. */
	async function unchangedBy(t: TriggerHarness, apiKey: string, refuse: () => Promise<unknown>) {
		const staticData = JSON.parse(JSON.stringify(t.workflowStaticData)) as IDataObject;
		const processed = t.processedData();
		const since = await bench.lastSeq();
		const warned = jest.spyOn(Container.get(Logger), 'warn');
		await refuse();
		await settle(t);
		expect(t.executions).toEqual([]);
		expect(t.runs).toEqual([]);
		expect(t.workflowStaticData).toEqual(staticData);
		expect(t.processedData()).toEqual(processed);
		expect(await bench.requestsOf(apiKey, since)).toEqual([]);
		return warned.mock.calls.map(([message]) => String(message));
	}

	test('tampered body, signature or id, and timestamps beyond the 5-minute tolerance either way', async () => {
		const { t, endpoint, apiKey } = await publishedTrigger(bench);
		let results: Array<{ statusCode: number | null }> = [];
		const logged = await unchangedBy(t, apiKey, async () => {
			results = [
				await bench.control.send(endpoint.id, { tamper: 'body' }),
				await bench.control.send(endpoint.id, { tamper: 'signature' }),
				await bench.control.send(endpoint.id, { tamper: 'id' }),
				await bench.control.send(endpoint.id, { timestampOffsetSeconds: -301 }),
				await bench.control.send(endpoint.id, { timestampOffsetSeconds: 301 }),
			];
		});
		expect(results.map((r) => r.statusCode)).toEqual([401, 401, 401, 401, 401]);
		expect(t.responses.map((r) => [r.status, (r.body as IDataObject).reason])).toEqual([
			[401, 'signature-mismatch'],
			[401, 'signature-mismatch'],
			[401, 'signature-mismatch'],
			[401, 'timestamp-too-old'],
			[401, 'timestamp-too-new'],
		]);
		// n8n's log says why, for each (README: "The trigger does not fire", 401)
		expect(
			logged.filter((m) => m.startsWith('Marketplace Trigger refused a delivery (401)')),
		).toHaveLength(5);
		expect(logged.some((m) => /Timestamp is .* old/.test(m))).toBe(true);

		// control: the same send untampered, within the tolerance, starts a run
		const event = (orderId: number) => ({ data: { brandId: 1, orderId } });
		expect(
			(await bench.control.send(endpoint.id, { event: event(2001), timestampOffsetSeconds: -290 }))
				.statusCode,
		).toBe(200);
		await t.waitForRuns(1);
		expect(
			(await bench.control.send(endpoint.id, { event: event(2002), timestampOffsetSeconds: 290 }))
				.statusCode,
		).toBe(200);
		await t.waitForRuns(2);
	});

	test('unsigned requests, a signature with no v1 entry, and a trigger that holds no secret', async () => {
		const { t, endpoint, apiKey } = await publishedTrigger(bench);
		const event = orderEvent('evt_unsigned', 1);
		const logged = await unchangedBy(t, apiKey, async () => {
			await t.deliver(JSON.stringify(event), { 'content-type': 'application/json' });
			const headers = signedHeaders(event, [String(recordOf(t, t.webhookUrl)!.secret)]);
			await t.deliver(JSON.stringify(event), {
				...headers,
				'webhook-signature': headers['webhook-signature'].replace(/^v1,/, 'v2,'),
			});
		});
		expect(t.responses.map((r) => [r.status, (r.body as IDataObject).reason])).toEqual([
			[401, 'missing-header'],
			[401, 'no-v1-signature'],
		]);
		expect(logged).toHaveLength(2);

		// static data lost and not re-activated: the sandbox's authentic delivery is refused, and nothing is written
		const record = recordOf(t, t.webhookUrl)!;
		t.staticData = {};
		t.requests.length = 0;
		t.responses.length = 0;
		await unchangedBy(t, apiKey, async () => {
			expect((await bench.control.send(endpoint.id, {})).statusCode).toBe(401);
		});
		expect((t.responses[0].body as IDataObject).reason).toBe('no-secret');
		// control: the record back, the same send runs
		t.staticData = { endpoints: { [t.webhookUrl]: record } };
		expect((await bench.control.send(endpoint.id, {})).statusCode).toBe(200);
		await t.waitForRuns(1);
	});
});

test('the raw body bytes are verified, not a re-serialised body', async () => {
	const { t } = await publishedTrigger(bench);
	const secret = String(recordOf(t, t.webhookUrl)!.secret);
	// same JSON value, unusual spacing and key order: a re-serialising receiver would fail it
	const body =
		'{ "type":"order.created",  "id":"evt_raw_1", "createdAt":"2026-01-01T00:00:00.000Z", "data":{"orderId":5,"brandId":1} }';
	const ts = Math.floor(transportClock().now() / 1000);
	const headers = (signedOver: string) => ({
		'content-type': 'application/json',
		'webhook-id': 'evt_raw_1',
		'webhook-timestamp': String(ts),
		'webhook-signature': `v2,abc ${signWebhook('evt_raw_1', ts, Buffer.from(signedOver), parseSecret(secret))}`,
	});
	// signed over the parsed-and-serialised value, sent as the raw bytes: refused
	const reserialised = JSON.stringify(JSON.parse(body));
	expect(reserialised).not.toBe(body);
	expect((await t.deliver(body, headers(reserialised))).status).toBe(401);
	// signed over the bytes as sent: accepted
	const res = await t.deliver(body, headers(body));
	expect(res.status).toBe(200);
	await t.waitForRuns(1);
	expect(t.runs[0][0][0].json).toEqual({
		id: 'evt_raw_1',
		type: 'order.created',
		createdAt: '2026-01-01T00:00:00.000Z',
		data: { orderId: 5, brandId: 1 },
	});
});

test('event types not chosen and types unknown to us get 2xx and start nothing', async () => {
	const { t, endpoint } = await publishedTrigger(bench, { eventTypes: ['order.created'] });
	const cancelled = await bench.control.emitEvent({
		type: 'order.cancelled',
		data: { brandId: 1, orderId: 1 },
		endpointIds: [endpoint.id],
	});
	const unknown = await bench.control.emitEvent({
		type: 'order.shipped',
		data: { brandId: 1, orderId: 1 },
		endpointIds: [endpoint.id],
	});
	await eventually(async () => {
		const ds = await bench.control.deliveries(endpoint.id);
		return [cancelled.deliveryIds[0], unknown.deliveryIds[0]].every(
			(id) => ds.find((d) => d.id === id)?.status === 'Delivered',
		);
	});
	await settle(t);
	expect(t.responses.map((r) => [r.status, (r.body as IDataObject).ignored])).toEqual([
		[200, 'event-type-not-subscribed'],
		[200, 'event-type-not-subscribed'],
	]);
	expect(t.executions).toEqual([]);
	// control: a subscribed type from the same source runs
	await bench.control.emitEvent({
		type: 'order.created',
		data: { brandId: 1, orderId: 1 },
		endpointIds: [endpoint.id],
	});
	await t.waitForRuns(1);
});

test('webhook.test on the production URL: verified and answered 2xx, starts nothing; with "Emit Test Events" it runs', async () => {
	const { t, endpoint, apiKey } = await publishedTrigger(bench);
	const test = async () =>
		(await (
			await fetch(`${bench.sandbox.baseUrl}/v1/webhook-endpoints/${endpoint.id}/test`, {
				method: 'POST',
				headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': crypto.randomUUID() },
			})
		).json()) as IDataObject;
	expect(await test()).toMatchObject({ eventType: 'webhook.test', responseStatusCode: 200 });
	await settle(t);
	expect(t.responses.at(-1)).toMatchObject({ status: 200, body: { ignored: 'test-event' } });
	expect(t.executions).toEqual([]);

	t.node.parameters.options = { emitTestEvents: true };
	expect(await test()).toMatchObject({ responseStatusCode: 200 });
	await t.waitForRuns(1);
	expect(t.runs[0][0][0].json).toMatchObject({
		type: 'webhook.test',
		data: { webhookEndpointId: endpoint.id },
	});
	// a production run never carries a sample
	expect(t.runs[0][0][0].json).not.toHaveProperty('sample');
});

test('webhook() writes nothing: n8n saves no static data for a delivery, and concurrent copies of one event run once', async () => {
	const { t, brandId } = await publishedTrigger(bench, { options: { fetchCurrentState: true } });
	const before = JSON.parse(JSON.stringify(t.workflowStaticData)) as IDataObject;
	const secret = String(recordOf(t, t.webhookUrl)!.secret);
	const { order } = await bench.control.createOrder({ brandId });
	await t.waitForRuns(1);
	// three copies of one new event (another order) while the first is still reading the order
	await bench.control.injectFault({ route: 'getOrder', mode: 'hang', hangMs: 400, count: 1 });
	const event = orderEvent('evt_concurrent_1', (order.id as number) + 1000);
	const answers = await Promise.all([
		deliverSigned(t, [secret], event),
		deliverSigned(t, [secret], event),
		deliverSigned(t, [secret], event),
	]);
	expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
	await settle(t);
	expect(outputs(t).sort()).toEqual([0, 0, 1, 1]);
	expect(t.runs.map((r) => r[0][0].json.id)).toEqual([expect.any(String), 'evt_concurrent_1']);
	expect(t.executions.map((e) => e.staticDataChanged)).toEqual([false, false, false, false]);
	expect(t.workflowStaticData).toEqual(before);
	expect(t.errors).toEqual([]);
});

test('rotation overlap: after Rotate Signing Secret on Activation the service signs with both secrets and the trigger accepts either for 24 hours, then only the new one', async () => {
	const shared = new SharedClock(bench);
	shared.install();
	try {
		const { t, brandId, userId } = await publishedTrigger(bench);
		const oldSecret = String(recordOf(t, t.webhookUrl)!.secret);
		t.node.parameters.options = { rotateSecretOnActivation: true };
		await t.activate();
		await forgetActivationTraffic(t);
		const [endpoint] = await bench.endpointsOf(userId);
		const record = recordOf(t, t.webhookUrl)!;
		const newSecret = String(record.secret);
		expect(newSecret).toBe(endpoint.secret);
		expect(newSecret).not.toBe(oldSecret);
		expect(record.previousSecret).toBe(oldSecret);
		expect(Number(record.previousSecretUntil) - shared.now()).toBeGreaterThan(23.9 * 3_600_000);
		expect(endpoint.previousSecret).toBe(oldSecret);

		// the sandbox signs with both secrets
		await bench.control.createOrder({ brandId });
		await t.waitForRuns(1);
		expect(String(t.requests.at(-1)!.headers['webhook-signature']).split(' ')).toHaveLength(2);
		// each secret alone is accepted during the overlap
		expect((await deliverSigned(t, [oldSecret], orderEvent('evt_old_only', 9001))).status).toBe(
			200,
		);
		expect((await deliverSigned(t, [newSecret], orderEvent('evt_new_only', 9002))).status).toBe(
			200,
		);
		await t.waitForRuns(3);

		// 24 hours and a minute later: the previous secret is refused, the new one works, the service signs once
		await shared.advance(24 * 3_600_000 + 60_000);
		expect((await deliverSigned(t, [oldSecret], orderEvent('evt_old_late', 9003))).status).toBe(
			401,
		);
		expect((await deliverSigned(t, [newSecret], orderEvent('evt_new_late', 9004))).status).toBe(
			200,
		);
		await t.waitForRuns(4);
		await bench.control.createOrder({ brandId });
		await t.waitForRuns(5);
		expect(String(t.requests.at(-1)!.headers['webhook-signature']).split(' ')).toHaveLength(1);
		expect(t.responses.map((r) => r.status)).toEqual([200, 200, 200, 401, 200, 200]);
	} finally {
		shared.uninstall();
	}
});

describe('Fetch Current State', () => {
	test('order and brand health events carry the current record beside the event', async () => {
		const { t, brandId } = await publishedTrigger(bench, {
			eventTypes: ['order.created', 'brand_health.band_entered', 'brand_health.band_exited'],
			options: { fetchCurrentState: true },
		});
		const created = await bench.control.createOrder({ brandId });
		await t.waitForRuns(1);
		const order = await bench.control.state('orders', created.order.id as number);
		expect(t.runs[0][0][0].json).toMatchObject({ id: created.event.id, current: order });

		let band = await bench.control.setBand(brandId, {
			dimension: 'DeliveryPerformance',
			band: 'Critical',
		});
		if (band.events.length === 0)
			band = await bench.control.setBand(brandId, {
				dimension: 'DeliveryPerformance',
				band: 'Excellent',
			});
		expect(band.events.length).toBeGreaterThan(0);
		await t.waitForRuns(1 + band.events.length);
		const health = t.runs.slice(1).map((r) => r[0][0].json);
		for (const item of health) {
			expect(String(item.type)).toMatch(/^brand_health\./);
			expect(item.current).toMatchObject({ brandId });
			expect(item.currentError).toBeUndefined();
		}
	});

	test('a transient failure answers 503 and starts nothing; the service retries and the event then runs exactly once', async () => {
		const { t, brandId, endpoint } = await publishedTrigger(bench, {
			options: { fetchCurrentState: true },
		});
		await bench.control.injectFault({ route: 'getOrder', mode: '500', count: 2 });
		const created = await bench.control.createOrder({ brandId });
		const failed = await eventually(async () => {
			const d = (await bench.control.deliveries(endpoint.id)).find(
				(x) => x.eventId === created.event.id,
			);
			return d && d.attempts === 1 ? d : undefined;
		});
		expect(failed).toMatchObject({ status: 'Pending', responseStatusCode: 503 });
		await settle(t);
		expect(t.responses.at(-1)).toMatchObject({
			status: 503,
			body: { error: 'current-state-unavailable', retry: true },
		});
		expect(t.executions).toEqual([]);
		expect(t.processedData()).toBeUndefined();

		await bench.control.advanceClock(60);
		await t.waitForRuns(1);
		const done = (await bench.control.deliveries(endpoint.id)).find(
			(x) => x.eventId === created.event.id,
		)!;
		expect(done).toMatchObject({ status: 'Delivered', attempts: 2, responseStatusCode: 200 });
		expect(t.runs[0][0][0].json).toMatchObject({
			id: created.event.id,
			current: { id: created.order.id },
		});

		await bench.control.advanceClock(3 * 3600);
		await settle(t);
		expect(t.executions).toHaveLength(1);
	});

	test('a permanent failure (404) runs the event with the error noted as currentError', async () => {
		const { t, endpoint } = await publishedTrigger(bench, {
			options: { fetchCurrentState: true, includeHeaders: true },
		});
		await bench.control.emitEvent({
			type: 'order.created',
			data: { brandId: 1, orderId: 987_654 },
			endpointIds: [endpoint.id],
		});
		await t.waitForRuns(1);
		const item = t.runs[0][0][0].json;
		expect(item.current).toBeUndefined();
		expect(item.currentError).toMatchObject({ route: 'getOrder', status: 404, type: 'not-found' });
		expect(item.headers).toMatchObject({ 'webhook-id': item.id });
		expect(t.responses.map((r) => r.status)).toEqual([200]);
	});
});

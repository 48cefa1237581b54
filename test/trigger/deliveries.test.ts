/**
 * webhook() of the Marketplace Trigger in n8n-core's WebhookContext behind real HTTP, with
 * deliveries made and signed by the sandbox (standardwebhooks library): one run per event,
 * none for duplicates, forgeries, stale or unsubscribed deliveries; rotation overlap; the
 * current-state read with and without a transient failure.
 */
import type { IDataObject } from 'n8n-workflow';

import { KeySet } from '../../nodes/MarketplaceTrigger/keySet';
import { deliveryKey } from '../../nodes/MarketplaceTrigger/once';
import type { TriggerSettings } from '../../nodes/MarketplaceTrigger/memory';
import { parseSecret, signWebhook } from '../../nodes/shared/webhookVerifier';
import { transportClock } from '../transportClock';
import { useSteppedClock } from '../action/clock';
import {
	forgetActivationTraffic,
	idsStored,
	heldInMemory,
	restart,
	TriggerBench,
	eventually,
	recordOf,
	settledRuns,
	signedHeaders,
	type TriggerHarness,
} from './helpers';

const bench = new TriggerBench();
beforeAll(async () => await bench.start());
afterAll(async () => await bench.close());
afterEach(async () => {
	await bench.control.clearFaults();
	await bench.closeHarnesses();
});

async function activeTrigger(
	parameters: IDataObject = {},
	settings: Partial<TriggerSettings> = {},
) {
	const user = await bench.user();
	const t = await bench.trigger(user.apiKey, parameters, { settings });
	await t.activate();
	await forgetActivationTraffic(t);
	const [endpoint] = await bench.endpointsOf(user.userId);
	return { ...user, t, endpoint };
}

/** A delivery signed by hand with the given secrets (for what the sandbox cannot produce), to `url` if given. */
async function deliverSigned(
	t: TriggerHarness,
	secrets: string[],
	event: IDataObject,
	timestamp?: number,
	url?: string,
) {
	const body = JSON.stringify(event);
	return await t.deliver(body, signedHeaders(event, secrets, body, timestamp), { url });
}

/** order ids by event id: copies of one event name one order, other events other orders (as the service sends) */
const orderIds = new Map<string, number>();
const orderIdOf = (id: string) => {
	if (!orderIds.has(id)) orderIds.set(id, orderIds.size + 1);
	return orderIds.get(id)!;
};
const orderEvent = (id: string, orderId = orderIdOf(id)) => ({
	id,
	type: 'order.created',
	createdAt: new Date().toISOString(),
	data: { brandId: 1, orderId },
});

test('each event starts exactly one run with id, type, createdAt and data; a redelivery (same webhook-id) gets 2xx and no run', async () => {
	const { t, brandId, endpoint } = await activeTrigger({
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

	const deliveries = await bench.control.deliveries(endpoint.id);
	const first = deliveries.find((d) => d.eventId === created.event.id)!;
	const again = await bench.control.redeliver(first.id);
	expect(again.responseStatusCode).toBe(200);
	expect(await settledRuns(t)).toBe(2);
	const answers = t.responses.filter((r) => !(r.body as IDataObject).saved);
	expect(answers.at(-1)?.body).toMatchObject({ received: true, ignored: 'duplicate' });
});

test('tampered body, signature or id and stale or future timestamps get 401 and start nothing', async () => {
	const { t, endpoint } = await activeTrigger();
	const results = [
		await bench.control.send(endpoint.id, { tamper: 'body' }),
		await bench.control.send(endpoint.id, { tamper: 'signature' }),
		await bench.control.send(endpoint.id, { tamper: 'id' }),
		await bench.control.send(endpoint.id, { timestampOffsetSeconds: -301 }),
		await bench.control.send(endpoint.id, { timestampOffsetSeconds: 301 }),
	];
	expect(results.map((r) => r.statusCode)).toEqual([401, 401, 401, 401, 401]);
	expect(t.responses.map((r) => (r.body as IDataObject).reason)).toEqual([
		'signature-mismatch',
		'signature-mismatch',
		'signature-mismatch',
		'timestamp-too-old',
		'timestamp-too-new',
	]);
	expect(await settledRuns(t)).toBe(0);
	// control: the same send untampered, within the tolerance, starts a run
	expect((await bench.control.send(endpoint.id, { timestampOffsetSeconds: -290 })).statusCode).toBe(
		200,
	);
	await t.waitForRuns(1);
	// a trigger holding no secret (static data lost, not re-activated) accepts nothing
	t.staticData = {};
	expect((await bench.control.send(endpoint.id, {})).statusCode).toBe(401);
	expect(t.runs).toHaveLength(1);
});

test('the raw body bytes are verified, not a re-serialised body', async () => {
	const { t } = await activeTrigger();
	const secret = String(recordOf(t, t.webhookUrl)!.secret);
	// same JSON value, unusual spacing and key order: a re-serialising receiver would fail it
	const body =
		'{ "type":"order.created",  "id":"evt_raw_1", "createdAt":"2026-01-01T00:00:00.000Z", "data":{"orderId":5,"brandId":1} }';
	const ts = Math.floor(transportClock().now() / 1000);
	const res = await t.deliver(body, {
		'content-type': 'application/json',
		'webhook-id': 'evt_raw_1',
		'webhook-timestamp': String(ts),
		'webhook-signature': `v2,abc ${signWebhook('evt_raw_1', ts, Buffer.from(body), parseSecret(secret))}`,
	});
	expect(res.status).toBe(200);
	await t.waitForRuns(1);
	expect(t.runs[0][0][0].json).toMatchObject({ id: 'evt_raw_1', data: { orderId: 5, brandId: 1 } });
});

test('event types not chosen and types unknown to us get 2xx and start nothing', async () => {
	const { t, endpoint } = await activeTrigger({ eventTypes: ['order.created'] });
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
	expect(t.responses.map((r) => [r.status, (r.body as IDataObject).ignored])).toEqual([
		[200, 'event-type-not-subscribed'],
		[200, 'event-type-not-subscribed'],
	]);
	expect(await settledRuns(t)).toBe(0);
});

test('webhook.test: verified and answered 2xx; starts a run only with "Emit Test Events"', async () => {
	const { t, endpoint, apiKey } = await activeTrigger();
	const test = async () =>
		(await (
			await fetch(`${bench.sandbox.baseUrl}/v1/webhook-endpoints/${endpoint.id}/test`, {
				method: 'POST',
				headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': crypto.randomUUID() },
			})
		).json()) as IDataObject;
	expect(await test()).toMatchObject({ eventType: 'webhook.test', responseStatusCode: 200 });
	expect(t.responses.at(-1)?.body).toMatchObject({ ignored: 'test-event' });
	expect(await settledRuns(t)).toBe(0);

	t.node.parameters.options = { emitTestEvents: true };
	expect(await test()).toMatchObject({ responseStatusCode: 200 });
	await t.waitForRuns(1);
	expect(t.runs[0][0][0].json).toMatchObject({
		type: 'webhook.test',
		data: { webhookEndpointId: endpoint.id },
	});
});

test('accepted ids survive a restart (static data); concurrent copies of one event start one run', async () => {
	const { t, brandId, endpoint } = await activeTrigger({ options: { fetchCurrentState: true } });
	const created = await bench.control.createOrder({ brandId });
	await t.waitForRuns(1);
	const delivery = (await bench.control.deliveries(endpoint.id)).find(
		(d) => d.eventId === created.event.id,
	)!;

	// "restart": process memory gone, static data kept -> still a duplicate
	await idsStored(t);
	restart(t);
	expect((await bench.control.redeliver(delivery.id)).responseStatusCode).toBe(200);
	expect(await settledRuns(t)).toBe(1);

	// memory and the stored ids both lost: the run's check (n8n's deduplication store) keeps it out
	restart(t);
	const kept = { ...t.staticData };
	delete kept.known;
	t.staticData = kept;
	const answered = t.responses.length;
	expect((await bench.control.redeliver(delivery.id)).responseStatusCode).toBe(200);
	await t.settled();
	expect(t.responses[answered].body).toMatchObject({ ignored: 'duplicate' });
	expect(t.runs).toHaveLength(1);
	// control: that store lost too -> the same delivery runs again
	restart(t);
	t.staticData = kept;
	const row = t.processedData()!;
	await t.database.deleteProcessedData(row.workflowId, row.context);
	expect((await bench.control.redeliver(delivery.id)).responseStatusCode).toBe(200);
	await t.waitForRuns(2);

	// concurrent copies of one new event (of another order) while the first is still reading the order
	const secret = String(recordOf(t, t.webhookUrl)!.secret);
	await bench.control.injectFault({ route: 'getOrder', mode: 'hang', hangMs: 400, count: 1 });
	const event = orderEvent('evt_concurrent_1', (created.order.id as number) + 1);
	const answers = await Promise.all([
		deliverSigned(t, [secret], event),
		deliverSigned(t, [secret], event),
		deliverSigned(t, [secret], event),
	]);
	expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
	expect(await settledRuns(t)).toBe(3);
	expect(answers.filter((a) => (a.body as IDataObject).ignored === 'duplicate')).toHaveLength(2);
});

describe('what n8n saves, and the run that answers (once.ts resultSavedThenRun, run.ts)', () => {
	const storedIn = (t: TriggerHarness) =>
		KeySet.fromState(((t.staticData.known ?? {}) as IDataObject)[t.webhookUrl]);

	test("an accepted event's key is in the static data n8n saves before the run; the run answers with the trigger's JSON", async () => {
		const { t } = await activeTrigger();
		const secret = String(recordOf(t, t.webhookUrl)!.secret);
		const answer = await deliverSigned(t, [secret], orderEvent('evt_saved'));
		expect(answer).toMatchObject({ status: 200, body: { received: true, id: 'evt_saved' } });
		// the run sent the answer: its execution holds it, and it started before the answer came
		expect(t.executions).toHaveLength(1);
		expect(t.executions[0]).toMatchObject({ source: 'webhook', mode: 'webhook' });
		expect(storedIn(t).has(deliveryKey('evt_saved'), Date.now())).toBe(true);
		expect(t.errors).toEqual([]);
	});

	test("a key dropped by another process's save is written again by this process's next request, and by every later one", async () => {
		const { t } = await activeTrigger();
		const secret = String(recordOf(t, t.webhookUrl)!.secret);
		const dropSeen = () => {
			// another process saves a copy it read before this one's save
			const kept = { ...t.staticData };
			delete kept.known;
			t.staticData = kept;
		};
		await deliverSigned(t, [secret], orderEvent('evt_a'));
		expect(heldInMemory(t, t.webhookUrl)).toBe(1);
		dropSeen();
		await deliverSigned(t, [secret], orderEvent('evt_b'));
		expect(storedIn(t).has(deliveryKey('evt_a'), Date.now())).toBe(true);
		dropSeen();
		await deliverSigned(t, [secret], orderEvent('evt_c'));
		for (const id of ['evt_a', 'evt_b', 'evt_c'])
			expect(storedIn(t).has(deliveryKey(id), Date.now())).toBe(true);
		expect(heldInMemory(t, t.webhookUrl)).toBe(3);
		await t.settled();
		expect(t.runs).toHaveLength(3);
	});

	test("a copy at a second process that read the static data before the first's save: the run's check keeps it out and answers 'duplicate'", async () => {
		const { t, apiKey } = await activeTrigger();
		// the same webhook URL, served by a second process of its own
		const other = await bench.trigger(
			apiKey,
			{},
			{ database: t.database, webhookBaseUrl: t.webhookBaseUrl },
		);
		const atOther = `http://127.0.0.1:${other.listenPort}${new URL(t.webhookUrl).pathname}`;
		const secret = String(recordOf(t, t.webhookUrl)!.secret);
		expect((await deliverSigned(t, [secret], orderEvent('evt_twice'))).body).toEqual({
			received: true,
			id: 'evt_twice',
		});
		// the second process's copy of the static data predates the first's save
		const kept = { ...t.staticData };
		delete kept.known;
		t.staticData = kept;
		const copy = await deliverSigned(other, [secret], orderEvent('evt_twice'), undefined, atOther);
		expect(copy.body).toEqual({ received: true, ignored: 'duplicate', id: 'evt_twice' });
		await other.settled();
		// the run started, and let nothing through
		expect(other.executions).toHaveLength(1);
		expect(other.runs).toHaveLength(0);
		expect(t.runs).toHaveLength(1);
	});

	test("the run's check records each order: a later catch-up of an order whose event ran keeps it out", async () => {
		const { t } = await activeTrigger();
		const secret = String(recordOf(t, t.webhookUrl)!.secret);
		await deliverSigned(t, [secret], orderEvent('evt_order_7', 7));
		expect(t.processedData()?.value.data).toHaveLength(2);
	});
});

test('a redelivered duplicate is remembered from its own arrival on (the service retries after the next gap)', async () => {
	const { t } = await activeTrigger();
	const secret = String(recordOf(t, t.webhookUrl)!.secret);
	// an event created 40 minutes ago: this is at least its fourth attempt, next gap 2 h
	const event = {
		...orderEvent('evt_late'),
		createdAt: new Date(Date.now() - 40 * 60_000).toISOString(),
	};
	expect((await deliverSigned(t, [secret], event)).status).toBe(200);
	await idsStored(t);
	const stored = () => KeySet.fromState(((t.staticData.known ?? {}) as IDataObject)[t.webhookUrl]);
	expect(stored().has(deliveryKey('evt_late'), Date.now() + 2 * 3_600_000)).toBe(true);
	expect(stored().has(deliveryKey('evt_late'), Date.now() + 2 * 3_600_000 + 11 * 60_000)).toBe(
		false,
	);
	await t.waitForRuns(1);
});

test('rotation overlap: after a rotation it made, the trigger accepts the previous secret for 24 hours, then only the new one', async () => {
	const { t, brandId, userId } = await activeTrigger();
	const oldSecret = String(recordOf(t, t.webhookUrl)!.secret);
	t.node.parameters.options = { rotateSecretOnActivation: true };
	await t.activate();
	const [endpoint] = await bench.endpointsOf(userId);
	const record = recordOf(t, t.webhookUrl)!;
	expect(record.secret).toBe(endpoint.secret);
	expect(record.secret).not.toBe(oldSecret);
	expect(record.previousSecret).toBe(oldSecret);
	expect(Number(record.previousSecretUntil) - Date.now()).toBeGreaterThan(23.9 * 3_600_000);
	expect(endpoint.previousSecret).toBe(oldSecret);

	// the sandbox now signs with both secrets
	await bench.control.createOrder({ brandId });
	await t.waitForRuns(1);
	const signature = String(t.requests.at(-1)!.headers['webhook-signature']);
	expect(signature.split(' ')).toHaveLength(2);

	// each secret alone is accepted during the overlap
	expect((await deliverSigned(t, [oldSecret], orderEvent('evt_old_only'))).status).toBe(200);
	expect((await deliverSigned(t, [String(record.secret)], orderEvent('evt_new_only'))).status).toBe(
		200,
	);
	await t.waitForRuns(3);

	// after the overlap the previous secret is refused, the new one still works
	t.staticData = {
		...t.staticData,
		endpoints: { [t.webhookUrl]: { ...record, previousSecretUntil: Date.now() - 1 } },
	};
	expect((await deliverSigned(t, [oldSecret], orderEvent('evt_old_late'))).status).toBe(401);
	expect((await deliverSigned(t, [String(record.secret)], orderEvent('evt_new_late'))).status).toBe(
		200,
	);
	await bench.control.advanceClock(24 * 3600 + 60);
	await bench.control.createOrder({ brandId });
	await t.waitForRuns(5);
	expect(String(t.requests.at(-1)!.headers['webhook-signature']).split(' ')).toHaveLength(1);
});

describe('a secret rotated outside the trigger (Webhook Endpoint > Rotate Secret, or any API client)', () => {
	// the trigger's secret bookkeeping and the sandbox's schedule move together, without waiting a day
	const clock = useSteppedClock(() => bench.control);
	const rotateOutside = async (endpointId: number, apiKey: string) =>
		(await (
			await fetch(`${bench.sandbox.baseUrl}/v1/webhook-endpoints/${endpointId}/rotate-secret`, {
				method: 'POST',
				headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': crypto.randomUUID() },
			})
		).json()) as IDataObject;
	const rotations = async (apiKey: string, since: number) =>
		(await bench.requestsOf(apiKey, since)).filter((r) => r.route === 'rotateWebhookEndpointSecret')
			.length;

	test('within the 24-hour overlap: the first authentic delivery shows it, the trigger rotates again and holds the current secret', async () => {
		const { t, brandId, endpoint, apiKey, userId } = await activeTrigger();
		const outside = await rotateOutside(endpoint.id, apiKey);
		expect(String(outside.secret)).toMatch(/^whsec_/);
		const since = await bench.lastSeq();
		await bench.control.createOrder({ brandId });
		await t.waitForRuns(1);
		expect(await rotations(apiKey, since)).toBe(1);
		const [now] = await bench.endpointsOf(userId);
		expect(recordOf(t, t.webhookUrl)!.secret).toBe(now.secret);
		expect(now.previousSecret).toBe(outside.secret);
		// later deliveries (signed with the trigger's secret and the outside one) rotate nothing more
		await bench.control.createOrder({ brandId });
		await t.waitForRuns(2);
		expect(await rotations(apiKey, since)).toBe(1);
	});

	test('after the overlap the service signs only with the secret the trigger lacks: 401, one rotation, and the retry a minute later runs once', async () => {
		const { t, brandId, endpoint, apiKey } = await activeTrigger();
		await rotateOutside(endpoint.id, apiKey);
		await clock().advance((24 * 3600 + 60) * 1000);
		const since = await bench.lastSeq();
		const { event } = await bench.control.createOrder({ brandId });
		await eventually(async () =>
			(await bench.control.deliveries(endpoint.id)).find(
				(d) => d.eventId === event.id && d.attempts >= 1,
			),
		);
		const first = (await bench.control.deliveries(endpoint.id)).find(
			(d) => d.eventId === event.id,
		)!;
		expect(first.responseStatusCode).toBe(401);
		expect(await settledRuns(t)).toBe(0);
		expect(await rotations(apiKey, since)).toBe(1);
		// more unverifiable requests (forgeries, or further events) rotate nothing more for 10 minutes
		const stranger = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
		expect((await deliverSigned(t, [stranger], orderEvent('evt_forged'))).status).toBe(401);
		expect(await rotations(apiKey, since)).toBe(1);
		// the service's retry after 1 minute is signed with the trigger's new secret too
		await clock().advance(60_000);
		await t.waitForRuns(1);
		expect(t.runs[0][0][0].json.id).toBe(event.id);
		const delivered = (await bench.control.deliveries(endpoint.id)).find(
			(d) => d.eventId === event.id,
		)!;
		expect(delivered).toMatchObject({ status: 'Delivered', responseStatusCode: 200, attempts: 2 });
	});
});

describe('refusals: what is known, and no rotation on unauthenticated evidence', () => {
	const clock = useSteppedClock(() => bench.control);
	const rotations = async (apiKey: string, since: number) =>
		(await bench.requestsOf(apiKey, since)).filter((r) => r.route === 'rotateWebhookEndpointSecret')
			.length;
	/** Signed over one body, sent with another: a proxy that re-encoded it on the way. */
	async function deliverChanged(t: TriggerHarness, secret: string, event: IDataObject) {
		return await t.deliver(JSON.stringify(event, null, 1), signedHeaders(event, [secret]));
	}

	test('a changed body within 24 hours of a verified delivery: 401, no rotation; the count and last reason come on the next event', async () => {
		const { t, brandId, apiKey } = await activeTrigger();
		const secret = String(recordOf(t, t.webhookUrl)!.secret);
		await bench.control.createOrder({ brandId });
		await t.waitForRuns(1);
		expect(t.runs[0][0][0].json.refusedDeliveries).toBeUndefined();
		await idsStored(t);
		const since = await bench.lastSeq();
		// 23 hours later (the service would still sign with a previous secret too): nothing explains a mismatch but the body
		await clock().advance(23 * 3_600_000);
		expect(await deliverChanged(t, secret, orderEvent('evt_changed_1'))).toMatchObject({
			status: 401,
			body: { reason: 'signature-mismatch' },
		});
		expect(await deliverChanged(t, secret, orderEvent('evt_changed_2'))).toMatchObject({
			status: 401,
		});
		expect(
			(
				await deliverSigned(
					t,
					[secret],
					orderEvent('evt_stale'),
					Math.floor(transportClock().now() / 1000) - 400,
				)
			).body,
		).toMatchObject({ reason: 'timestamp-too-old' });
		expect(await rotations(apiKey, since)).toBe(0);
		expect(recordOf(t, t.webhookUrl)!.secret).toBe(secret);
		expect(await settledRuns(t)).toBe(1);

		await bench.control.createOrder({ brandId });
		await t.waitForRuns(2);
		expect(t.runs[1][0][0].json.refusedDeliveries).toMatchObject({
			count: 3,
			lastReason: 'timestamp-too-old',
			lastMessage: expect.stringMatching(
				/^Timestamp is 40\d s old \(tolerance 300 s\)\. Check this n8n host's clock/,
			),
		});
		// shown once
		await bench.control.createOrder({ brandId });
		await t.waitForRuns(3);
		expect(t.runs[2][0][0].json.refusedDeliveries).toBeUndefined();
		expect(await rotations(apiKey, since)).toBe(0);
	});

	test('the refusal message says why a mismatch is not taken for a rotation elsewhere', async () => {
		const { t, brandId } = await activeTrigger();
		const secret = String(recordOf(t, t.webhookUrl)!.secret);
		expect((await deliverChanged(t, secret, orderEvent('evt_changed_3'))).status).toBe(401);
		await bench.control.createOrder({ brandId });
		await t.waitForRuns(1);
		const refused = t.runs[0][0][0].json.refusedDeliveries as IDataObject;
		expect(refused).toMatchObject({ count: 1, lastReason: 'signature-mismatch' });
		expect(String(refused.lastMessage)).toMatch(
			/body was changed on its way .* or the request is forged\. It is not a secret rotation elsewhere/,
		);
	});

	test('the time of the last verified delivery survives a restart: a changed body after it rotates nothing', async () => {
		const { t, brandId, apiKey } = await activeTrigger();
		const secret = String(recordOf(t, t.webhookUrl)!.secret);
		// the endpoint's secret is 30 hours old, its last verified delivery 1 hour old
		await clock().advance(29 * 3_600_000);
		await bench.control.createOrder({ brandId });
		await t.waitForRuns(1);
		await idsStored(t);
		expect(Number(recordOf(t, t.webhookUrl)!.lastVerifiedAt)).toBeGreaterThan(
			clock().now() - 60_000,
		);
		await clock().advance(3_600_000);
		restart(t);
		const since = await bench.lastSeq();
		expect((await deliverChanged(t, secret, orderEvent('evt_changed_4'))).status).toBe(401);
		expect(await rotations(apiKey, since)).toBe(0);
		// control: 24 hours after that delivery, the same mismatch is taken for a rotation elsewhere (once)
		await clock().advance(24 * 3_600_000);
		expect((await deliverChanged(t, secret, orderEvent('evt_changed_5'))).status).toBe(401);
		expect(await rotations(apiKey, since)).toBe(1);
	});
});

describe('Fetch Current State', () => {
	test('order and brand health events carry the current record beside the event', async () => {
		const { t, brandId } = await activeTrigger({
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
			expect(item.current).toBeDefined();
			expect(item.currentError).toBeUndefined();
		}
	});

	test('a transient failure answers 503 without recording the id; the service retry then runs exactly once', async () => {
		const { t, brandId, endpoint } = await activeTrigger({ options: { fetchCurrentState: true } });
		await bench.control.injectFault({ route: 'getOrder', mode: '500', count: 2 });
		const created = await bench.control.createOrder({ brandId });
		const failed = await eventually(async () => {
			const d = (await bench.control.deliveries(endpoint.id)).find(
				(x) => x.eventId === created.event.id,
			);
			return d && d.attempts === 1 ? d : undefined;
		});
		expect(failed).toMatchObject({ status: 'Pending', responseStatusCode: 503 });
		expect(t.responses.at(-1)?.body).toMatchObject({
			error: 'current-state-unavailable',
			status: 500,
		});
		expect(await settledRuns(t)).toBe(0);

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
		expect(await settledRuns(t)).toBe(1);
	});

	test('a permanent failure (404) emits the event with the error noted', async () => {
		const { t, endpoint } = await activeTrigger({
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
	});
});

/**
 * webhook() of the Marketplace Trigger in n8n-core's WebhookContext behind real HTTP, with
 * deliveries made and signed by the sandbox (standardwebhooks library): one run per event,
 * none for duplicates, forgeries, stale or unsubscribed deliveries; rotation overlap; the
 * current-state read with and without a transient failure.
 */
import type { IDataObject } from 'n8n-workflow';

import { DedupStore } from '../../nodes/MarketplaceTrigger/store';
import { deliveryKey } from '../../nodes/MarketplaceTrigger/store';
import { DEFAULT_SETTINGS, type TriggerSettings } from '../../nodes/MarketplaceTrigger/memory';
import { SAVE_REQUEST_TYPE } from '../../nodes/MarketplaceTrigger/saveViaOwnWebhook';
import { parseSecret, signWebhook } from '../../nodes/shared/webhookVerifier';
import { transportClock } from '../../nodes/shared/transport/clock';
import { useSteppedClock } from '../action/clock';
import {
	forgetActivationTraffic,
	idsStored,
	pendingCount,
	restart,
	TriggerBench,
	eventually,
	recordOf,
	settledRuns,
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

/** A delivery signed by hand with the given secrets (for what the sandbox cannot produce). */
async function deliverSigned(
	t: TriggerHarness,
	secrets: string[],
	event: IDataObject,
	timestamp = Math.floor(transportClock().now() / 1000),
) {
	const body = JSON.stringify(event);
	const signature = secrets
		.map((s) => signWebhook(String(event.id), timestamp, Buffer.from(body), parseSecret(s)))
		.join(' ');
	return await t.deliver(body, {
		'content-type': 'application/json',
		'webhook-id': String(event.id),
		'webhook-timestamp': String(timestamp),
		'webhook-signature': signature,
	});
}

const orderEvent = (id: string, orderId = 1) => ({
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

	// control: memory and the stored ids both lost -> the same delivery runs again
	restart(t);
	const kept = { ...t.staticData };
	delete kept.seen;
	t.staticData = kept;
	expect((await bench.control.redeliver(delivery.id)).responseStatusCode).toBe(200);
	await t.waitForRuns(2);

	// concurrent copies of one new event while the first is still reading the order
	const secret = String(recordOf(t, t.webhookUrl)!.secret);
	await bench.control.injectFault({ route: 'getOrder', mode: 'hang', hangMs: 400, count: 1 });
	const event = orderEvent('evt_concurrent_1', created.order.id as number);
	const answers = await Promise.all([
		deliverSigned(t, [secret], event),
		deliverSigned(t, [secret], event),
		deliverSigned(t, [secret], event),
	]);
	expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
	expect(await settledRuns(t)).toBe(3);
	expect(answers.filter((a) => (a.body as IDataObject).ignored === 'duplicate')).toHaveLength(2);
});

describe('saving accepted ids (saveViaOwnWebhook.ts); the clock is injected', () => {
	const wake: Array<() => void> = [];
	/** Ends the save loop's current wait. */
	const tick = async () => {
		await eventually(() => wake.length > 0);
		wake.splice(0).forEach((resolve) => resolve());
	};
	let waits: number[] = [];
	let now = Date.now();
	/** The trigger's settings with a clock the test moves: each wait of the save loop ends at `tick()`, its time passed. */
	const steered = (settings: Partial<TriggerSettings> = {}): Partial<TriggerSettings> => ({
		saveEveryMs: DEFAULT_SETTINGS.saveEveryMs,
		firstSaveMs: DEFAULT_SETTINGS.firstSaveMs,
		confirmAfterMs: 60_000,
		clock: {
			now: () => now,
			// time passes while the loop sleeps: at least `ms` when it wakes
			sleep: async (ms: number) => {
				waits.push(ms);
				const until = now + ms;
				await new Promise<void>((resolve) => wake.push(resolve));
				now = Math.max(now, until);
			},
		},
		...settings,
	});
	beforeEach(() => {
		waits = [];
		now = Date.now();
	});
	afterEach(() => wake.splice(0).forEach((resolve) => resolve()));
	const storedIn = (t: TriggerHarness) =>
		DedupStore.fromState(((t.staticData.seen ?? {}) as IDataObject)[t.webhookUrl]);
	const saveRequests = (t: TriggerHarness, since: number) =>
		t.requests.slice(since).filter((r) => String(r.headers['webhook-id']).startsWith('save_'))
			.length;

	test("a burst is answered by n8n's path with the trigger's JSON, saved by one save request, and survives a restart", async () => {
		const { t } = await activeTrigger({}, steered());
		const secret = String(recordOf(t, t.webhookUrl)!.secret);
		const before = t.requests.length;
		const burst = ['evt_b1', 'evt_b2', 'evt_b3', 'evt_b4', 'evt_b5'];
		const answers = await Promise.all(
			burst.map(async (id) => await deliverSigned(t, [secret], orderEvent(id))),
		);
		expect(answers.map((a) => [a.status, a.body])).toEqual(
			burst.map((id) => [200, { received: true, id }]),
		);
		await t.waitForRuns(5);
		// n8n saves nothing an accepted delivery changed (it answers after registering the execution)
		expect(burst.filter((id) => storedIn(t).has(deliveryKey(id), Date.now()))).toEqual([]);
		await tick();
		await eventually(() => burst.every((id) => storedIn(t).has(deliveryKey(id), Date.now())));
		expect(saveRequests(t, before)).toBe(1);
		// after a quiet moment the first save request goes out firstSaveMs after the first key
		expect(waits[0]).toBe(DEFAULT_SETTINGS.firstSaveMs);
		expect(t.responses.at(-1)!.body).toEqual({
			received: true,
			saved: true,
			missing: expect.stringMatching(/^[A-Za-z0-9_-]{60}$/),
			missingOrders: expect.any(String),
		});
		// "restart": process memory gone; redeliveries of all five start nothing
		restart(t);
		for (const id of burst) {
			expect((await deliverSigned(t, [secret], orderEvent(id))).body).toEqual({
				received: true,
				ignored: 'duplicate',
				id,
			});
		}
		expect(await settledRuns(t)).toBe(5);
	});

	test("an id dropped by another process's concurrent save is saved again; confirmed once a save request finds it saved", async () => {
		const { t } = await activeTrigger({}, steered({ confirmAfterMs: 0 }));
		const secret = String(recordOf(t, t.webhookUrl)!.secret);
		expect((await deliverSigned(t, [secret], orderEvent('evt_overwritten'))).status).toBe(200);
		const before = structuredClone(t.staticData);
		await tick();
		await eventually(() => storedIn(t).has(deliveryKey('evt_overwritten'), Date.now()));
		expect(t.responses.at(-1)!.body).toMatchObject({
			saved: true,
			missing: deliveryKey('evt_overwritten'),
		});
		// another processor, which read the static data before that save, saves its own copy after it
		t.staticData = before;
		await tick();
		await eventually(() => storedIn(t).has(deliveryKey('evt_overwritten'), Date.now()));
		expect(t.responses.at(-1)!.body).toMatchObject({
			saved: true,
			missing: deliveryKey('evt_overwritten'),
		});
		expect(pendingCount(t, t.webhookUrl)).toBe(1);
		// the next save request finds it saved and confirms it
		await tick();
		await eventually(() => pendingCount(t, t.webhookUrl) === 0);
		expect(t.responses.at(-1)!.body).toMatchObject({ received: true, saved: true, missing: '' });
		restart(t);
		expect((await deliverSigned(t, [secret], orderEvent('evt_overwritten'))).body).toMatchObject({
			ignored: 'duplicate',
		});
		expect(await settledRuns(t)).toBe(1);
	});

	test('an id is confirmed only by a save request sent confirmAfterMs after its acceptance; none is sent before it is due', async () => {
		const { t } = await activeTrigger({}, steered());
		const secret = String(recordOf(t, t.webhookUrl)!.secret);
		const before = t.requests.length;
		expect((await deliverSigned(t, [secret], orderEvent('evt_young'))).status).toBe(200);
		await tick();
		await eventually(() => storedIn(t).has(deliveryKey('evt_young'), Date.now()));
		// saved, but too young to be confirmed: another process's request may still be running, and
		// while nothing is due the loop only waits
		// (the clock moves only while the loop sleeps)
		const asleep = async () => await eventually(() => wake.length > 0);
		for (let i = 0; i < 5; i++) await tick();
		await asleep();
		expect(saveRequests(t, before)).toBe(1);
		expect(pendingCount(t, t.webhookUrl)).toBe(1);
		now += 60_000;
		await tick();
		await eventually(() => pendingCount(t, t.webhookUrl) === 0);
		expect(saveRequests(t, before)).toBe(2);
		// the loop looks every firstSaveMs while keys are pending
		expect(new Set(waits)).toEqual(new Set([DEFAULT_SETTINGS.firstSaveMs]));
	});

	test('a burst still arriving extends the first wait by firstSaveMs, up to saveEveryMs after its first id; one save request for all', async () => {
		const { t } = await activeTrigger({}, steered());
		const secret = String(recordOf(t, t.webhookUrl)!.secret);
		const before = t.requests.length;
		const started = now;
		expect((await deliverSigned(t, [secret], orderEvent('evt_burst_a'))).status).toBe(200);
		// one more of the burst during each wait (150 ms into it): the wait goes on
		for (const id of ['evt_burst_b', 'evt_burst_c', 'evt_burst_d', 'evt_burst_e']) {
			await eventually(() => wake.length > 0);
			now += 150;
			expect((await deliverSigned(t, [secret], orderEvent(id))).status).toBe(200);
			await tick();
		}
		// saveEveryMs after the first id: no more waiting, though evt_burst_e came during the last wait
		await eventually(() =>
			['a', 'b', 'c', 'd', 'e'].every((x) =>
				storedIn(t).has(deliveryKey(`evt_burst_${x}`), Date.now()),
			),
		);
		expect(saveRequests(t, before)).toBe(1);
		expect(waits.slice(0, 4)).toEqual([250, 250, 250, 250]);
		expect(now - started).toBe(DEFAULT_SETTINGS.saveEveryMs);
	});

	test('when every pending id is saved, a request only to confirm goes out at most every confirmEveryMs', async () => {
		const { t } = await activeTrigger({}, steered({ confirmAfterMs: 1, confirmEveryMs: 5_000 }));
		const secret = String(recordOf(t, t.webhookUrl)!.secret);
		const before = t.requests.length;
		expect((await deliverSigned(t, [secret], orderEvent('evt_confirm'))).status).toBe(200);
		await tick();
		await eventually(() => storedIn(t).has(deliveryKey('evt_confirm'), Date.now()));
		// due for confirmation at once (confirmAfterMs 1), yet nothing goes out within confirmEveryMs of the save
		await eventually(() => wake.length > 0);
		const savedAt = now;
		while (now + DEFAULT_SETTINGS.firstSaveMs < savedAt + 5_000) {
			await tick();
			await eventually(() => wake.length > 0);
		}
		expect(saveRequests(t, before)).toBe(1);
		expect(pendingCount(t, t.webhookUrl)).toBe(1);
		await tick();
		await eventually(() => pendingCount(t, t.webhookUrl) === 0);
		expect(saveRequests(t, before)).toBe(2);
	});

	test('a new id waits at most saveEveryMs while older ids are pending: the next tick saves it with one save request', async () => {
		const { t } = await activeTrigger({}, steered());
		const secret = String(recordOf(t, t.webhookUrl)!.secret);
		const before = t.requests.length;
		expect((await deliverSigned(t, [secret], orderEvent('evt_old'))).status).toBe(200);
		await tick();
		await eventually(() => storedIn(t).has(deliveryKey('evt_old'), Date.now()));
		await eventually(() => wake.length > 0);
		for (const id of ['evt_new_1', 'evt_new_2'])
			expect((await deliverSigned(t, [secret], orderEvent(id))).status).toBe(200);
		await tick();
		await eventually(() =>
			['evt_new_1', 'evt_new_2'].every((id) => storedIn(t).has(deliveryKey(id), Date.now())),
		);
		expect(saveRequests(t, before)).toBe(2);
	});

	test('an id found saved is not given up, however many save requests carry it before it can be confirmed', async () => {
		const { t } = await activeTrigger({}, steered());
		const secret = String(recordOf(t, t.webhookUrl)!.secret);
		expect((await deliverSigned(t, [secret], orderEvent('evt_first'))).status).toBe(200);
		await tick();
		await eventually(() => storedIn(t).has(deliveryKey('evt_first'), Date.now()));
		// every save request carries evt_first too (found saved each time)
		const { maxFailedSaves } = DEFAULT_SETTINGS;
		for (let i = 0; i < maxFailedSaves + 2; i++) {
			expect((await deliverSigned(t, [secret], orderEvent(`evt_next_${i}`))).status).toBe(200);
			await tick();
			await eventually(() => storedIn(t).has(deliveryKey(`evt_next_${i}`), Date.now()));
		}
		expect(pendingCount(t, t.webhookUrl)).toBe(maxFailedSaves + 3);
		expect((await deliverSigned(t, [secret], orderEvent('evt_last'))).status).toBe(200);
		await t.waitForRuns(maxFailedSaves + 4);
		expect(t.runs.at(-1)![0][0].json.storageWarning).toBeUndefined();
	});

	test('a save request needs the signature like any delivery', async () => {
		const { t } = await activeTrigger();
		const stranger = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
		const save = {
			id: 'save_forged',
			type: SAVE_REQUEST_TYPE,
			createdAt: new Date().toISOString(),
			data: { seen: { v: 2, e: {} } },
		};
		expect((await deliverSigned(t, [stranger], save)).status).toBe(401);
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
	const stored = () =>
		DedupStore.fromState(((t.staticData.seen ?? {}) as IDataObject)[t.webhookUrl]);
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
		const signed = JSON.stringify(event);
		const timestamp = Math.floor(transportClock().now() / 1000);
		return await t.deliver(JSON.stringify(event, null, 1), {
			'content-type': 'application/json',
			'webhook-id': String(event.id),
			'webhook-timestamp': String(timestamp),
			'webhook-signature': signWebhook(
				String(event.id),
				timestamp,
				Buffer.from(signed),
				parseSecret(secret),
			),
		});
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

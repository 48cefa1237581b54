/**
 * "Listen for test event" in n8n-core's engine against the sandbox over real HTTP (sample.ts): while
 * the node listens (create() in mode manual registered the test URL), the user sends Webhook Endpoint
 * > Test to the endpoint of the test URL, and the trigger answers that verified webhook.test with a
 * sample shaped like the first subscribed event type's items, from the newest record or synthetic,
 * marked `sample: true`. A run on the test URL records nothing in n8n's deduplication store.
 * (A webhook.test on the production URL gets no sample: deliveries.test.ts.)
 */
import type { IDataObject } from 'n8n-workflow';

import { processedDataHash } from '../engine/triggers';
import { forgetActivationTraffic, recordOf, settle, TriggerBench } from './helpers';

const bench = new TriggerBench();
beforeAll(async () => await bench.start());
afterAll(async () => await bench.close());
afterEach(async () => await bench.closeHarnesses());

/** Webhook Endpoint > Test, as the Marketplace node sends it: the service's delivery record. */
async function sendTest(apiKey: string, endpointId: number): Promise<IDataObject> {
	const res = await fetch(`${bench.sandbox.baseUrl}/v1/webhook-endpoints/${endpointId}/test`, {
		method: 'POST',
		headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': crypto.randomUUID() },
	});
	expect(res.status).toBe(200);
	return (await res.json()) as IDataObject;
}

/** Listens for a test event (checkExists + create on the test URL), with the listening's own traffic forgotten. */
async function listening(apiKey: string, userId: number, parameters: IDataObject) {
	const t = await bench.trigger(apiKey, parameters);
	await t.activate('manual');
	await forgetActivationTraffic(t);
	const endpoint = (await bench.endpointsOf(userId)).find((e) => e.url === t.testWebhookUrl)!;
	expect(endpoint).toBeDefined();
	return { t, endpoint };
}

/** Listens, sends a test to the test URL's endpoint, and returns the one item of the run it starts and how long that took. */
async function listen(apiKey: string, userId: number, parameters: IDataObject) {
	const { t, endpoint } = await listening(apiKey, userId, parameters);
	expect(t.runs).toEqual([]);
	const started = Date.now();
	const delivery = await sendTest(apiKey, endpoint.id);
	await t.waitForRuns(1, 8000);
	const ms = Date.now() - started;
	expect(delivery).toMatchObject({ eventType: 'webhook.test', responseStatusCode: 200 });
	expect(t.runs[0]).toHaveLength(1);
	expect(t.runs[0][0]).toHaveLength(1);
	return { t, endpoint, item: t.runs[0][0][0].json, ms };
}

/** The item a production run gives for a real event of `type` (same parameters). */
async function productionItem(
	apiKey: string,
	parameters: IDataObject,
	emit: () => Promise<unknown>,
) {
	const t = await bench.trigger(apiKey, parameters);
	await t.activate();
	await emit();
	await t.waitForRuns(1);
	return t.runs[0][0][0].json;
}

const keysOf = (json: IDataObject) =>
	Object.keys(json)
		.filter((k) => !k.startsWith('sample'))
		.sort();

describe.each([false, true])('Fetch Current State %s', (fetchCurrentState) => {
	test('order events: the newest order, shaped like a production item of the first subscribed type, within seconds', async () => {
		const { apiKey, brandId, userId } = await bench.user();
		await bench.control.createOrder({ brandId });
		const newest = (await bench.control.createOrder({ brandId })).order;
		const parameters = {
			eventTypes: ['order.cancelled', 'order.created'],
			options: { fetchCurrentState },
		};
		const { t, item, ms } = await listen(apiKey, userId, parameters);
		expect(ms).toBeLessThan(3000);
		expect(item).toMatchObject({
			type: 'order.created', // first in the table's order (normalised), as production subscribes
			data: { brandId, orderId: newest.id },
			sample: true,
			sampleSource: 'newest-order',
		});
		expect(String(item.sampleNote)).toMatch(new RegExp(`newest order \\(${newest.id}\\)`));
		if (fetchCurrentState) expect(item.current).toEqual(newest);
		else expect(item).not.toHaveProperty('current');
		// the delivery was a real one: a verified webhook.test on the test URL, answered 200
		expect(t.requests.map((r) => r.mode)).toEqual(['manual']);
		expect(t.responses.map((r) => r.status)).toEqual([200]);
		expect(JSON.parse(t.requests[0].rawBody.toString()).type).toBe('webhook.test');
		expect(item.id).toBe(t.requests[0].headers['webhook-id']);
		expect(t.executions.map((e) => e.mode)).toEqual(['manual']);

		// a production item of the same parameters has the same fields (besides the sample marker)
		const real = await productionItem(
			apiKey,
			parameters,
			async () => await bench.control.createOrder({ brandId }),
		);
		expect(keysOf(item)).toEqual(keysOf(real));
		expect(real).not.toHaveProperty('sample');
		expect(recordOf(t, t.testWebhookUrl)).toBeDefined();
		// a sample is not an event: nothing is recorded
		expect(t.processedData()).toBeUndefined();
	});

	test('order events without any order: a synthetic sample, clearly labelled', async () => {
		const { apiKey, userId } = await bench.user([4242]);
		const { item } = await listen(apiKey, userId, {
			eventTypes: ['order.returned'],
			options: { fetchCurrentState },
		});
		expect(item).toMatchObject({
			type: 'order.returned',
			data: { brandId: 0, orderId: 0 },
			sample: true,
			sampleSource: 'synthetic',
		});
		expect(String(item.sampleNote)).toMatch(
			/made-up order\.returned event: your account has no order yet/,
		);
		if (fetchCurrentState) expect(item.current).toMatchObject({ id: 0, status: 'Created' });
	});

	test('brand health events: the brand health of the first brand, shaped like a production item', async () => {
		const { apiKey, brandId, userId } = await bench.user();
		const parameters = { eventTypes: ['brand_health.band_exited'], options: { fetchCurrentState } };
		const { item } = await listen(apiKey, userId, parameters);
		expect(item).toMatchObject({
			type: 'brand_health.band_exited',
			data: { brandId },
			sample: true,
			sampleSource: 'brand-health',
		});
		const data = item.data as IDataObject;
		expect(typeof data.dimension).toBe('string');
		expect(typeof data.band).toBe('string');
		if (fetchCurrentState)
			expect(item.current).toMatchObject({
				brandId,
				dimensions: expect.arrayContaining([
					expect.objectContaining({ dimension: data.dimension, band: data.band }),
				]),
			});
		const real = await productionItem(
			apiKey,
			parameters,
			async () =>
				await bench.control.setBand(brandId, {
					dimension: String(data.dimension),
					band: data.band === 'Critical' ? 'Excellent' : 'Critical',
				}),
		);
		expect(keysOf(item)).toEqual(keysOf(real));
	});

	test('brand health events without brand health: a synthetic sample, clearly labelled', async () => {
		const { apiKey, userId } = await bench.user([4243]);
		const { item } = await listen(apiKey, userId, {
			eventTypes: ['brand_health.band_entered'],
			options: { fetchCurrentState },
		});
		expect(item).toMatchObject({
			type: 'brand_health.band_entered',
			data: { brandId: 0 },
			sample: true,
			sampleSource: 'synthetic',
		});
		expect(String(item.sampleNote)).toMatch(/made-up brand_health\.band_entered event/);
	});
});

test("Include Headers: the sample carries the test delivery's headers", async () => {
	const { apiKey, brandId, userId } = await bench.user();
	await bench.control.createOrder({ brandId });
	const { item } = await listen(apiKey, userId, { options: { includeHeaders: true } });
	expect((item.headers as IDataObject)['webhook-id']).toBe(item.id);
	expect(item).toMatchObject({ sample: true, sampleSource: 'newest-order' });
});

test('a run on the test URL records nothing: a real event runs there each time it arrives, and the store stays empty', async () => {
	const { apiKey, brandId, userId } = await bench.user();
	const { t, endpoint } = await listening(apiKey, userId, {});
	const { event } = await bench.control.createOrder({ brandId });
	await t.waitForRuns(1);
	expect(t.runs[0][0][0].json).toEqual({ ...event });
	const delivery = (await bench.control.deliveries(endpoint.id)).find(
		(d) => d.eventId === event.id,
	)!;
	expect((await bench.control.redeliver(delivery.id)).responseStatusCode).toBe(200);
	await t.waitForRuns(2);
	await settle(t);
	expect(t.runs.map((run) => run[0][0].json.id)).toEqual([event.id, event.id]);
	expect(t.executions.map((e) => e.mode)).toEqual(['manual', 'manual']);
	expect(t.processedData()).toBeUndefined();
	// control: the same event at the production URL (mode webhook) is recorded
	await t.activate();
	const production = (await bench.endpointsOf(userId)).find((e) => e.url === t.webhookUrl)!;
	await bench.control.emitEvent({
		type: 'order.created',
		data: event.data,
		endpointIds: [production.id],
	});
	await t.waitForRuns(3);
	expect(t.executions.at(-1)?.mode).toBe('webhook');
	expect(t.processedData()?.value.data).toContain(
		processedDataHash(`order:${String(event.data.orderId)}`),
	);
});

test('the listening cannot start where the service cannot deliver: create() fails with the message, and no endpoint is left', async () => {
	const { apiKey, userId } = await bench.user();
	const t = await bench.trigger(apiKey, {}, { webhookBaseUrl: 'http://127.0.0.1:1/webhook' });
	await expect(t.activate('manual')).rejects.toThrow(
		/could not reach this trigger at http:\/\/127\.0\.0\.1:1\/webhook-test\/.*no HTTP answer.*N8N_WEBHOOK_URL/,
	);
	expect(await bench.endpointsOf(userId)).toEqual([]);
});

test('the listening\'s endpoint is named "<description> (listening for a test event)", so Webhook Endpoint > Test lists it by name; the production endpoint keeps the description', async () => {
	const { apiKey, userId } = await bench.user();
	const { t, endpoint } = await listening(apiKey, userId, { description: 'Shop orders' });
	expect(endpoint.description).toBe('Shop orders (listening for a test event)');
	await t.activate();
	const production = (await bench.endpointsOf(userId)).find((e) => e.url === t.webhookUrl)!;
	expect(production.description).toBe('Shop orders');
});

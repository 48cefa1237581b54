/**
 * "Listen for test event" in n8n-core's engine against the sandbox over real HTTP: the listening's
 * create() (mode manual, test URL) asks the service for a test delivery once it returned, and the
 * trigger answers that verified webhook.test with a sample shaped like the first subscribed event
 * type's items, from the newest record or synthetic, marked `sample: true`; production never.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import type { IDataObject } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { eventually, TriggerBench, recordOf, settledRuns, triggerOf } from './helpers';

const bench = new TriggerBench();
beforeAll(async () => await bench.start());
afterAll(async () => await bench.close());
afterEach(async () => await bench.closeHarnesses());

// the sample request waits for n8n to register the test route again after create(); in the harness
// create() saves the static data as it returns, so no wait is needed (the harness settings)

/** Listens for a test event (create on the test URL) and returns the one item of the run it starts, and how long that took. */
async function listen(apiKey: string, parameters: IDataObject) {
	const t = await bench.trigger(apiKey, parameters);
	const started = Date.now();
	await t.activate('manual');
	await t.waitForRuns(1, 8000);
	const ms = Date.now() - started;
	expect(t.runs[0]).toHaveLength(1);
	expect(t.runs[0][0]).toHaveLength(1);
	return { t, item: t.runs[0][0][0].json, ms };
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
		const { t, item, ms } = await listen(apiKey, parameters);
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
		const sampled = t.requests.filter((r) => r.mode === 'manual');
		expect(t.responses.map((r) => r.status)).toEqual([401, 200]);
		expect(JSON.parse(sampled[1].rawBody.toString()).type).toBe('webhook.test');
		expect(item.id).toBe(sampled[1].headers['webhook-id']);

		// a production item of the same parameters has the same fields (besides the sample marker)
		const real = await productionItem(
			apiKey,
			parameters,
			async () => await bench.control.createOrder({ brandId }),
		);
		expect(keysOf(item)).toEqual(keysOf(real));
		expect(real).not.toHaveProperty('sample');
		expect(recordOf(t, t.testWebhookUrl)).toBeDefined();
		void userId;
	});

	test('order events without any order: a synthetic sample, clearly labelled', async () => {
		const { apiKey } = await bench.user([4242]);
		const { item } = await listen(apiKey, {
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
		const { apiKey, brandId } = await bench.user();
		const parameters = { eventTypes: ['brand_health.band_exited'], options: { fetchCurrentState } };
		const { item } = await listen(apiKey, parameters);
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
		const { apiKey } = await bench.user([4243]);
		const { item } = await listen(apiKey, {
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
	const { apiKey, brandId } = await bench.user();
	await bench.control.createOrder({ brandId });
	const { item } = await listen(apiKey, { options: { includeHeaders: true } });
	expect((item.headers as IDataObject)['webhook-id']).toBe(item.id);
});

test('production never gets a sample: a webhook.test to the production URL starts nothing', async () => {
	const { apiKey, brandId, userId } = await bench.user();
	await bench.control.createOrder({ brandId });
	const t = await bench.trigger(apiKey);
	await t.activate();
	const [endpoint] = await bench.endpointsOf(userId);
	const res = await fetch(`${bench.sandbox.baseUrl}/v1/webhook-endpoints/${endpoint.id}/test`, {
		method: 'POST',
		headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': crypto.randomUUID() },
	});
	expect(((await res.json()) as IDataObject).responseStatusCode).toBe(200);
	expect(await settledRuns(t)).toBe(0);
	expect((t.responses.at(-1)!.body as IDataObject).ignored).toBe('test-event');
});

test('the listening cannot start where the service cannot deliver: create() fails with the message, and no endpoint is left', async () => {
	const { apiKey, userId } = await bench.user();
	const t = await bench.trigger(apiKey, {}, { webhookBaseUrl: 'http://127.0.0.1:1/webhook' });
	await expect(t.activate('manual')).rejects.toThrow(
		/could not reach this trigger at http:\/\/127\.0\.0\.1:1\/webhook-test\/.*no HTTP answer.*N8N_WEBHOOK_URL/,
	);
	expect(await bench.endpointsOf(userId)).toEqual([]);
});

test('the test URL stops being delivered to between the check and the sample: no sample, and nothing is sent to n8n itself', async () => {
	const { apiKey, userId } = await bench.user();
	// the sample is asked for 50 ms after create() returned: time to change the URL before it
	const t = await bench.trigger(
		apiKey,
		{},
		{ settings: { sample: { firstMs: 50, retryMs: 0, attempts: 6 } } },
	);
	await t.activate('manual');
	// the service's view of the URL changes before the sample is asked for (a tunnel that went down)
	const [endpoint] = await bench.endpointsOf(userId);
	await bench.control.setEndpointUrl(endpoint.id, 'http://127.0.0.1:1/gone');
	const requests = t.requests.length;
	await triggerOf(t).triggerProcess.listeningsDone();
	// the reason is in n8n's log; the listening ends at n8n's own timeout
	expect(t.runs).toHaveLength(0);
	expect(t.requests.length).toBe(requests);
});

test("n8n ending the listening (its delete hook) stops the sample's requests: delete waits for a request under way, and none comes after it", async () => {
	// a test URL that refuses with 401, as n8n does before it registered the listening's secret: asked again
	const refusing = http.createServer((_req, res) => res.writeHead(401).end());
	await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
	try {
		const { apiKey, userId } = await bench.user();
		const t = await bench.trigger(
			apiKey,
			{},
			{ settings: { sample: { firstMs: 50, retryMs: 100, attempts: 50 } } },
		);
		await t.activate('manual');
		const [endpoint] = await bench.endpointsOf(userId);
		const { port } = refusing.address() as AddressInfo;
		await bench.control.setEndpointUrl(endpoint.id, `http://127.0.0.1:${port}/webhook-test/x`);
		const since = await bench.lastSeq();
		const tests = async () =>
			(await bench.requestsOf(apiKey, since)).filter(
				(r) => r.method === 'POST' && r.path.endsWith('/test'),
			).length;
		await eventually(async () => (await tests()) >= 2);
		await t.delete('manual');
		expect(triggerOf(t).triggerProcess.listenings.size).toBe(0);
		const asked = await tests();
		await sleep(500);
		expect(await tests()).toBe(asked);
		expect(asked).toBeLessThan(50);
	} finally {
		refusing.closeAllConnections();
		await new Promise((resolve) => refusing.close(resolve));
	}
});

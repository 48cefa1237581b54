/**
 * The activation check of the Marketplace Trigger in n8n-core's HookContext against the sandbox over
 * real HTTP: create()/checkExists() ask the service for a test delivery to the webhook URL and fail
 * with a message naming the URL, what the service saw and what to check, for each outcome the
 * sandbox's delivery engine can produce.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { Logger } from '@n8n/backend-common';
import { Container } from '@n8n/di';

import { judgeDelivery } from '../../nodes/MarketplaceTrigger/reachability';
import { TriggerBench, recordOf, settle, signedHeaders } from './helpers';

const bench = new TriggerBench();
const slowBench = new TriggerBench({ allowHttpLoopback: true, deliveryTimeoutMs: 400 });

/** Something other than the trigger at the webhook URL: /s<code>/... answers <code>; /hang/... never answers. */
let other: http.Server;
let otherUrl = '';
beforeAll(async () => {
	await Promise.all([bench.start(), slowBench.start()]);
	other = http.createServer((req, res) => {
		const match = /^\/s(\d{3})\//.exec(req.url ?? '');
		if (req.url?.startsWith('/hang/')) return; // never answers
		const code = match ? Number(match[1]) : 404;
		if (code >= 300 && code < 400) res.setHeader('location', 'https://example.com/');
		res
			.writeHead(code, { 'content-type': 'text/plain' })
			.end(`answered ${code} for something else`);
	});
	await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
	otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
});
afterAll(async () => {
	other.closeAllConnections();
	await new Promise((resolve) => other.close(resolve));
	await Promise.all([bench.close(), slowBench.close()]);
});
afterEach(async () => {
	jest.restoreAllMocks();
	await bench.control.clearFaults();
	await bench.closeHarnesses();
	await slowBench.closeHarnesses();
});

test('reached: the test delivery made inside create() is answered 401 by the trigger (no secret saved yet); activation succeeds, runs nothing and logs no refusal', async () => {
	const { userId, apiKey, brandId } = await bench.user();
	const t = await bench.trigger(apiKey);
	const warned = jest.spyOn(Container.get(Logger), 'warn');
	const informed = jest.spyOn(Container.get(Logger), 'info');
	await t.activate();
	const [endpoint] = await bench.endpointsOf(userId);
	const tests = (await bench.control.deliveries(endpoint.id)).filter((d) => d.kind === 'test');
	expect(tests).toHaveLength(1);
	expect(tests[0]).toMatchObject({
		eventType: 'webhook.test',
		attempts: 1,
		responseStatusCode: 401,
	});
	expect(t.responses.map((r) => [r.status, (r.body as { reason?: string }).reason])).toEqual([
		[401, 'no-secret'],
	]);
	await settle(t);
	expect(t.executions).toHaveLength(0);
	expect(recordOf(t, t.webhookUrl)).toMatchObject({ endpointId: endpoint.id });
	// the activation's own test is expected, not a refusal worth a warning; the check's success is logged
	expect(warned.mock.calls.map(([m]) => String(m))).toEqual([]);
	expect(informed.mock.calls.map(([m]) => String(m))).toContainEqual(
		`Marketplace Trigger: the service reached ${t.webhookUrl} (test delivery answered 401)`,
	);
	// control: an event with no secret held (not the activation's test) is logged
	const event = { id: 'evt_x', type: 'order.created', createdAt: 'x', data: { orderId: 1 } };
	const saved = t.staticData;
	t.staticData = {};
	const stranger = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
	expect((await t.deliver(JSON.stringify(event), signedHeaders(event, [stranger]))).status).toBe(
		401,
	);
	expect(warned.mock.calls.map(([m]) => String(m))).toEqual([
		expect.stringMatching(/^Marketplace Trigger refused a delivery \(401\): No signing secret/),
	]);
	t.staticData = saved;
	// the next event's item is the event, nothing added
	const { event: created } = await bench.control.createOrder({ brandId });
	await t.waitForRuns(1);
	expect(t.runs[0][0][0].json).toEqual({ ...created });
});

test.each(['checkExists', 'create'] as const)(
	'a workflow set to Engine 2.0: %s fails naming the engine and what to change, before any request',
	async (hook) => {
		const { userId, apiKey } = await bench.user();
		const t = await bench.trigger(apiKey, {}, { workflowSettings: { engineType: 'v2' } });
		const before = await bench.lastSeq();
		await expect(t[hook]()).rejects.toThrow(/Engine 2\.0 .*engineType back to 'v1'.*publish again/);
		expect(await bench.requestsOf(apiKey, before)).toEqual([]);
		expect(await bench.endpointsOf(userId)).toEqual([]);
	},
);

test('reached on checkExists: an endpoint found at the URL whose secret n8n holds answers the test delivery 2xx', async () => {
	const { userId, apiKey } = await bench.user();
	const t = await bench.trigger(apiKey);
	await t.activate();
	expect(await t.checkExists()).toBe(true);
	const [endpoint] = await bench.endpointsOf(userId);
	const codes = (await bench.control.deliveries(endpoint.id))
		.filter((d) => d.kind === 'test')
		.map((d) => d.responseStatusCode);
	expect(codes.sort()).toEqual([200, 401]);
	await settle(t);
	// the 2xx went to a webhook.test on the production URL: ignored, no execution
	expect(t.responses.at(-1)).toMatchObject({ status: 200, body: { ignored: 'test-event' } });
	expect(t.executions).toHaveLength(0);
});

async function failedActivation(b: TriggerBench, webhookBaseUrl: string) {
	const { userId, apiKey } = await b.user();
	const t = await b.trigger(apiKey, {}, { webhookBaseUrl });
	const error = (await t.activate().then(
		() => undefined,
		(e: Error) => e,
	)) as (Error & { description?: string }) | undefined;
	expect(error).toBeDefined();
	const message = error!.message;
	// the message alone names the URL and what to check (n8n shows only the message)
	expect(message).toContain(t.webhookUrl);
	expect(message).toMatch(/N8N_WEBHOOK_URL/);
	// nothing is left registered for a URL the service cannot reach, and nothing is recorded
	expect(await b.endpointsOf(userId)).toEqual([]);
	expect(recordOf(t, t.webhookUrl)).toBeUndefined();
	return { message, t, error: error! };
}

test('connection refused: activation fails with "no HTTP answer" and the URL', async () => {
	const { message, error } = await failedActivation(bench, 'http://127.0.0.1:1/webhook');
	expect(message).toMatch(
		/^The Marketplace service could not reach this trigger at http:\/\/127\.0\.0\.1:1\/webhook\/.*: its test delivery got no HTTP answer/,
	);
	expect(error.description).toMatch(/1 attempt\(s\), HTTP status none/);
});

test('no answer within the service limit (a hanging server): activation fails with "no HTTP answer"', async () => {
	const { message } = await failedActivation(slowBench, `${otherUrl}/hang/webhook`);
	expect(message).toMatch(/got no HTTP answer \(connection refused, no answer within 10 seconds/);
});

test.each([
	[404, /answered with HTTP 404 by something other than this trigger/],
	[502, /HTTP 502: a proxy or tunnel answered but could not reach n8n/],
	[503, /HTTP 503: a proxy or tunnel answered but could not reach n8n/],
	[302, /redirect \(HTTP 302\), which the service does not follow/],
	[403, /HTTP 403, which is not this trigger's answer/],
])(
	'something else answers %i: activation fails with what the service saw',
	async (code, expected) => {
		const { message } = await failedActivation(bench, `${otherUrl}/s${code}/webhook`);
		expect(message).toMatch(expected);
	},
);

test('the Test call itself fails (service 500, twice): a transient error n8n retries, naming the URL', async () => {
	const { userId, apiKey } = await bench.user();
	const t = await bench.trigger(apiKey);
	await bench.control.injectFault({ route: 'testWebhookEndpoint', mode: '500', count: 2 });
	const error = await t.activate().then(
		() => undefined,
		(e: Error) => e,
	);
	expect(error?.message).toMatch(
		/^Could not check that the Marketplace service reaches this trigger at .*Webhook Endpoint > Test failed .*n8n tries the activation again/,
	);
	expect(error?.message).toContain(t.webhookUrl);
	// n8n's retry: the service answers now, and the activation succeeds
	await t.activate();
	expect(await bench.endpointsOf(userId)).toHaveLength(1);
});

test('delivery records the sandbox cannot produce (no attempt: a private address; not yet attempted) read as not reached', () => {
	expect(judgeDelivery({ status: 'Failed', attempts: 0, httpStatus: null })).toMatchObject({
		reached: false,
		final: true,
		saw: expect.stringMatching(/private or reserved IP/),
	});
	expect(judgeDelivery({ status: 'pending', attempts: 0, httpStatus: null })).toMatchObject({
		reached: false,
		final: false,
	});
	expect(judgeDelivery({ status: 'Delivered', attempts: 1, httpStatus: 204 })).toEqual({
		reached: true,
		httpStatus: 204,
	});
});

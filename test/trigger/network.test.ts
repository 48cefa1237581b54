/**
 * The Marketplace Trigger behind a reverse proxy that the service reaches and n8n itself cannot
 * (test/e2e/reverseProxy.ts: it forwards only the service's deliveries, chunked, with
 * X-Forwarded-* headers). Exactly once must not depend on n8n reaching its own public URL, nor on
 * n8n reaching anything but the service: the trigger sends no request but to the service, and its
 * store is n8n's own database.
 */
import { USER_AGENT } from '../sandbox/sender';
import { fromService, startReverseProxy, type ReverseProxy } from '../e2e/reverseProxy';
import { TriggerBench, settle, type TriggerHarness } from './helpers';
import { forgetActivationTraffic } from './helpers';

/** Items each execution output, in order. */
const outputs = (t: TriggerHarness) => t.executions.map((e) => e.output?.[0]?.length ?? null);

const bench = new TriggerBench();
let proxy: ReverseProxy;
let harness: TriggerHarness | undefined;

beforeAll(async () => {
	await bench.start();
	proxy = await startReverseProxy({
		targets: () => [{ port: harness!.listenPort }],
		accept: fromService(USER_AGENT),
	});
});
afterAll(async () => {
	await bench.close();
	await proxy.stop();
});
afterEach(async () => await bench.closeHarnesses());

test('one event, a burst of 5 and a back-to-back pair run once each with no request to the public URL; delivered again, none outputs anything', async () => {
	const { apiKey, brandId, userId } = await bench.user();
	harness = await bench.trigger(apiKey, {}, { webhookBaseUrl: `${proxy.url}webhook` });
	const t = harness;
	await t.activate();
	await forgetActivationTraffic(t);
	const [endpoint] = await bench.endpointsOf(userId);
	expect(endpoint.url).toBe(`${proxy.url}webhook/${t.node.webhookId}/webhook`);

	const events: string[] = [];
	events.push((await bench.control.createOrder({ brandId })).event.id as string);
	await t.waitForRuns(1);
	const burst = await Promise.all(
		[1, 2, 3, 4, 5].map(async () => await bench.control.createOrder({ brandId })),
	);
	events.push(...burst.map((b) => b.event.id as string));
	await t.waitForRuns(6);
	events.push((await bench.control.createOrder({ brandId })).event.id as string);
	events.push((await bench.control.createOrder({ brandId })).event.id as string);
	await t.waitForRuns(8);
	// every delivery came through the proxy: chunked, with the forwarding headers
	const deliveries = t.requests.filter((r) => r.headers['user-agent'] === USER_AGENT);
	expect(deliveries).toHaveLength(8);
	expect(
		deliveries.every(
			(r) =>
				r.headers['transfer-encoding'] === 'chunked' && r.headers['x-forwarded-proto'] === 'https',
		),
	).toBe(true);

	await settle(t);
	// n8n's own requests never went to the public address (the proxy would have dropped them)
	expect(proxy.dropped).toEqual([]);
	expect(outputs(t)).toEqual(events.map(() => 1));

	// the service delivers every event again (same webhook-id): each is an execution with no output
	const made = (await bench.control.deliveries(endpoint.id)).filter((d) =>
		events.includes(d.eventId as string),
	);
	expect(made).toHaveLength(8);
	const again = await Promise.all(made.map(async (d) => await bench.control.redeliver(d.id)));
	expect(again.map((d) => d.attemptLog.at(-1)!.statusCode)).toEqual(made.map(() => 200));
	await settle(t);
	expect(t.runs).toHaveLength(8);
	expect(outputs(t)).toEqual([...events.map(() => 1), ...made.map(() => 0)]);
	expect(proxy.dropped).toEqual([]);
});

test("where n8n's requests reach only the service (an HTTP proxy that refuses all else, as NO_PROXY or SSRF rules make it): each event runs once, its copies output nothing, and nothing warns", async () => {
	const { apiKey, brandId, userId } = await bench.user();
	harness = await bench.trigger(apiKey);
	const t = harness;
	await t.activate();
	await forgetActivationTraffic(t);
	const saved = { HTTP_PROXY: process.env.HTTP_PROXY, NO_PROXY: process.env.NO_PROXY };
	// n8n's requests honour HTTP_PROXY; this one refuses every connection, and only the service is exempt
	process.env.HTTP_PROXY = 'http://127.0.0.1:9';
	process.env.NO_PROXY = new URL(bench.sandbox.baseUrl).host;
	try {
		for (let i = 0; i < 3; i++) await bench.control.createOrder({ brandId });
		await t.waitForRuns(3);
		await settle(t);
		const [endpoint] = await bench.endpointsOf(userId);
		const made = (await bench.control.deliveries(endpoint.id)).filter(
			(d) => d.eventType === 'order.created',
		);
		expect(made).toHaveLength(3);
		for (const d of made)
			expect((await bench.control.redeliver(d.id)).responseStatusCode).toBe(200);
		await settle(t);
		expect(t.runs).toHaveLength(3);
		expect(outputs(t)).toEqual([1, 1, 1, 0, 0, 0]);
	} finally {
		Object.assign(process.env, saved);
		for (const [name, value] of Object.entries(saved))
			if (value === undefined) delete process.env[name];
	}
	expect(t.runs.flatMap((run) => run[0].map((item) => item.json.storageWarning))).toEqual([
		undefined,
		undefined,
		undefined,
	]);
	expect(t.executions.every((e) => e.error === undefined)).toBe(true);
});

/**
 * webhookMethods of the Marketplace Trigger (lifecycle.ts) in n8n-core's HookContext, against the
 * sandbox over HTTP: create, checkExists (find by URL, bring in line, re-enable, obtain a secret by
 * rotation), delete (only its own endpoint, errors reported), the test URL beside the production
 * URL, and the service's refusals as messages that say what to do.
 */
import { Logger } from '@n8n/backend-common';
import { Container } from '@n8n/di';

import { TriggerBench, recordOf, settle, SharedClock } from './helpers';
import { forgetActivationTraffic } from './helpers';

const bench = new TriggerBench();
beforeAll(async () => await bench.start());
afterAll(async () => await bench.close());
afterEach(async () => {
	jest.restoreAllMocks();
	await bench.control.clearFaults();
	await bench.closeHarnesses();
});

const DAY = 86_400;

/** Registers an endpoint for `apiKey` at `url` straight with the service (as the Marketplace node or any client would). */
async function otherEndpoint(apiKey: string, url: string) {
	const res = await fetch(`${bench.sandbox.baseUrl}/v1/webhook-endpoints`, {
		method: 'POST',
		headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
		body: JSON.stringify({ url, description: 'not the trigger', eventTypes: ['order.created'] }),
	});
	expect(res.status).toBe(201);
	return ((await res.json()) as { webhookEndpoint: { id: number } }).webhookEndpoint.id;
}

test('activation creates the endpoint with an Idempotency-Key and keeps id and secret; deactivation deletes it and no other endpoint', async () => {
	const { userId, apiKey, brandId } = await bench.user();
	const t = await bench.trigger(apiKey, {
		eventTypes: ['order.created', 'order.cancelled'],
		description: 'orders to Slack',
	});
	// the user's other endpoint, at another URL: never the trigger's to touch
	const otherId = await otherEndpoint(apiKey, 'http://127.0.0.1:9/someone-else');
	const since = await bench.lastSeq();

	expect(await t.checkExists()).toBe(false);
	await t.create();

	const [endpoint, ...others] = (await bench.endpointsOf(userId)).filter((e) => e.id !== otherId);
	expect(others).toHaveLength(0);
	expect(endpoint).toMatchObject({
		url: t.webhookUrl,
		description: 'orders to Slack',
		eventTypes: ['order.created', 'order.cancelled'],
		status: 'Enabled',
	});
	expect(recordOf(t, t.webhookUrl)).toMatchObject({
		endpointId: endpoint.id,
		secret: endpoint.secret,
	});
	const create = (await bench.requestsOf(apiKey, since)).find(
		(r) => r.route === 'createWebhookEndpoint',
	)!;
	expect(create.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
	expect(JSON.parse(create.body)).toEqual({
		url: t.webhookUrl,
		description: 'orders to Slack',
		eventTypes: ['order.created', 'order.cancelled'],
	});

	// the endpoint is live: an order event starts one run
	await bench.control.createOrder({ brandId });
	await t.waitForRuns(1);

	// deactivation
	expect(await t.delete()).toBe(true);
	expect((await bench.endpointsOf(userId)).map((e) => e.id)).toEqual([otherId]);
	expect(recordOf(t, t.webhookUrl)).toBeUndefined();
	// deleting again finds nothing to delete and still succeeds
	expect(await t.delete()).toBe(true);
	expect((await bench.endpointsOf(userId)).map((e) => e.id)).toEqual([otherId]);
	const deletes = (await bench.requestsOf(apiKey, since)).filter(
		(r) => r.route === 'deleteWebhookEndpoint',
	);
	expect(deletes.map((r) => r.path)).toEqual([`/v1/webhook-endpoints/${endpoint.id}`]);
});

test('a second activation with static data lost finds the endpoint by URL instead of creating another, and rotates for a secret', async () => {
	const { userId, apiKey, brandId } = await bench.user();
	const t = await bench.trigger(apiKey);
	await t.activate();
	const [before] = await bench.endpointsOf(userId);

	t.staticData = {};
	const since = await bench.lastSeq();
	expect(await t.checkExists()).toBe(true);
	await t.activate(); // what n8n does: checkExists true -> no create
	await forgetActivationTraffic(t);

	const after = await bench.endpointsOf(userId);
	expect(after).toHaveLength(1);
	expect(after[0].id).toBe(before.id);
	const routes = (await bench.requestsOf(apiKey, since)).map((r) => r.route);
	expect(routes).not.toContain('createWebhookEndpoint');
	expect(routes).not.toContain('deleteWebhookEndpoint');
	expect(routes.filter((r) => r === 'rotateWebhookEndpointSecret')).toHaveLength(1);
	expect(recordOf(t, t.webhookUrl)).toMatchObject({
		endpointId: before.id,
		secret: after[0].secret,
	});
	expect(after[0].secret).not.toBe(before.secret);

	// deliveries verify with the secret obtained by rotation
	await bench.control.createOrder({ brandId });
	await t.waitForRuns(1);
	expect(t.responses.map((r) => r.status)).toEqual([200]);
});

test('checkExists never trusts the stored id alone: a stored id whose endpoint is gone means create again', async () => {
	const { userId, apiKey } = await bench.user();
	const t = await bench.trigger(apiKey);
	await t.activate();
	const [endpoint] = await bench.endpointsOf(userId);
	// deleted behind the trigger's back (e.g. with the Marketplace node)
	await fetch(`${bench.sandbox.baseUrl}/v1/webhook-endpoints/${endpoint.id}`, {
		method: 'DELETE',
		headers: { authorization: `Bearer ${apiKey}` },
	});
	expect(await t.checkExists()).toBe(false);
	expect(recordOf(t, t.webhookUrl)).toBeUndefined();
	await t.create();
	const [fresh] = await bench.endpointsOf(userId);
	expect(fresh.id).not.toBe(endpoint.id);
	expect(recordOf(t, t.webhookUrl)).toMatchObject({ endpointId: fresh.id, secret: fresh.secret });
});

test('changed event types and description are brought in line on activation', async () => {
	const { userId, apiKey } = await bench.user();
	const t = await bench.trigger(apiKey, { eventTypes: ['order.created'] });
	await t.activate();
	t.node.parameters.eventTypes = ['order.returned', 'brand_health.band_entered'];
	t.node.parameters.description = 'returns and health';
	const since = await bench.lastSeq();
	expect(await t.checkExists()).toBe(true);
	const [endpoint] = await bench.endpointsOf(userId);
	expect(endpoint.eventTypes.sort()).toEqual(['brand_health.band_entered', 'order.returned']);
	expect(endpoint.description).toBe('returns and health');
	const patch = (await bench.requestsOf(apiKey, since)).find(
		(r) => r.route === 'updateWebhookEndpoint',
	)!;
	expect(patch.headers['idempotency-key']).toBeDefined();
	expect(JSON.parse(patch.body)).toEqual({
		eventTypes: ['order.returned', 'brand_health.band_entered'],
		description: 'returns and health',
	});
	// the secret is held, so no rotation: the stored secret is kept
	const routes = (await bench.requestsOf(apiKey, since)).map((r) => r.route);
	expect(routes).not.toContain('rotateWebhookEndpointSecret');
	expect(recordOf(t, t.webhookUrl)?.secret).toBe(endpoint.secret);
	// nothing to bring in line: no update either
	const again = await bench.lastSeq();
	expect(await t.checkExists()).toBe(true);
	expect((await bench.requestsOf(apiKey, again)).map((r) => r.route)).not.toContain(
		'updateWebhookEndpoint',
	);
});

test('Rotate Signing Secret on Activation: each activation that finds the endpoint rotates once, keeping the previous secret for 24 hours', async () => {
	const { userId, apiKey } = await bench.user();
	const t = await bench.trigger(apiKey, { options: { rotateSecretOnActivation: true } });
	await t.activate();
	const first = String(recordOf(t, t.webhookUrl)!.secret);
	for (const round of [1, 2]) {
		const since = await bench.lastSeq();
		const before = String(recordOf(t, t.webhookUrl)!.secret);
		expect(await t.checkExists()).toBe(true);
		const routes = (await bench.requestsOf(apiKey, since)).map((r) => r.route);
		expect(routes.filter((r) => r === 'rotateWebhookEndpointSecret')).toHaveLength(1);
		const [endpoint] = await bench.endpointsOf(userId);
		expect(recordOf(t, t.webhookUrl)).toMatchObject({
			endpointId: endpoint.id,
			secret: endpoint.secret,
			previousSecret: before,
		});
		expect(endpoint.secret).not.toBe(round === 1 ? first : before);
		const until = Number(recordOf(t, t.webhookUrl)!.previousSecretUntil) - Date.now();
		expect(until).toBeGreaterThan(23.9 * 3_600_000);
		expect(until).toBeLessThanOrEqual(24 * 3_600_000);
	}
	// off: no rotation
	t.node.parameters.options = {};
	const since = await bench.lastSeq();
	expect(await t.checkExists()).toBe(true);
	expect((await bench.requestsOf(apiKey, since)).map((r) => r.route)).not.toContain(
		'rotateWebhookEndpointSecret',
	);
});

/** An active trigger whose endpoint the service then disabled: its deliveries failed for over 5 days (virtual clock). */
async function triggerWhoseEndpointTheServiceDisabled() {
	const { userId, apiKey, brandId } = await bench.user();
	const t = await bench.trigger(apiKey);
	await t.activate();
	const [endpoint] = await bench.endpointsOf(userId);
	await bench.control.setEndpointUrl(endpoint.id, 'http://127.0.0.1:1/unreachable');
	await bench.control.advanceClock(5 * DAY + 60);
	await bench.control.createOrder({ brandId });
	await bench.control.advanceClock(2 * DAY);
	const [disabled] = await bench.endpointsOf(userId);
	expect(disabled).toMatchObject({ status: 'Disabled', disabledReason: 'FailingDeliveries' });
	await bench.control.setEndpointUrl(endpoint.id, t.webhookUrl);
	return { userId, brandId, t, endpoint, disabled };
}

test('an endpoint the service Disabled (FailingDeliveries) is found by URL and re-enabled, with a warning that missed events are not resent; events run again', async () => {
	const { userId, brandId, t, endpoint } = await triggerWhoseEndpointTheServiceDisabled();
	const warned = jest.spyOn(Container.get(Logger), 'warn');

	expect(await t.checkExists()).toBe(true);
	const [enabled, ...none] = await bench.endpointsOf(userId);
	expect(none).toHaveLength(0);
	expect(enabled).toMatchObject({ id: endpoint.id, status: 'Enabled', disabledReason: null });
	const warnings = warned.mock.calls.map(([message]) => String(message));
	expect(warnings).toEqual([
		expect.stringMatching(
			new RegExp(
				`webhook endpoint ${endpoint.id} was Disabled by the service .* enabled again\\. Events of that time are not resent`,
			),
		),
	]);
	await forgetActivationTraffic(t);

	// the next event runs, as a plain event: nothing is added to its item
	const { event } = await bench.control.createOrder({ brandId });
	await t.waitForRuns(1);
	expect(t.runs[0][0][0].json).toEqual({ ...event });
});

test('test URL and production URL each get their own endpoint and record, and clean up only their own', async () => {
	const { userId, apiKey, brandId } = await bench.user();
	const t = await bench.trigger(apiKey);
	await t.activate(); // production
	await t.activate('manual'); // "listen for test event"
	await forgetActivationTraffic(t);
	const endpoints = await bench.endpointsOf(userId);
	expect(endpoints.map((e) => e.url).sort()).toEqual([t.testWebhookUrl, t.webhookUrl].sort());
	const prod = endpoints.find((e) => e.url === t.webhookUrl)!;
	const test = endpoints.find((e) => e.url === t.testWebhookUrl)!;
	expect(recordOf(t, t.webhookUrl)).toMatchObject({ endpointId: prod.id, secret: prod.secret });
	expect(recordOf(t, t.testWebhookUrl)).toMatchObject({ endpointId: test.id, secret: test.secret });

	// one event reaches both URLs; each verifies with its own secret
	await bench.control.createOrder({ brandId });
	await t.waitForRuns(2);
	expect(t.requests.map((r) => r.mode).sort()).toEqual(['manual', 'webhook']);
	expect(t.responses.map((r) => r.status)).toEqual([200, 200]);

	await t.delete('manual');
	expect((await bench.endpointsOf(userId)).map((e) => e.id)).toEqual([prod.id]);
	expect(recordOf(t, t.testWebhookUrl)).toBeUndefined();
	expect(recordOf(t, t.webhookUrl)).toBeDefined();
	await t.delete();
	expect(await bench.endpointsOf(userId)).toEqual([]);
});

test('a failing delete is reported, not swallowed, and keeps the record for the next try', async () => {
	const { userId, apiKey } = await bench.user();
	const t = await bench.trigger(apiKey);
	await t.activate();
	await bench.control.injectFault({ route: 'deleteWebhookEndpoint', mode: '500', count: 3 });
	await expect(t.delete()).rejects.toThrow(/Could not delete webhook endpoint \d+/);
	expect(await bench.endpointsOf(userId)).toHaveLength(1);
	expect(recordOf(t, t.webhookUrl)).toBeDefined();
	await bench.control.clearFaults();
	expect(await t.delete()).toBe(true);
	expect(await bench.endpointsOf(userId)).toEqual([]);
});

test('the 10-endpoint limit gives a message that says how to free one', async () => {
	const { userId, apiKey } = await bench.user();
	for (let i = 0; i < 10; i++) {
		const res = await fetch(`${bench.sandbox.baseUrl}/v1/webhook-endpoints`, {
			method: 'POST',
			headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
			body: JSON.stringify({
				url: `http://127.0.0.1:9/other-${i}`,
				description: `other ${i}`,
				eventTypes: ['order.created'],
			}),
		});
		expect(res.status).toBe(201);
	}
	const t = await bench.trigger(apiKey);
	expect(await t.checkExists()).toBe(false);
	const error = await t.create().then(
		() => undefined,
		(e: Error & { description?: string }) => e,
	);
	expect(error?.message).toMatch(
		/already own 10 webhook endpoints.*\(10\): delete one you no longer use \(Marketplace node, Webhook Endpoint > Delete\) or deactivate another workflow/,
	);
	expect(error?.description).toMatch(/Webhook Endpoint > Delete/);
	expect(error?.description).toMatch(/deactivate another workflow/);
	expect(error?.description).toContain('http://127.0.0.1:9/other-0');
	expect(await bench.endpointsOf(userId)).toHaveLength(10);
	expect(recordOf(t, t.webhookUrl)).toBeUndefined();
	await settle(t);
	expect(t.executions).toEqual([]);
});

describe('without loopback delivery (the service as it is)', () => {
	const strict = new TriggerBench({});
	beforeAll(async () => await strict.start());
	afterAll(async () => await strict.close());

	test('a webhook URL that is not public https is refused with a WEBHOOK_URL / N8N_WEBHOOK_URL message', async () => {
		const { userId, apiKey } = await strict.user();
		const t = await strict.trigger(apiKey);
		expect(t.webhookUrl).toMatch(/^http:\/\/127\.0\.0\.1/);
		const error = await t.activate().then(
			() => undefined,
			(e: Error & { description?: string; httpCode?: string }) => e,
		);
		// the fix is in the message: n8n 2.41.1 shows only the message when activation fails
		expect(error?.message).toMatch(
			/refused this node's webhook URL http:\/\/127\.0\.0\.1.*https.*Set N8N_WEBHOOK_URL to the public https address.*Polling Trigger/,
		);
		expect(error?.description).toMatch(/N8N_WEBHOOK_URL/);
		expect(error?.description).toMatch(/WEBHOOK_URL/);
		expect(error?.httpCode).toBe('400');
		expect(await strict.endpointsOf(userId)).toEqual([]);
	});
});

// A secret rotated outside the trigger (Webhook Endpoint > Rotate Secret) leaves the trigger holding
// the old one; after the service's 24 h overlap every delivery is refused 401. Publishing again
// mends it: the activation's test delivery is answered 401 too, and checkExists then rotates.
test('a secret rotated outside the trigger, after the 24 h overlap: publishing again obtains a secret the deliveries verify with', async () => {
	const shared = new SharedClock(bench);
	shared.install();
	try {
		const { userId, apiKey, brandId } = await bench.user();
		const t = await bench.trigger(apiKey);
		await t.activate();
		const [endpoint] = await bench.endpointsOf(userId);
		const rotated = await fetch(
			`${bench.sandbox.baseUrl}/v1/webhook-endpoints/${endpoint.id}/rotate-secret`,
			{
				method: 'POST',
				headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': crypto.randomUUID() },
			},
		);
		expect(rotated.status).toBe(200);
		await shared.advance(24 * 3_600_000 + 60_000);
		await forgetActivationTraffic(t);
		// the service signs with the new secret only now: refused
		await bench.control.createOrder({ brandId });
		await settle(t);
		expect(t.responses.map((r) => r.status)).toEqual([401]);

		// the user publishes again
		await t.activate();
		await forgetActivationTraffic(t);
		const [now] = await bench.endpointsOf(userId);
		expect(recordOf(t, t.webhookUrl)?.secret).toBe(now.secret);
		await bench.control.createOrder({ brandId });
		await t.waitForRuns(1);
	} finally {
		shared.uninstall();
		await bench.control.settings({ timestampSkewSeconds: 0 });
	}
});

/**
 * Faults on writes (500, 429, dropped connection, hang; before and after the effect): retried with
 * the same Idempotency-Key, the effect applied once (read back from the sandbox); what is final is
 * not retried. The waits between attempts are the ones the transport asked its (stepped) clock for.
 */
import type { IDataObject } from 'n8n-workflow';

import { useSteppedClock } from './clock';
import { fixtureWithReceiver, errorOf, expectUniqueRequestIds } from './helpers';

const { fixture, receiver } = fixtureWithReceiver();
afterEach(async () => await fixture.control.clearFaults());
const clock = useSteppedClock(() => fixture.control);

/** The backoff before attempt n + 1: its step is 1 s doubled per attempt, and the jitter draw 0.5 makes it 3/4 of that. */
const backoff = (attempt: number) => 750 * 2 ** (attempt - 1);
/** The wait after a fault: the 429 fault's Retry-After (1 s), otherwise the first backoff. */
const firstWait = (mode: string) => (mode === '429' ? 1000 : backoff(1));

const sameKey = (sent: { idempotencyKey?: string }[]) => {
	expect(sent[0].idempotencyKey).toEqual(expect.any(String));
	expect(new Set(sent.map((s) => s.idempotencyKey))).toEqual(new Set([sent[0].idempotencyKey]));
};

async function newOrder(): Promise<number> {
	return (await fixture.control.createOrder({ brandId: 1 })).order.id;
}
const statusOf = async (id: number) =>
	(await fixture.control.state<IDataObject>('orders', id)).status;

const createEndpoint = (description: string, requestOptions: IDataObject = {}) => ({
	resource: 'webhookEndpoint',
	operation: 'create',
	url: receiver().url,
	eventTypes: ['order.created'],
	description,
	requestOptions,
});
const endpointsNamed = async (description: string) =>
	(await fixture.control.endpoints()).filter((e) => e.description === description);

describe.each([
	['500', 'before'],
	['429', 'before'],
	['drop', 'before'],
	['drop', 'after'],
] as const)('fault %s %s the effect', (mode, when) => {
	test('webhook create: retried with the same key, one endpoint created', async () => {
		await fixture.control.injectFault({ route: 'createWebhookEndpoint', mode, when, count: 1 });
		const description = `create-${mode}-${when}`;
		const r = await fixture.run(createEndpoint(description));
		expect(r.error).toBeUndefined();
		const posts = r.sent.filter((s) => s.method === 'POST');
		expect(posts).toHaveLength(2);
		sameKey(posts);
		expectUniqueRequestIds(r.sent);
		expect(posts[0].status ?? 'dropped').toBe(mode === 'drop' ? 'dropped' : Number(mode));
		expect(posts[1]).toMatchObject({ status: 201, replayed: when === 'after' });
		const stored = await endpointsNamed(description);
		expect(stored).toHaveLength(1);
		expect(r.items.map((i) => i.json.id)).toEqual([stored[0].id]);
		expect(r.items[0].json.secret).toBe(stored[0].secret);
		expect(clock().waits).toEqual([firstWait(mode)]);
	});

	test('mark packed: retried with the same key, the order packed once and reported as packed', async () => {
		const id = await newOrder();
		await fixture.control.injectFault({ route: 'markOrdersPacked', mode, when, count: 1 });
		const r = await fixture.run({
			resource: 'fulfillment',
			operation: 'markPacked',
			orderIds: String(id),
		});
		expect(r.error).toBeUndefined();
		expect(r.sent).toHaveLength(2);
		sameKey(r.sent);
		expect(r.items.map((i) => [i.json.orderId, i.json.success, i.json.status])).toEqual([
			[id, true, 'Packed'],
		]);
		expect(await statusOf(id)).toBe('Packed');
		expect(clock().waits).toEqual([firstWait(mode)]);
	});
});

describe.each(['500', '429'] as const)('fault %s after the effect', (mode) => {
	// The service releases the key after the fault, so the retry runs afresh and answers 409 for the
	// order the first attempt packed. The node reads such orders back and reports the
	// ones that are Packed as packed, with a note; the order changed exactly once.
	test('mark packed: retried with the same key, the order changed exactly once, reported packed', async () => {
		const id = await newOrder();
		await fixture.control.injectFault({ route: 'markOrdersPacked', mode, when: 'after', count: 1 });
		const r = await fixture.run({
			resource: 'fulfillment',
			operation: 'markPacked',
			orderIds: String(id),
		});
		expect(r.error).toBeUndefined();
		expect(r.sent.map((s) => [s.method, s.path, s.status])).toEqual([
			['POST', '/v1/fulfillment/orders/packed', Number(mode)],
			['POST', '/v1/fulfillment/orders/packed', 200],
			['GET', `/v1/orders/${id}`, 200],
		]);
		sameKey(r.sent.slice(0, 2));
		expectUniqueRequestIds(r.sent);
		const order = await fixture.control.state<IDataObject>('orders', id);
		expect(order.status).toBe('Packed');
		expect(r.items).toHaveLength(1);
		expect(r.items[0].json).toMatchObject({
			orderId: id,
			success: true,
			status: 'Packed',
			note: expect.stringMatching(/earlier attempt/),
		});
		expect(clock().waits).toEqual([firstWait(mode)]);
	});

	// The endpoint exists after the fault; a plain retry would create a second one. The node noted
	// the endpoints before its first attempt, finds the new one at its URL and rotates its secret
	// (the lost answer held the only copy of the first).
	test('webhook create: the endpoint made by the failed attempt is adopted, not created twice', async () => {
		await fixture.control.injectFault({
			route: 'createWebhookEndpoint',
			mode,
			when: 'after',
			count: 1,
		});
		const description = `create-${mode}-after`;
		const r = await fixture.run(createEndpoint(description));
		expect(r.error).toBeUndefined();
		expect(r.sent.map((s) => [s.method, s.path, s.status])).toEqual([
			['GET', '/v1/webhook-endpoints', 200],
			['POST', '/v1/webhook-endpoints', Number(mode)],
			['GET', '/v1/webhook-endpoints', 200],
			['POST', expect.stringMatching(/^\/v1\/webhook-endpoints\/\d+\/rotate-secret$/), 200],
		]);
		const stored = await endpointsNamed(description);
		expect(stored).toHaveLength(1);
		expect(r.items.map((i) => i.json.id)).toEqual([stored[0].id]);
		expect(r.items[0].json.secret).toBe(stored[0].secret);
		expect(clock().waits).toEqual([]); // the effect was found, so nothing was retried
	});

	test('webhook delete: a delete that happened before the fault counts as done', async () => {
		const created = await fixture.run(createEndpoint(`delete-${mode}-after`));
		const id = created.items[0].json.id as number;
		await fixture.control.injectFault({
			route: 'deleteWebhookEndpoint',
			mode,
			when: 'after',
			count: 1,
		});
		const r = await fixture.run({
			resource: 'webhookEndpoint',
			operation: 'delete',
			endpointId: String(id),
		});
		expect(r.error).toBeUndefined();
		expect(r.sent.map((s) => [s.method, s.status])).toEqual([
			['DELETE', Number(mode)],
			['GET', 200],
		]);
		expect(r.items[0].json).toEqual({ id, deleted: true });
		expect(clock().waits).toEqual([]);
		expect(await endpointsNamed(`delete-${mode}-after`)).toHaveLength(0);
	});
});

test('500 twice before connect: not sent again, the item fails saying the connection may have started', async () => {
	// The client cannot tell a 500 before the effect from one after it: the service released the key.
	await fixture.control.injectFault({
		route: 'connectSaleChannel',
		mode: '500',
		when: 'before',
		count: 2,
	});
	const r = await fixture.run({
		resource: 'saleChannel',
		operation: 'connect',
		brandId: '4',
		saleChannelName: 'Amazon',
	});
	expect(r.sent.map((s) => s.status)).toEqual([500]);
	expect(clock().waits).toEqual([]);
	expect(errorOf(r).message).toMatch(
		/^The service failed \(HTTP 500\) after the request was sent: the connection may have been started\./,
	);
});

/**
 * The writes whose effect the node cannot look for before a retry (Connect, Rotate Secret, Update,
 * Test): after a 5xx or no answer they are not sent again; the item fails saying what may have
 * happened. `effects` counts the write's effects at the sandbox.
 */
interface OnceWrite {
	name: string;
	route: string;
	/** parameters of the run, after any setup */
	setup: () => Promise<{ parameters: IDataObject; effects: () => Promise<number> }>;
	message: RegExp;
}

/** endpoints made for these tests, deleted after each (a user may own at most 10) */
const made: number[] = [];
const endpointFor = async (description: string) => {
	const created = await fixture.run(createEndpoint(description));
	expect(created.error).toBeUndefined();
	made.push(created.items[0].json.id as number);
	return made.at(-1)!;
};
const endpointById = async (id: number) =>
	(await fixture.control.endpoints()).find((e) => e.id === id)!;
let brandOfConnect = 0;

const onceWrites: OnceWrite[] = [
	{
		name: 'rotate secret',
		route: 'rotateWebhookEndpointSecret',
		async setup() {
			const id = await endpointFor(`rotate-${Math.random()}`);
			const original = (await endpointById(id)).secret;
			return {
				parameters: {
					resource: 'webhookEndpoint',
					operation: 'rotateSecret',
					endpointId: String(id),
				},
				// one rotation: the original secret is the previous one; two would have replaced it
				effects: async () => {
					const now = await endpointById(id);
					if (now.secret === original) return 0;
					return now.previousSecret === original ? 1 : 2;
				},
			};
		},
		message:
			/^The service failed \(HTTP 500\) after the request was sent: the secret may have been rotated\. The previous secret still works for 24 hours: use Webhook Endpoint > Get to check the endpoint, and rotate again only if needed\.$/,
	},
	{
		name: 'sale channel connect',
		route: 'connectSaleChannel',
		async setup() {
			const brandId = [1, 2, 3, 5][brandOfConnect++ % 4];
			const connections = async () =>
				(await fixture.control.state<IDataObject>('connections')).filter(
					(c) => c.brandId === brandId && c.saleChannelName === 'Zalando',
				).length;
			const before = await connections();
			return {
				parameters: {
					resource: 'saleChannel',
					operation: 'connect',
					brandId: String(brandId),
					saleChannelName: 'Zalando',
				},
				effects: async () => (await connections()) - before,
			};
		},
		message:
			/^The service failed \(HTTP 500\) after the request was sent: the connection may have been started\. Check the brand's connection .+ before connecting again\.$/,
	},
	{
		name: 'webhook update',
		route: 'updateWebhookEndpoint',
		async setup() {
			const id = await endpointFor(`update-${Math.random()}`);
			// the PATCHes the service ran: all but those it refused with 429 before running them
			const patches = async () =>
				(await fixture.control.requests()).filter(
					(q) =>
						q.method === 'PATCH' && q.path === `/v1/webhook-endpoints/${id}` && q.status !== 429,
				).length;
			return {
				parameters: {
					resource: 'webhookEndpoint',
					operation: 'update',
					endpointId: String(id),
					updateFields: { description: `updated-${id}` },
				},
				effects: async () =>
					(await endpointById(id)).description === `updated-${id}` ? await patches() : 0,
			};
		},
		message:
			/^The service failed \(HTTP 500\) after the request was sent: the changes may have been applied\. Use Webhook Endpoint > Get to see the endpoint as it is now, and update again only if needed\.$/,
	},
	{
		name: 'webhook test',
		route: 'testWebhookEndpoint',
		async setup() {
			const id = await endpointFor(`test-${Math.random()}`);
			return {
				parameters: { resource: 'webhookEndpoint', operation: 'test', endpointId: String(id) },
				effects: async () =>
					(await fixture.control.deliveries(id)).filter((d) => d.eventType === 'webhook.test')
						.length,
			};
		},
		message:
			/^The service failed \(HTTP 500\) after the request was sent: a test delivery may have been sent\. Use Webhook Endpoint > Get Deliveries to see whether it was, and test again only if needed\.$/,
	},
];

describe.each(onceWrites)('$name: once, or says it may not be', ({ route, setup, message }) => {
	afterEach(async () => {
		for (const id of made.splice(0)) {
			await fetch(`${fixture.sandbox.baseUrl}/v1/webhook-endpoints/${id}`, {
				method: 'DELETE',
				headers: { authorization: `Bearer ${fixture.apiKey}` },
			});
		}
	});

	const attempts = (r: { sent: Array<{ path: string; method: string }> }) =>
		r.sent.filter((s) => s.method !== 'GET');

	test('500 after the effect: not sent again, exactly one effect, the item fails saying it may have happened', async () => {
		const { parameters, effects } = await setup();
		await fixture.control.injectFault({ route, mode: '500', when: 'after', count: 1 });
		const r = await fixture.run(parameters);
		const error = errorOf(r);
		expect(attempts(r).map((s) => s.status)).toEqual([500]);
		expect(clock().waits).toEqual([]);
		expect(await effects()).toBe(1);
		expect(error.message).toMatch(message);
		expect(error.httpCode).toBe('500');
		expect(error.description).toMatch(/^Not sent again: .+\(request id \S+\)$/);
	});

	test('no answer after the effect (dropped connection): not sent again, exactly one effect', async () => {
		const { parameters, effects } = await setup();
		await fixture.control.injectFault({ route, mode: 'drop', when: 'after', count: 1 });
		const r = await fixture.run(parameters);
		expect(attempts(r)).toHaveLength(1);
		expect(clock().waits).toEqual([]);
		expect(await effects()).toBe(1);
		expect(errorOf(r).message).toMatch(
			/^No answer came from the service \(network error [A-Z_]+\) after the request was sent: .+ may have been/,
		);
	});

	test('429: waited out and sent again with the same key, exactly one effect', async () => {
		const { parameters, effects } = await setup();
		await fixture.control.injectFault({ route, mode: '429', when: 'before', count: 1 });
		const r = await fixture.run(parameters);
		expect(r.error).toBeUndefined();
		const sent = attempts(r) as Array<{ status: number | null; idempotencyKey?: string }>;
		expect(sent.map((s) => s.status)).toEqual([429, expect.any(Number)]);
		sameKey(sent);
		expect(clock().waits).toEqual([1000]);
		expect(await effects()).toBe(1);
	});

	test('with "On Error: Continue (using error output)" the item goes to the error output with the message', async () => {
		const { parameters, effects } = await setup();
		await fixture.control.injectFault({ route, mode: '500', when: 'after', count: 1 });
		const r = await fixture.run(parameters, { onError: 'continueErrorOutput' });
		expect(r.error).toBeUndefined();
		expect(r.items).toEqual([]);
		expect(r.errorItems).toHaveLength(1);
		expect(r.errorItems[0].json.error).toMatch(message);
		expect(r.errorItems[0].json.details).toMatchObject({ httpCode: '500' });
		expect(await effects()).toBe(1);
	});
});

test('a connection that was never made (ECONNREFUSED) is tried again: the write cannot have reached the service', async () => {
	const r = await fixture.run(
		{
			resource: 'webhookEndpoint',
			operation: 'rotateSecret',
			endpointId: '1',
			requestOptions: { maxAttempts: 2 },
		},
		{ baseUrl: 'http://127.0.0.1:1' },
	);
	expect(clock().waits).toEqual([backoff(1)]);
	expect(errorOf(r).message).toMatch(/^network error ECONNREFUSED after 2 attempts/);
});

test.each(['before', 'after'] as const)(
	'hang %s the effect, longer than the Timeout: the retry waits out idempotency-in-progress and gets the one result',
	async (when) => {
		// The hang lasts 2 s on the sandbox's clock, which the transport's waits move: the Timeout is real
		// (300 ms), the first retry comes 750 ms later (in progress), the next 1.5 s after that.
		const id = await newOrder();
		await fixture.control.injectFault({
			route: 'markOrdersPacked',
			mode: 'hang',
			when,
			count: 1,
			hangMs: 2000,
		});
		const r = await fixture.run({
			resource: 'fulfillment',
			operation: 'markPacked',
			orderIds: String(id),
			requestOptions: { timeout: 300 },
		});
		expect(r.error).toBeUndefined();
		sameKey(r.sent);
		expect(r.sent.length).toBeGreaterThanOrEqual(3);
		expect(r.sent[1].status).toBe(409);
		expect(clock().waits.slice(0, 2)).toEqual([backoff(1), backoff(2)]);
		expect(r.sent.at(-1)).toMatchObject({ status: 200 });
		expect(r.items.map((i) => [i.json.orderId, i.json.success])).toEqual([[id, true]]);
		expect(await statusOf(id)).toBe('Packed');
	},
);

test('network errors past Max Attempts: a clear error naming the attempts, nothing applied', async () => {
	const id = await newOrder();
	await fixture.control.injectFault({
		route: 'markOrdersPacked',
		mode: 'drop',
		when: 'before',
		count: 5,
	});
	const r = await fixture.run({
		resource: 'fulfillment',
		operation: 'markPacked',
		orderIds: String(id),
		requestOptions: { maxAttempts: 2 },
	});
	const error = errorOf(r);
	expect(r.sent).toHaveLength(2);
	expect(clock().waits).toEqual([backoff(1)]);
	sameKey(r.sent);
	expect(error.message).toMatch(/^network error [A-Z_]+ after 2 attempts \(request id \S+\)$/);
	expect(await statusOf(id)).toBe('Created');
});

test('422 idempotency-key-reused: a user key reused with a different body is a clear error, not retried', async () => {
	const parameters = (description: string) => ({
		...createEndpoint(description),
		options: { idempotencyKey: 'fixed-key-1' },
	});
	const first = await fixture.run(parameters('reuse-a'));
	expect(first.error).toBeUndefined();
	const r = await fixture.run(parameters('reuse-b'));
	const error = errorOf(r);
	const posts = r.sent.filter((s) => s.method === 'POST');
	expect(posts).toHaveLength(1);
	expect(posts[0]).toMatchObject({ status: 422, idempotencyKey: 'fixed-key-1' });
	expect(clock().waits).toEqual([]);
	expect(error.httpCode).toBe('422');
	expect(error.message).toMatch(/^idempotency-key-reused \(422\): .+ \(request id \S+\)$/);
	expect(error.description).toMatch(/Use a new key/);
	expect(await endpointsNamed('reuse-b')).toHaveLength(0);
	expect(await endpointsNamed('reuse-a')).toHaveLength(1);
});

test('a 4xx answer is final: one request', async () => {
	const r = await fixture.run({
		resource: 'webhookEndpoint',
		operation: 'get',
		endpointId: '424242',
	});
	expect(r.sent).toHaveLength(1);
	expect(clock().waits).toEqual([]);
	expect(errorOf(r).httpCode).toBe('404');
});

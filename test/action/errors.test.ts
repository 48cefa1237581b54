/**
 * How service errors are shown: problem+json (slug, status, detail, request id, every pointer) and
 * the `{statusCode, message, path}` shape, as NodeApiError; the API key never in an error. And the
 * credential test.
 */
import type { IDataObject } from 'n8n-workflow';

import { testCredential } from '../engine/harness';
import { NodeFixture, credentialType, errorOf } from './helpers';

const fixture = new NodeFixture();
beforeAll(async () => await fixture.start());
afterAll(async () => await fixture.close());

/** Nothing the node recorded or output mentions the API key. */
function expectNoKey(value: unknown, apiKey: string) {
	expect(JSON.stringify(value)).not.toContain(apiKey);
}

test('problem+json invalid-request: slug, status, detail, pointer with its detail, the request id of the request', async () => {
	const r = await fixture.run({
		resource: 'return',
		operation: 'getAll',
		filters: { statuses: 'Requested,Bogus' },
		limit: 5,
	});
	const error = errorOf(r);
	expect(r.sent).toHaveLength(1);
	expect(r.sent[0].rawQuery).toBe('statuses=Requested,Bogus&page=1&limit=5');
	const requestId = r.sent[0].requestId!;
	expect(error.name).toBe('NodeApiError');
	expect(error.httpCode).toBe('400');
	expect(error.message).toBe(
		`invalid-request (400): statuses: 'Bogus' is not one of Requested, Received, Refunded (case-sensitive) [/statuses: statuses: 'Bogus' is not one of Requested, Received, Refunded (case-sensitive)] (request id ${requestId})`,
	);
	expect(error.description).toMatch(/Fix the named fields/);
	expect(error.context).toMatchObject({ itemIndex: 0 });
	expectNoKey(r.error, fixture.apiKey);
});

test('the {statusCode, message, path} shape of connect: every field named, status and request id', async () => {
	const r = await fixture.run({
		resource: 'saleChannel',
		operation: 'connect',
		brandId: '1',
		saleChannelName: 'eBay',
		additionalFields: { fulfillmentModel: 'Drone' },
	});
	const error = errorOf(r);
	expect(r.sent).toHaveLength(1);
	expect(r.sent[0].status).toBe(400);
	const requestId = r.sent[0].requestId!;
	expect(error.httpCode).toBe('400');
	expect(error.message).toMatch(/^invalid-request \(400\): /);
	expect(error.message).toContain(
		'[/saleChannelName: saleChannelName must be one of Amazon, Shopify, Zalando (case-sensitive); /fulfillmentModel: fulfillmentModel must be one of Merchant, Marketplace (case-sensitive)]',
	);
	expect(error.message).toContain(`(request id ${requestId})`);
	expect(error.description).toMatch(/Fix the named fields/);
	expectNoKey(r.error, fixture.apiKey);
	expect(await fixture.control.state('connections')).toEqual([]);
});

test('401 with an unknown key: a clear message, the key nowhere in the error', async () => {
	const badKey = 'mk_live_this-key-must-never-be-shown-123';
	const r = await fixture.run(
		{ resource: 'order', operation: 'get', orderId: '1001' },
		{ apiKey: badKey },
	);
	const error = errorOf(r);
	expect(r.sent).toHaveLength(1);
	expect(r.sent[0].authorization).toBe(`Bearer ${badKey}`);
	expect(error.httpCode).toBe('401');
	expect(error.message).toMatch(/^unauthorized \(401\): unknown API key \(request id \S+\)$/);
	expect(error.description).toMatch(/credential/);
	expectNoKey(r.error, badKey);
	expectNoKey(r.runData, badKey);
});

test('403 for a key without the permission', async () => {
	const { apiKey } = await fixture.control.createUser({
		permissions: ['orders.read'],
		brandIds: [1],
	});
	const r = await fixture.run({ resource: 'product', operation: 'getAll', limit: 1 }, { apiKey });
	expect(errorOf(r)).toMatchObject({ httpCode: '403' });
	expect(errorOf(r).message).toMatch(
		/^forbidden \(403\): the API key lacks permission products\.read \(request id \S+\)$/,
	);
	expectNoKey(r.error, apiKey);
	expectNoKey(r.error, fixture.apiKey);
});

test('a network error names the code and the attempts, not the key', async () => {
	const r = await fixture.run(
		{ resource: 'brand', operation: 'getAll', returnAll: true, requestOptions: { maxAttempts: 1 } },
		{ baseUrl: 'http://127.0.0.1:1' },
	);
	const error = errorOf(r);
	expect(error.message).toMatch(
		/^network error ECONNREFUSED after 1 attempt \(request id [0-9a-f-]{36}\)$/,
	);
	expectNoKey(r.error, fixture.apiKey);
});

test('continueOnFail error items carry message, description and httpCode, without the key', async () => {
	const r = await fixture.run(
		{ resource: 'brandHealth', operation: 'get', brandId: '={{ $json.b }}' },
		{ inputItems: [{ json: { b: 6 } }, { json: { b: 1 } }], continueOnFail: true },
	);
	expect(r.error).toBeUndefined();
	expect(r.items[0].json).toEqual({
		error: expect.stringMatching(/^forbidden \(403\): brand 6 is outside/),
		details: { httpCode: '403', description: expect.any(String) },
	});
	expect(r.items[1].json.brandId).toBe(1);
	expectNoKey(r.items, fixture.apiKey);
});

describe('"On Error: Continue (using error output)"', () => {
	test('a failed item goes to the error output, paired with its input; the others to the main output', async () => {
		const r = await fixture.run(
			{ resource: 'order', operation: 'get', orderId: '={{ $json.o }}' },
			{
				inputItems: [
					{ json: { o: 1001 } },
					{ json: { o: 999999 } },
					{ json: { o: 'x' } },
					{ json: { o: 1002 } },
				],
				onError: 'continueErrorOutput',
			},
		);
		expect(r.error).toBeUndefined();
		expect(r.items.map((i) => i.json.id)).toEqual([1001, 1002]);
		expect(r.items.map((i) => (i.pairedItem as { item: number }).item)).toEqual([0, 3]);
		expect(r.errorItems).toHaveLength(2);
		// n8n merges the input item's json into each error item
		expect(r.errorItems[0].json).toMatchObject({
			o: 999999,
			error: expect.stringMatching(/^not-found \(404\)/),
			details: { httpCode: '404' },
		});
		expect(r.errorItems[1].json).toMatchObject({
			o: 'x',
			error: expect.stringMatching(/Order ID/),
		});
		expect(r.errorItems.map((i) => (i.pairedItem as { item: number }).item)).toEqual([1, 2]);
		expectNoKey([r.items, r.errorItems], fixture.apiKey);
	});

	test('"Continue (regular output)" keeps them on the one output, in order', async () => {
		const r = await fixture.run(
			{ resource: 'order', operation: 'get', orderId: '={{ $json.o }}' },
			{
				inputItems: [{ json: { o: 1001 } }, { json: { o: 999999 } }],
				onError: 'continueRegularOutput',
			},
		);
		expect(r.error).toBeUndefined();
		expect(r.items.map((i) => i.json.id ?? i.json.error)).toEqual([
			1001,
			expect.stringMatching(/^not-found/),
		]);
		expect(r.errorItems).toEqual([]);
	});
});

describe('credential test', () => {
	test('passes with the demo key, and with a valid key that has no permissions at all', async () => {
		const before = (await fixture.control.requests()).length;
		await expect(
			testCredential(credentialType, { baseUrl: fixture.sandbox.baseUrl, apiKey: fixture.apiKey }),
		).resolves.toEqual({
			status: 'OK',
			message: 'Connection successful!',
		});
		const { apiKey } = await fixture.control.createUser({ permissions: [] });
		await expect(
			testCredential(credentialType, { baseUrl: `${fixture.sandbox.baseUrl}/`, apiKey }),
		).resolves.toMatchObject({ status: 'OK' });
		const sent = (await fixture.control.requests()).slice(before);
		expect(sent.map((s) => [s.method, s.path, s.status])).toEqual([
			['GET', '/v1/webhook-endpoints', 200],
			['GET', '/v1/webhook-endpoints', 200],
		]);
	});

	test('fails with an unknown or revoked key', async () => {
		const unknown = await testCredential(credentialType, {
			baseUrl: fixture.sandbox.baseUrl,
			apiKey: 'mk_nope',
		});
		expect(unknown.status).toBe('Error');
		const { apiKey } = await fixture.control.createUser({});
		await fixture.control.revokeKey(apiKey);
		const revoked = await testCredential(credentialType, {
			baseUrl: fixture.sandbox.baseUrl,
			apiKey,
		});
		expect(revoked.status).toBe('Error');
		expect(JSON.stringify([unknown, revoked])).not.toContain(apiKey);
		void ({} as IDataObject);
	});
});

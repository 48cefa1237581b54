/**
 * Single writes (sale channel connect, webhook endpoints) and the endpoint reads: the exact request,
 * an Idempotency-Key on every write (none on reads), the output items, and the sandbox state after.
 */
import type { IDataObject } from 'n8n-workflow';

import { jsonBesideNodeParameters } from '../nodeParameters';

import {
	fixtureWithReceiver,
	errorOf,
	expectRead,
	expectUniqueRequestIds,
	expectWrite,
	items,
	pairs,
} from './helpers';

const { fixture, receiver } = fixtureWithReceiver();

describe('saleChannel.connect', () => {
	test('POST /v1/brands/{id}/sale-channels/connect with only the fields set; one connection per item', async () => {
		const r = await fixture.run(
			{
				resource: 'saleChannel',
				operation: 'connect',
				brandId: '={{ $json.brandId }}',
				saleChannelName: '={{ $json.channel }}',
				additionalFields: {
					region: 'EU',
					apiKey: 'amz-key',
					apiSecret: 'amz-secret',
					isShared: false,
					logInEmail: '',
				},
			},
			{ inputItems: items({ brandId: 1, channel: 'Amazon' }, { brandId: 2, channel: 'Shopify' }) },
		);
		expect(r.error).toBeUndefined();
		expect(r.sent).toHaveLength(2);
		r.sent.forEach((s) => expectWrite(s, fixture.apiKey, 'POST'));
		expect(r.sent.map((s) => s.path)).toEqual([
			'/v1/brands/1/sale-channels/connect',
			'/v1/brands/2/sale-channels/connect',
		]);
		expect(r.sent.map((s) => s.rawQuery)).toEqual(['', '']);
		expect(r.sent[0].body).toEqual({
			saleChannelName: 'Amazon',
			region: 'EU',
			apiKey: 'amz-key',
			apiSecret: 'amz-secret',
			isShared: false,
		});
		expect(r.sent[1].body).toEqual({
			saleChannelName: 'Shopify',
			region: 'EU',
			apiKey: 'amz-key',
			apiSecret: 'amz-secret',
			isShared: false,
		});
		expect(new Set(r.sent.map((s) => s.idempotencyKey)).size).toBe(2);
		expectUniqueRequestIds(r.sent);

		expect(r.items.map((i) => [i.json.brandId, i.json.saleChannelName, i.json.status])).toEqual([
			[1, 'Amazon', 'Connected'],
			[2, 'Shopify', 'PendingAuthorization'],
		]);
		expect(r.items[1].json.oauthUrl).toEqual(expect.stringContaining('/oauth/shopify/authorize'));
		expect(pairs(r.items)).toEqual([0, 1]);
		const connections = await fixture.control.state<IDataObject>('connections');
		expect(connections.map((c) => c.id)).toEqual(r.items.map((i) => i.json.id));
	});

	test('a user-supplied Idempotency Key is sent as given; a re-run replays instead of connecting again', async () => {
		const parameters = {
			resource: 'saleChannel',
			operation: 'connect',
			brandId: '3',
			saleChannelName: 'Zalando',
			options: { idempotencyKey: '=connect-{{ $json.run }}' },
		};
		const first = await fixture.run(parameters, { inputItems: items({ run: 'r1' }) });
		const again = await fixture.run(parameters, { inputItems: items({ run: 'r1' }) });
		expect(first.sent[0].idempotencyKey).toBe('connect-r1');
		expect(first.sent[0].body).toEqual({ saleChannelName: 'Zalando' });
		expect(again.sent[0]).toMatchObject({ idempotencyKey: 'connect-r1', replayed: true });
		expect(again.items[0].json).toEqual(first.items[0].json);
		const connections = (await fixture.control.state<IDataObject>('connections')).filter(
			(c) => c.brandId === 3,
		);
		expect(connections).toHaveLength(1);
	});
});

describe("saleChannel.connect: the channel account's secrets are masked parameters", () => {
	// distinctive values, so that any copy of them in an output, an error or the run is found
	const ACCOUNT = {
		apiKey: 'chan-key-5f1e0c',
		apiSecret: 'chan-secret-9a2b7d',
		logInPassword: ' chan pass 3c8e ',
	};
	const SECRETS = Object.values(ACCOUNT).map((v) => v.trim());
	/** every secret found in a value, as JSON, besides the node's own parameters (where it was typed) */
	const secretsIn = (value: unknown) =>
		SECRETS.filter((s) => jsonBesideNodeParameters(value).includes(s));
	const amazon = (additionalFields: IDataObject, brandId = '1') => ({
		resource: 'saleChannel',
		operation: 'connect',
		brandId,
		saleChannelName: 'Amazon',
		additionalFields,
	});

	test('several brands in one run: every request carries the secrets, no output or other run data holds them', async () => {
		const r = await fixture.run(
			amazon(
				{ ...ACCOUNT, logInEmail: '={{ $json.email }}', region: 'EU' },
				'={{ $json.brandId }}',
			),
			{
				inputItems: items(
					{ brandId: 1, email: 'one@example.com' },
					{ brandId: 2, email: 'two@example.com' },
					{ brandId: 3, email: 'three@example.com' },
				),
			},
		);
		expect(r.error).toBeUndefined();
		expect(r.sent.map((s) => s.path)).toEqual([
			'/v1/brands/1/sale-channels/connect',
			'/v1/brands/2/sale-channels/connect',
			'/v1/brands/3/sale-channels/connect',
		]);
		expect(r.sent.map((s) => s.body)).toEqual(
			['one', 'two', 'three'].map((name) => ({
				saleChannelName: 'Amazon',
				region: 'EU',
				logInEmail: `${name}@example.com`,
				apiKey: 'chan-key-5f1e0c',
				apiSecret: 'chan-secret-9a2b7d',
				// a password is sent as typed, spaces and all
				logInPassword: ' chan pass 3c8e ',
			})),
		);
		// the sandbox connects an API-key channel only with a key and a secret
		expect(r.items.map((i) => [i.json.brandId, i.json.status])).toEqual([
			[1, 'Connected'],
			[2, 'Connected'],
			[3, 'Connected'],
		]);
		expect(pairs(r.items)).toEqual([0, 1, 2]);
		expect(secretsIn(r.sent)).toEqual(SECRETS); // the search finds them where they are
		expect(secretsIn(r.items)).toEqual([]);
		expect(secretsIn(r.run)).toEqual([]);
	});

	test('read by an expression from elsewhere ($env, where n8n allows it): sent, and nowhere in the workflow or the run', async () => {
		const allowed = process.env.N8N_BLOCK_ENV_ACCESS_IN_NODE;
		process.env.N8N_BLOCK_ENV_ACCESS_IN_NODE = 'false';
		process.env.MKT_TEST_CHANNEL_SECRET = 'chan-secret-9a2b7d';
		try {
			const parameters = amazon({
				apiKey: 'chan-key-5f1e0c',
				apiSecret: '={{ $env.MKT_TEST_CHANNEL_SECRET }}',
			});
			const r = await fixture.run(parameters);
			expect(r.error).toBeUndefined();
			expect(r.sent.map((s) => s.body)).toEqual([
				{ saleChannelName: 'Amazon', apiKey: 'chan-key-5f1e0c', apiSecret: 'chan-secret-9a2b7d' },
			]);
			expect(JSON.stringify([parameters, r.items, r.run])).not.toContain('chan-secret-9a2b7d');
		} finally {
			if (allowed === undefined) delete process.env.N8N_BLOCK_ENV_ACCESS_IN_NODE;
			else process.env.N8N_BLOCK_ENV_ACCESS_IN_NODE = allowed;
			delete process.env.MKT_TEST_CHANNEL_SECRET;
		}
	});

	test('brands on two channel accounts: each item sends the secrets its expressions read', async () => {
		const r = await fixture.run(
			amazon(
				{ apiKey: '={{ $json.account }}-key', apiSecret: '={{ $json.account }}-secret' },
				'={{ $json.brandId }}',
			),
			{
				inputItems: items(
					{ brandId: 1, account: 'account-a' },
					{ brandId: 2, account: 'account-b' },
				),
			},
		);
		expect(r.sent.map((s) => [s.path, s.body])).toEqual([
			[
				'/v1/brands/1/sale-channels/connect',
				{ saleChannelName: 'Amazon', apiKey: 'account-a-key', apiSecret: 'account-a-secret' },
			],
			[
				'/v1/brands/2/sale-channels/connect',
				{ saleChannelName: 'Amazon', apiKey: 'account-b-key', apiSecret: 'account-b-secret' },
			],
		]);
	});

	test('without them no channel secret is sent (an API-key channel then reports its error)', async () => {
		const r = await fixture.run(amazon({}, '2'));
		expect(r.error).toBeUndefined();
		expect(r.sent.map((s) => s.body)).toEqual([{ saleChannelName: 'Amazon' }]);
		expect(r.items[0].json).toMatchObject({
			status: 'Error',
			connectionError: 'Amazon needs apiKey and apiSecret',
		});
	});

	test('blank secrets are left out; a key and a secret are sent trimmed', async () => {
		const r = await fixture.run({
			...amazon({ apiKey: ' zal-key\n', apiSecret: '', logInPassword: '   ' }),
			saleChannelName: 'Zalando',
		});
		expect(r.error).toBeUndefined();
		expect(r.sent.map((s) => s.body)).toEqual([{ saleChannelName: 'Zalando', apiKey: 'zal-key' }]);
	});

	test("the service's error names no secret, as the node's error and as an error item", async () => {
		const parameters = { ...amazon(ACCOUNT), saleChannelName: 'eBay' };
		const failed = await fixture.run(parameters);
		expect(failed.sent.map((s) => [s.status, (s.body as IDataObject).apiKey])).toEqual([
			[400, 'chan-key-5f1e0c'],
		]);
		expect(errorOf(failed).message).toMatch(/^invalid-request \(400\)/);
		expect(secretsIn(failed.error)).toEqual([]);
		expect(secretsIn(failed.run)).toEqual([]);

		const continued = await fixture.run(parameters, { continueOnFail: true });
		expect(continued.items[0].json.error).toMatch(/^invalid-request \(400\)/);
		expect(secretsIn(continued.items)).toEqual([]);
		expect(secretsIn(continued.run)).toEqual([]);
	});

	test('a secret that is not text: the error names the field, not its value, and nothing is sent', async () => {
		const r = await fixture.run(
			amazon({ apiKey: 'chan-key-5f1e0c', apiSecret: '={{ { hidden: "chan-secret-9a2b7d" } }}' }),
		);
		expect(r.sent).toEqual([]);
		expect(errorOf(r).message).toBe(
			'Invalid parameter "Additional Fields > API Secret": must be text',
		);
		expect(secretsIn(r.error)).toEqual([]);
		expect(secretsIn(r.run)).toEqual([]);
	});
});

describe('webhookEndpoint', () => {
	let endpointId: number;

	test('create: POST with url, description, eventTypes; outputs the endpoint, its secret and a notice', async () => {
		const r = await fixture.run({
			resource: 'webhookEndpoint',
			operation: 'create',
			url: receiver().url,
			eventTypes: ['order.created', 'order.cancelled'],
			description: 'warehouse',
		});
		expect(r.error).toBeUndefined();
		// first the list of existing endpoints (so that after a 5xx a new one can be told apart), then the POST
		expect(r.sent).toHaveLength(2);
		expect(r.sent[0]).toMatchObject({
			method: 'GET',
			path: '/v1/webhook-endpoints',
			idempotencyKey: undefined,
		});
		expectWrite(r.sent[1], fixture.apiKey, 'POST');
		expect(r.sent[1]).toMatchObject({ path: '/v1/webhook-endpoints', rawQuery: '' });
		expect(r.sent[1].body).toEqual({
			url: receiver().url,
			description: 'warehouse',
			eventTypes: ['order.created', 'order.cancelled'],
		});
		expect(r.items).toHaveLength(1);
		const out = r.items[0].json;
		const stored = (await fixture.control.endpoints()).find((e) => e.id === out.id)!;
		expect(out).toMatchObject({
			url: receiver().url,
			description: 'warehouse',
			status: 'Enabled',
			eventTypes: ['order.created', 'order.cancelled'],
		});
		expect(out.secret).toBe(stored.secret);
		expect(out.secretNotice).toEqual(expect.stringMatching(/only in this answer/));
		expect(r.items[0].pairedItem).toEqual({ item: 0 });
		endpointId = out.id as number;
	});

	test('create without a description does not send one', async () => {
		const r = await fixture.run({
			resource: 'webhookEndpoint',
			operation: 'create',
			url: receiver().url,
			eventTypes: ['order.returned'],
			description: '',
		});
		expect(r.sent[1].body).toEqual({ url: receiver().url, eventTypes: ['order.returned'] });
		expect(r.items[0].json.description).toBe('');
	});

	test('get and getAll: GET, no Idempotency-Key, one item per endpoint', async () => {
		const one = await fixture.run(
			{ resource: 'webhookEndpoint', operation: 'get', endpointId: '={{ $json.id }}' },
			{ inputItems: items({ id: endpointId }, { id: endpointId }) },
		);
		expect(one.sent.map((s) => [s.method, s.path, s.rawQuery])).toEqual([
			['GET', `/v1/webhook-endpoints/${endpointId}`, ''],
			['GET', `/v1/webhook-endpoints/${endpointId}`, ''],
		]);
		one.sent.forEach((s) => expectRead(s, fixture.apiKey));
		expectUniqueRequestIds(one.sent);
		expect(one.items.map((i) => i.json.id)).toEqual([endpointId, endpointId]);
		expect(one.items[0].json.secret).toBeUndefined();
		expect(pairs(one.items)).toEqual([0, 1]);

		const all = await fixture.run({ resource: 'webhookEndpoint', operation: 'getAll' });
		expectRead(all.sent[0], fixture.apiKey);
		expect(all.sent.map((s) => [s.path, s.rawQuery])).toEqual([['/v1/webhook-endpoints', '']]);
		const owned = (await fixture.control.endpoints()).filter((e) => e.ownerUserId === 1);
		expect(all.items.map((i) => i.json.id)).toEqual(owned.map((e) => e.id));
		expect(pairs(all.items)).toEqual(owned.map(() => 0));
	});

	test('update: PATCH with only the fields added', async () => {
		const r = await fixture.run({
			resource: 'webhookEndpoint',
			operation: 'update',
			endpointId: String(endpointId),
			updateFields: { description: 'packing desk', status: 'Disabled' },
		});
		expect(r.error).toBeUndefined();
		expectWrite(r.sent[0], fixture.apiKey, 'PATCH');
		expect(r.sent[0].path).toBe(`/v1/webhook-endpoints/${endpointId}`);
		expect(r.sent[0].body).toEqual({ description: 'packing desk', status: 'Disabled' });
		expect(r.items[0].json).toMatchObject({
			id: endpointId,
			description: 'packing desk',
			status: 'Disabled',
		});
		const stored = (await fixture.control.endpoints()).find((e) => e.id === endpointId)!;
		expect(stored).toMatchObject({ description: 'packing desk', status: 'Disabled' });

		const back = await fixture.run({
			resource: 'webhookEndpoint',
			operation: 'update',
			endpointId: String(endpointId),
			updateFields: { status: 'Enabled', eventTypes: ['brand_health.band_entered'] },
		});
		expect(back.sent[0].body).toEqual({
			eventTypes: ['brand_health.band_entered'],
			status: 'Enabled',
		});
		expect(back.items[0].json).toMatchObject({
			status: 'Enabled',
			eventTypes: ['brand_health.band_entered'],
		});
	});

	test('update: an empty Description is not sent (the service refuses it); alone it is an input error', async () => {
		const r = await fixture.run({
			resource: 'webhookEndpoint',
			operation: 'update',
			endpointId: String(endpointId),
			updateFields: { description: '', status: 'Enabled' },
		});
		expect(r.error).toBeUndefined();
		expect(r.sent[0].body).toEqual({ status: 'Enabled' });
		expect(r.items[0].json.description).toBe('packing desk');
		const alone = await fixture.run({
			resource: 'webhookEndpoint',
			operation: 'update',
			endpointId: String(endpointId),
			updateFields: { description: '  ' },
		});
		expect(errorOf(alone).message).toMatch(
			/^Invalid parameter "Update Fields": add at least one field/,
		);
		expect(alone.sent).toEqual([]);
		// what the service answers to an empty description, for the record
		const raw = await fetch(`${fixture.sandbox.baseUrl}/v1/webhook-endpoints/${endpointId}`, {
			method: 'PATCH',
			headers: { authorization: `Bearer ${fixture.apiKey}`, 'content-type': 'application/json' },
			body: JSON.stringify({ description: '' }),
		});
		expect(raw.status).toBe(400);
	});

	test('test: POST .../test, one webhook.test delivery reaches the receiver', async () => {
		const before = receiver().received.length;
		const r = await fixture.run({
			resource: 'webhookEndpoint',
			operation: 'test',
			endpointId: endpointId,
		});
		expect(r.error).toBeUndefined();
		expectWrite(r.sent[0], fixture.apiKey, 'POST');
		expect(r.sent[0].path).toBe(`/v1/webhook-endpoints/${endpointId}/test`);
		expect(r.sent[0].body).toBeUndefined();
		expect(r.items).toHaveLength(1);
		expect(r.items[0].json).toMatchObject({
			webhookEndpointId: endpointId,
			eventType: 'webhook.test',
			attempts: 1,
			responseStatusCode: 204,
		});
		expect(receiver().received.length).toBe(before + 1);
		expect(JSON.parse(receiver().received.at(-1)!.body)).toMatchObject({
			type: 'webhook.test',
			data: { webhookEndpointId: endpointId },
		});
	});

	test('getDeliveries: GET .../deliveries, newest first, page/limit', async () => {
		const r = await fixture.run({
			resource: 'webhookEndpoint',
			operation: 'getDeliveries',
			endpointId: endpointId,
			returnAll: true,
		});
		expect(r.error).toBeUndefined();
		expectRead(r.sent[0], fixture.apiKey);
		expect(r.sent.map((s) => [s.path, s.rawQuery])).toEqual([
			[`/v1/webhook-endpoints/${endpointId}/deliveries`, 'page=1&limit=100'],
		]);
		const stored = await fixture.control.deliveries(endpointId);
		expect(r.items.map((i) => i.json.id)).toEqual(stored.map((d) => d.id).sort((a, b) => b - a));
		expect(r.items[0].json.eventType).toBe('webhook.test');

		const one = await fixture.run({
			resource: 'webhookEndpoint',
			operation: 'getDeliveries',
			endpointId: endpointId,
			limit: 1,
		});
		expect(one.sent.map((s) => s.rawQuery)).toEqual(['page=1&limit=1']);
		expect(one.items).toHaveLength(1);
	});

	test('rotateSecret: POST .../rotate-secret; the new secret is output once, the old one kept for the overlap', async () => {
		const oldSecret = (await fixture.control.endpoints()).find((e) => e.id === endpointId)!.secret;
		const r = await fixture.run({
			resource: 'webhookEndpoint',
			operation: 'rotateSecret',
			endpointId: endpointId,
		});
		expect(r.error).toBeUndefined();
		expectWrite(r.sent[0], fixture.apiKey, 'POST');
		expect(r.sent[0].path).toBe(`/v1/webhook-endpoints/${endpointId}/rotate-secret`);
		const stored = (await fixture.control.endpoints()).find((e) => e.id === endpointId)!;
		expect(r.items[0].json).toMatchObject({ id: endpointId, secret: stored.secret });
		expect(r.items[0].json.secret).not.toBe(oldSecret);
		expect(stored.previousSecret).toBe(oldSecret);
	});

	test('delete: DELETE, outputs { id, deleted: true } per item', async () => {
		const r = await fixture.run({
			resource: 'webhookEndpoint',
			operation: 'delete',
			endpointId: endpointId,
		});
		expect(r.error).toBeUndefined();
		expectWrite(r.sent[0], fixture.apiKey, 'DELETE');
		expect(r.sent[0]).toMatchObject({ path: `/v1/webhook-endpoints/${endpointId}`, status: 204 });
		expect(r.items).toEqual([{ json: { id: endpointId, deleted: true }, pairedItem: { item: 0 } }]);
		expect((await fixture.control.endpoints()).some((e) => e.id === endpointId)).toBe(false);
	});
});

import { MARK_PACKED_MAX_BATCH } from '../../nodes/shared/routes';
import type { SandboxHandle } from './index';
import { call, withSandbox } from './testkit';

let sb: SandboxHandle;
beforeAll(async () => {
	sb = await withSandbox({ quota: 10_000 });
});
afterAll(() => sb.close());

type SeedOrder = { id: number; brandId: number; status: string };
const pack = (body: unknown) => call(sb, 'POST', '/v1/fulfillment/orders/packed', { body });

describe('mark packed', () => {
	test('per-item results: Created becomes Packed; packed, unknown and out-of-scope ids fail', async () => {
		const orders = await sb.control.state<SeedOrder>('orders');
		const created = orders.find((o) => o.status === 'Created' && o.brandId <= 5)!;
		const packed = orders.find((o) => o.status === 'Packed' && o.brandId <= 5)!;
		const outside = orders.find((o) => o.status === 'Created' && o.brandId === 6)!;
		const r = await pack({ orderIds: [created.id, packed.id, 424242, outside.id] });
		expect(r.status).toBe(200);
		expect(r.body.results[0]).toEqual({ orderId: created.id, success: true, status: 'Packed' });
		expect(r.body.results[1]).toMatchObject({
			orderId: packed.id,
			success: false,
			error: { type: `${sb.baseUrl}/errors/conflict` },
		});
		expect(r.body.results[2]).toMatchObject({
			orderId: 424242,
			success: false,
			error: { type: `${sb.baseUrl}/errors/not-found` },
		});
		expect(r.body.results[3]).toMatchObject({
			orderId: outside.id,
			success: false,
			error: { type: `${sb.baseUrl}/errors/not-found` },
		});
		for (const item of r.body.results.slice(1))
			expect(Object.keys(item.error).sort()).toEqual(['detail', 'title', 'type']);
		expect((await sb.control.state<SeedOrder>('orders', created.id)).status).toBe('Packed');
		expect((await sb.control.state<SeedOrder>('orders', outside.id)).status).toBe('Created');
	});

	test('validation: orderIds array of integers, 1..MARK_PACKED_MAX_BATCH, no other fields', async () => {
		const cases: [unknown, string[]][] = [
			[{}, ['/orderIds']],
			[{ orderIds: [] }, ['/orderIds']],
			[{ orderIds: '1001' }, ['/orderIds']],
			[{ orderIds: [1001, 1.5, '3'] }, ['/orderIds/1', '/orderIds/2']],
			[{ orderIds: [1001], OrderIds: [1] }, ['/OrderIds']],
			[
				{ orderIds: Array.from({ length: MARK_PACKED_MAX_BATCH + 1 }, (_, i) => i + 1) },
				['/orderIds'],
			],
			[[1001], ['']],
		];
		for (const [body, expected] of cases) {
			const r = await pack(body);
			expect([JSON.stringify(body).slice(0, 40), r.status]).toEqual([
				JSON.stringify(body).slice(0, 40),
				400,
			]);
			expect(r.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(expected);
		}
		const max = await pack({
			orderIds: Array.from({ length: MARK_PACKED_MAX_BATCH }, (_, i) => 90_000 + i),
		});
		expect(max.body.results).toHaveLength(MARK_PACKED_MAX_BATCH);
	});
});

describe('connect sale channel (4.2)', () => {
	test('201 with the connection object; an OAuth-type channel answers with oauthUrl', async () => {
		const shopify = await call(sb, 'POST', '/v1/brands/1/sale-channels/connect', {
			body: { saleChannelName: 'Shopify', region: 'EU' },
		});
		expect(shopify.status).toBe(201);
		expect(shopify.body).toMatchObject({
			brandId: 1,
			saleChannelName: 'Shopify',
			status: 'PendingAuthorization',
			connectionDate: expect.any(String),
		});
		expect(shopify.body.oauthUrl).toMatch(/^http/);
		const zalando = await call(sb, 'POST', '/v1/brands/2/sale-channels/connect', {
			body: {
				saleChannelName: 'Zalando',
				fulfillmentModel: 'Merchant',
				isShared: true,
				inventoryScope: 'All',
				logInEmail: 'a@b.c',
				logInPassword: 'x',
				brandIdInSaleChannel: 'Z-1',
			},
		});
		expect(zalando.status).toBe(201);
		expect(zalando.body).toMatchObject({
			brandId: 2,
			status: 'Connected',
			sellerFulfillmentSetup: { fulfillmentModel: 'Merchant' },
		});
		expect(zalando.body.oauthUrl).toBeUndefined();
		const amazon = await call(sb, 'POST', '/v1/brands/3/sale-channels/connect', {
			body: { saleChannelName: 'Amazon', apiKey: 'k', apiSecret: 's' },
		});
		expect(amazon.body.status).toBe('Connected');
		const amazonNoKeys = await call(sb, 'POST', '/v1/brands/3/sale-channels/connect', {
			body: { saleChannelName: 'Amazon' },
		});
		expect(amazonNoKeys.body).toMatchObject({
			status: 'Error',
			connectionError: expect.any(String),
		});
		expect((await sb.control.state('connections')).length).toBe(4);
	});

	test('only documented fields with exact types and case; errors in the other shape', async () => {
		for (const body of [
			{},
			{ saleChannelName: 'shopify' },
			{ saleChannelName: 'Shopify', isShared: 'true' },
			{ saleChannelName: 'Shopify', oauth: true },
			{ saleChannelName: 'Shopify', fulfillmentModel: 'merchant' },
		]) {
			const r = await call(sb, 'POST', '/v1/brands/1/sale-channels/connect', { body });
			expect(r.status).toBe(400);
			expect(r.body).toMatchObject({
				statusCode: 400,
				message: expect.any(String),
				path: '/v1/brands/1/sale-channels/connect',
			});
		}
	});

	test('needs saleChannelAuth.write', async () => {
		const { apiKey } = await sb.control.createUser({ permissions: ['brands.read'] });
		const r = await call(sb, 'POST', '/v1/brands/1/sale-channels/connect', {
			key: apiKey,
			body: { saleChannelName: 'Shopify' },
		});
		expect(r.status).toBe(403);
		expect(r.body.type).toBe(`${sb.baseUrl}/errors/forbidden`);
	});
});

import type { SandboxHandle } from './index';
import { get, withSandbox } from './testkit';
import type { Json } from '../json';

let sb: SandboxHandle;
beforeAll(async () => {
	sb = await withSandbox({ quota: 10_000 });
});
afterAll(() => sb.close());

const pointers = (r: { body: Json }) => r.body.errors?.map((e: { pointer: string }) => e.pointer);

function expectInvalid(r: { status: number; body: Json }, pointer: string) {
	expect(r.status).toBe(400);
	expect(r.body.type).toBe(`${sb.baseUrl}/errors/invalid-request`);
	expect(pointers(r)).toEqual([pointer]);
}

describe('seeded demo data', () => {
	test('deterministic: the same seed gives the same records', async () => {
		const other = await withSandbox();
		try {
			const a = (await get(sb, '/v1/products?limit=100&page=2')).body.products;
			const b = (await get(other, '/v1/products?limit=100&page=2')).body.products.map(
				(p: { createdAt: string }) => p,
			);
			expect(a.map((p: { sku: string; price: number }) => [p.sku, p.price])).toEqual(
				b.map((p: { sku: string; price: number }) => [p.sku, p.price]),
			);
		} finally {
			await other.close();
		}
	});

	test('brands, products, orders, returns, purchase orders, health, forecasts, categories', async () => {
		const products = await get(sb, '/v1/products');
		expect(products.body.pagination.total).toBeGreaterThanOrEqual(300);
		expect(products.body.categories.some((c: { name: string }) => c.name === 'Home, Garden')).toBe(
			true,
		);
		const statuses = new Set(
			(await get(sb, '/v1/orders')).body.orders.map((o: { status: string }) => o.status),
		);
		expect([...statuses].sort()).toEqual(['Cancelled', 'Created', 'Packed', 'Returned']);
		expect((await get(sb, '/v1/returns')).body.pagination.total).toBeGreaterThan(5);
		const pos = (await get(sb, '/v1/vendor/purchase-orders/export')).body.purchaseOrders;
		expect(new Set(pos.map((p: { status: string }) => p.status))).toEqual(
			new Set(['Confirmed', 'Closed']),
		);
		const health = (await get(sb, '/v1/brand-health?brandId=2')).body;
		expect(health.categories).toContain('Home, Garden');
		expect(health.dimensions[0]).toEqual({
			dimension: expect.any(String),
			band: expect.any(String),
			score: expect.any(Number),
			category: expect.any(String),
		});
		expect((await get(sb, '/v1/inventory-forecasts')).body.pagination).toMatchObject({
			page: 1,
			limit: 25,
		});
		expect((await sb.control.state('brands')).length).toBeGreaterThanOrEqual(7);
	});
});

describe('pagination (4.5)', () => {
	test('defaults, walking every page, empty page past totalPages', async () => {
		const first = await get(sb, '/v1/products');
		expect(first.body.pagination).toEqual({ page: 1, limit: 10, total: 320, totalPages: 32 });
		const ids = new Set<number>();
		for (let page = 1; page <= 4; page++) {
			const r = await get(sb, `/v1/products?limit=100&page=${page}`);
			r.body.products.forEach((p: { id: number }) => ids.add(p.id));
			expect(r.body.pagination.totalPages).toBe(4);
		}
		expect(ids.size).toBe(320);
		const past = await get(sb, '/v1/products?limit=100&page=5');
		expect(past.status).toBe(200);
		expect(past.body.products).toEqual([]);
		expect(past.body.pagination).toEqual({ page: 5, limit: 100, total: 320, totalPages: 4 });
		const empty = await get(sb, '/v1/returns?statuses=Refunded&brandIds=1&page=99');
		expect(empty.body.returns).toEqual([]);
	});

	test('limit bounds and malformed page/limit are 400 with the parameter pointer', async () => {
		expect((await get(sb, '/v1/products?limit=100')).body.products).toHaveLength(100);
		expect((await get(sb, '/v1/products?limit=1')).body.products).toHaveLength(1);
		expectInvalid(await get(sb, '/v1/products?limit=101'), '/limit');
		expectInvalid(await get(sb, '/v1/products?limit=0'), '/limit');
		expectInvalid(await get(sb, '/v1/products?limit=ten'), '/limit');
		expectInvalid(await get(sb, '/v1/inventory-forecasts?limit=101'), '/limit');
		expectInvalid(await get(sb, '/v1/products?page=0'), '/page');
		expectInvalid(await get(sb, '/v1/products?page=1.5'), '/page');
		expectInvalid(await get(sb, '/v1/returns?page=-1'), '/page');
		expectInvalid(await get(sb, '/v1/brands?limit=500'), '/limit');
	});

	test('brands: whole set without limit, paginated with it', async () => {
		expect((await get(sb, '/v1/brands')).body).toEqual({ brands: expect.any(Array) });
		const paged = await get(sb, '/v1/brands?limit=2&page=3');
		expect(paged.body.brands.map((b: { id: number }) => b.id)).toEqual([5]);
		expect(paged.body.pagination).toEqual({ page: 3, limit: 2, total: 5, totalPages: 3 });
	});

	test('generated products for large Return All runs', async () => {
		const s = await withSandbox();
		try {
			const r = await s.control.generateProducts({ count: 10_000, brandId: 1 });
			expect(r.total).toBe(10_360);
			expect((await get(s, '/v1/products?brandIds=1&limit=100')).body.pagination.total).toBe(
				10_064,
			);
			const o = await s.control.generateOrders({ count: 50, brandId: 2, status: 'Created' });
			expect(o.created).toBe(50);
		} finally {
			await s.close();
		}
	});
});

describe('filter encodings (4.5.4)', () => {
	test('products and orders split lists on commas; a repeated key is invalid', async () => {
		const r = await get(sb, '/v1/products?brandIds=1,3&limit=100');
		expect(new Set(r.body.products.map((p: { brandId: number }) => p.brandId))).toEqual(
			new Set([1, 3]),
		);
		expect(r.body.pagination.total).toBe(128);
		expectInvalid(await get(sb, '/v1/products?brandIds=1&brandIds=3'), '/brandIds');
		const orders = (await get(sb, '/v1/orders?statuses=Created,Packed&brandIds=1,2')).body.orders;
		expect(orders.length).toBeGreaterThan(0);
		expect(
			orders.every(
				(o: { status: string; brandId: number }) =>
					['Created', 'Packed'].includes(o.status) && [1, 2].includes(o.brandId),
			),
		).toBe(true);
		expectInvalid(await get(sb, '/v1/orders?statuses=Created&statuses=Packed'), '/statuses');
	});

	test('enum values are case-sensitive; unknown parameters are rejected', async () => {
		expectInvalid(await get(sb, '/v1/orders?statuses=created'), '/statuses');
		expectInvalid(await get(sb, '/v1/orders?fulfillmentModel=merchant'), '/fulfillmentModel');
		expect(
			(await get(sb, '/v1/orders?fulfillmentModel=Merchant')).body.orders.every(
				(o: { fulfillmentModel: string }) => o.fulfillmentModel === 'Merchant',
			),
		).toBe(true);
		expectInvalid(await get(sb, '/v1/products?brandId=1'), '/brandId');
		expectInvalid(await get(sb, '/v1/orders?page=1'), '/page');
		expectInvalid(await get(sb, '/v1/vendor/purchase-orders/export?limit=10'), '/limit');
	});

	test('orders startDate: ISO date-time or date; anything else 400', async () => {
		const all = (await get(sb, '/v1/orders')).body.orders as { createdAt: string }[];
		const pivot = all[Math.floor(all.length / 2)].createdAt;
		const since = (await get(sb, `/v1/orders?startDate=${encodeURIComponent(pivot)}`)).body
			.orders as { createdAt: string }[];
		expect(since.length).toBe(all.filter((o) => o.createdAt >= pivot).length);
		expect(since.length).toBeLessThan(all.length);
		const noMillis = pivot.replace(/\.\d{3}Z$/, 'Z');
		expect((await get(sb, `/v1/orders?startDate=${noMillis}`)).status).toBe(200);
		expect((await get(sb, `/v1/orders?startDate=${pivot.slice(0, 10)}`)).status).toBe(200);
		for (const bad of [
			'yesterday',
			'2026-11-20T00:00:00',
			'2026-11-20T00:00:00%2B01:00',
			'20261120',
			'2026-13-45',
		]) {
			expectInvalid(await get(sb, `/v1/orders?startDate=${bad}`), '/startDate');
		}
	});

	test('purchase-order page reads take repeated keys; a comma value is one invalid value', async () => {
		const r = await get(
			sb,
			'/v1/vendor/purchase-orders?brandIds=1&brandIds=2&statuses=Confirmed&statuses=Closed&saleChannelIds=1&saleChannelIds=2&limit=100',
		);
		expect(r.status).toBe(200);
		const items = r.body.purchaseOrders as { brandId: number; saleChannelId: number }[];
		expect(items.length).toBeGreaterThan(0);
		expect(items.every((p) => [1, 2].includes(p.brandId) && [1, 2].includes(p.saleChannelId))).toBe(
			true,
		);
		expect(new Set(items.map((p) => p.brandId))).toEqual(new Set([1, 2]));
		expectInvalid(await get(sb, '/v1/vendor/purchase-orders?brandIds=1,2'), '/brandIds');
		expectInvalid(
			await get(sb, '/v1/vendor/purchase-orders?statuses=Confirmed,Closed'),
			'/statuses',
		);
		expectInvalid(
			await get(sb, '/v1/vendor/purchase-orders?saleChannelIds=1,2'),
			'/saleChannelIds',
		);
	});

	test('the export takes commas; repeated keys are invalid', async () => {
		const r = await get(sb, '/v1/vendor/purchase-orders/export?brandIds=1,2&statuses=Confirmed');
		expect(r.body.pagination).toBeUndefined();
		expect(
			r.body.purchaseOrders.every(
				(p: { brandId: number; status: string }) =>
					[1, 2].includes(p.brandId) && p.status === 'Confirmed',
			),
		).toBe(true);
		expectInvalid(
			await get(sb, '/v1/vendor/purchase-orders/export?brandIds=1&brandIds=2'),
			'/brandIds',
		);
	});

	test('brand health takes repeated categories keys; a name may contain a comma', async () => {
		const one = await get(
			sb,
			`/v1/brand-health?brandId=2&categories=${encodeURIComponent('Home, Garden')}`,
		);
		expect(one.body.categories).toEqual(['Home, Garden']);
		expect(
			one.body.dimensions.every((d: { category: string }) => d.category === 'Home, Garden'),
		).toBe(true);
		const all = (await get(sb, '/v1/brand-health?brandId=2')).body.categories as string[];
		const two = await get(
			sb,
			`/v1/brand-health?brandId=2&${all.map((c) => `categories=${encodeURIComponent(c)}`).join('&')}`,
		);
		expect(two.body.categories).toEqual(all);
		expectInvalid(
			await get(sb, `/v1/brand-health?brandId=2&categories=${encodeURIComponent(all.join(','))}`),
			'/categories',
		);
		expectInvalid(await get(sb, '/v1/brand-health'), '/brandId');
		expectInvalid(await get(sb, '/v1/brand-health?brandId=x'), '/brandId');
	});

	test('inventory forecasts and returns filter by comma lists', async () => {
		const f = await get(sb, '/v1/inventory-forecasts?brandIds=2,4&limit=100');
		expect(new Set(f.body.forecasts.map((x: { brandId: number }) => x.brandId))).toEqual(
			new Set([2, 4]),
		);
		const r = await get(sb, '/v1/returns?statuses=Requested,Received&limit=100');
		expect(
			r.body.returns.every((x: { status: string }) => ['Requested', 'Received'].includes(x.status)),
		).toBe(true);
		expectInvalid(await get(sb, '/v1/inventory-forecasts?brandIds=2&brandIds=4'), '/brandIds');
	});
});

import type { SandboxHandle } from './index';
import { call, get, withSandbox } from './testkit';
import type { Json } from '../json';

let sb: SandboxHandle;
beforeAll(async () => {
	sb = await withSandbox();
});
afterAll(() => sb.close());

function expectProblem(
	r: { status: number; headers: Headers; body: Json },
	status: number,
	slug: string,
) {
	expect(r.status).toBe(status);
	expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
	expect(r.body.type).toBe(`${sb.baseUrl}/errors/${slug}`);
	expect(r.body.status).toBe(status);
	expect(typeof r.body.title).toBe('string');
	expect(typeof r.body.detail).toBe('string');
	expect(r.body.requestId).toBe(r.headers.get('x-request-id'));
}

describe('authentication (part 5)', () => {
	test('missing, malformed, unknown and revoked keys are 401 unauthorized', async () => {
		expectProblem(await get(sb, '/v1/products', { key: null }), 401, 'unauthorized');
		expectProblem(await get(sb, '/v1/products', { key: 'mk_nope' }), 401, 'unauthorized');
		expectProblem(
			await get(sb, '/v1/products', {
				key: null,
				headers: { authorization: `Basic ${sb.demoApiKey}` },
			}),
			401,
			'unauthorized',
		);
		const { userId, apiKey } = await sb.control.createUser();
		const second = await sb.control.createKey(userId);
		expect((await get(sb, '/v1/products', { key: apiKey })).status).toBe(200);
		await sb.control.revokeKey(apiKey);
		expectProblem(await get(sb, '/v1/products', { key: apiKey }), 401, 'unauthorized');
		expect((await get(sb, '/v1/products', { key: second.apiKey })).status).toBe(200);
	});

	test('a 401 carries no rate-limit headers; the demo key works on every read', async () => {
		const r = await get(sb, '/v1/orders', { key: null });
		expect(r.headers.get('ratelimit')).toBeNull();
		for (const path of [
			'/v1/products',
			'/v1/orders',
			'/v1/returns',
			'/v1/vendor/purchase-orders',
			'/v1/vendor/purchase-orders/export',
			'/v1/brand-health?brandId=1',
			'/v1/inventory-forecasts',
			'/v1/brands',
			'/v1/webhook-endpoints',
		]) {
			expect([path, (await get(sb, path)).status]).toEqual([path, 200]);
		}
	});

	test('a key without the permission is 403 forbidden', async () => {
		const { apiKey } = await sb.control.createUser({ permissions: ['products.read'] });
		expect((await get(sb, '/v1/products', { key: apiKey })).status).toBe(200);
		expectProblem(await get(sb, '/v1/orders', { key: apiKey }), 403, 'forbidden');
		expectProblem(
			await call(sb, 'POST', '/v1/fulfillment/orders/packed', {
				key: apiKey,
				body: { orderIds: [1001] },
			}),
			403,
			'forbidden',
		);
		expectProblem(
			await call(sb, 'POST', '/v1/brands/1/sale-channels/connect', {
				key: apiKey,
				body: { saleChannelName: 'Zalando' },
			}),
			403,
			'forbidden',
		);
		// webhook endpoints need no permission
		expect((await get(sb, '/v1/webhook-endpoints', { key: apiKey })).status).toBe(200);
	});

	test('a key-level permission set overrides the user', async () => {
		const { userId } = await sb.control.createUser();
		const { apiKey } = await sb.control.createKey(userId, { permissions: ['orders.read'] });
		expect((await get(sb, '/v1/orders', { key: apiKey })).status).toBe(200);
		expectProblem(await get(sb, '/v1/products', { key: apiKey }), 403, 'forbidden');
	});

	test('naming a brand outside the scope is 403; one resource outside the scope is hidden as 404', async () => {
		expectProblem(await get(sb, '/v1/products?brandIds=1,6'), 403, 'forbidden');
		expectProblem(await get(sb, '/v1/orders?brandIds=7'), 403, 'forbidden');
		expectProblem(await get(sb, '/v1/brand-health?brandId=6'), 403, 'forbidden');
		expectProblem(
			await call(sb, 'POST', '/v1/brands/6/sale-channels/connect', {
				body: { saleChannelName: 'Zalando' },
			}),
			403,
			'forbidden',
		);
		const orders = await sb.control.state<{ id: number; brandId: number }>('orders');
		const outside = orders.find((o) => o.brandId === 6)!;
		const inside = orders.find((o) => o.brandId === 1)!;
		expect((await get(sb, `/v1/orders/${inside.id}`)).body.id).toBe(inside.id);
		expectProblem(await get(sb, `/v1/orders/${outside.id}`), 404, 'not-found');
		expectProblem(await get(sb, '/v1/orders/999999'), 404, 'not-found');
		// lists without brandIds only show the scope
		const all = await get(sb, '/v1/orders');
		expect(all.body.orders.length).toBeGreaterThan(0);
		expect(all.body.orders.every((o: { brandId: number }) => o.brandId <= 5)).toBe(true);
		const brands = await get(sb, '/v1/brands');
		expect(brands.body.brands.map((b: { id: number }) => b.id)).toEqual([1, 2, 3, 4, 5]);
	});

	test('unknown paths and wrong methods are 404 not-found problems', async () => {
		expectProblem(await get(sb, '/v1/nothing'), 404, 'not-found');
		expectProblem(await call(sb, 'DELETE', '/v1/products'), 404, 'not-found');
		expectProblem(await get(sb, '/v2/products'), 404, 'not-found');
	});
});

describe('X-Request-Id (4.1)', () => {
	test('a well-formed value up to 128 characters is echoed', async () => {
		const id = `abc-${'x'.repeat(124)}`;
		expect(id).toHaveLength(128);
		expect(
			(await get(sb, '/v1/brands', { headers: { 'x-request-id': id } })).headers.get(
				'x-request-id',
			),
		).toBe(id);
		expect(
			(
				await get(sb, '/v1/nothing', { key: null, headers: { 'x-request-id': 'trace-1' } })
			).headers.get('x-request-id'),
		).toBe('trace-1');
	});

	test('an over-long or malformed value is replaced by a generated one, in the problem body too', async () => {
		for (const bad of ['y'.repeat(129), 'has space', 'semi;colon']) {
			const r = await get(sb, '/v1/orders?statuses=created', { headers: { 'x-request-id': bad } });
			const id = r.headers.get('x-request-id');
			expect(id).toBeTruthy();
			expect(id).not.toBe(bad);
			expect(r.body.requestId).toBe(id);
		}
		const a = (await get(sb, '/v1/brands')).headers.get('x-request-id');
		const b = (await get(sb, '/v1/brands')).headers.get('x-request-id');
		expect(a).not.toBe(b);
	});
});

describe('the two error shapes (part 7)', () => {
	test('validation failures are problem+json with pointers', async () => {
		const r = await call(sb, 'POST', '/v1/fulfillment/orders/packed', {
			body: { orderIds: ['1001'], extra: true },
		});
		expectProblem(r, 400, 'invalid-request');
		expect(r.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual([
			'/extra',
			'/orderIds/0',
		]);
	});

	test('connect answers its validation failures with {statusCode, message, path}', async () => {
		const r = await call(sb, 'POST', '/v1/brands/1/sale-channels/connect', {
			body: { saleChannelName: 'Zalando', isShared: 'yes', Region: 'EU' },
		});
		expect(r.status).toBe(400);
		expect(r.headers.get('content-type')).toMatch(/^application\/json/);
		expect(r.body).toMatchObject({
			statusCode: 400,
			path: '/v1/brands/1/sale-channels/connect',
			error: 'Bad Request',
		});
		expect(typeof r.body.message).toBe('string');
		expect(r.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
			'Region',
			'isShared',
		]);
		expect(r.body.type).toBeUndefined();
		const badPath = await call(sb, 'POST', '/v1/brands/abc/sale-channels/connect', {
			body: { saleChannelName: 'Zalando' },
		});
		expect(badPath.body).toMatchObject({
			statusCode: 400,
			path: '/v1/brands/abc/sale-channels/connect',
		});
		const notJson = await call(sb, 'POST', '/v1/brands/1/sale-channels/connect', {
			rawBody: '{oops',
		});
		expect(notJson.body.statusCode).toBe(400);
	});

	test('a body over the size limit is 413 payload-too-large', async () => {
		const small = await withSandbox({ maxBodyBytes: 100 });
		try {
			const r = await call(small, 'POST', '/v1/fulfillment/orders/packed', {
				body: { orderIds: Array.from({ length: 60 }, (_, i) => 1001 + i) },
			});
			expect(r.status).toBe(413);
			expect(r.body.type).toBe(`${small.baseUrl}/errors/payload-too-large`);
		} finally {
			await small.close();
		}
	});
});

describe('failed-authentication limit (part 8)', () => {
	test('failures are limited per client IP; the 429 carries only Retry-After; valid keys still pass', async () => {
		const s = await withSandbox({ authFailQuota: 3, authFailWindowSeconds: 2 });
		try {
			for (let i = 0; i < 3; i++)
				expect((await get(s, '/v1/products', { key: 'wrong' })).status).toBe(401);
			const limited = await get(s, '/v1/products', { key: 'wrong' });
			expect(limited.status).toBe(429);
			expect(limited.body.type).toBe(`${s.baseUrl}/errors/rate-limited`);
			expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
			expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(2);
			expect(limited.headers.get('ratelimit')).toBeNull();
			expect(limited.headers.get('ratelimit-policy')).toBeNull();
			expect((await get(s, '/v1/products')).status).toBe(200);
			// once the window has passed on the service's clock, failures count afresh
			await s.control.advanceClockMs(2100);
			expect((await get(s, '/v1/products', { key: 'wrong' })).status).toBe(401);
		} finally {
			await s.close();
		}
	});

	test('the default failed-auth quota is 60 per minute', async () => {
		const s = await withSandbox();
		try {
			const statuses = [];
			for (let i = 0; i < 61; i++)
				statuses.push((await get(s, '/v1/products', { key: null })).status);
			expect(statuses.slice(0, 60).every((x) => x === 401)).toBe(true);
			expect(statuses[60]).toBe(429);
		} finally {
			await s.close();
		}
	});
});

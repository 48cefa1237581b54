import { call, get, withSandbox } from './testkit';

describe('rate limit (part 8)', () => {
	test('the 121st request in a window is 429 rate-limited with correct headers', async () => {
		const sb = await withSandbox();
		try {
			let last;
			for (let i = 1; i <= 120; i++) {
				last = await get(sb, i % 3 === 0 ? '/v1/orders?statuses=bad' : '/v1/brands');
				expect(last.headers.get('ratelimit-policy')).toBe('"default";q=120;w=60');
				expect(last.headers.get('ratelimit')).toMatch(
					new RegExp(`^"default";r=${120 - i};t=(60|59)$`),
				);
				expect(last.status).not.toBe(429);
			}
			const over = await get(sb, '/v1/brands');
			expect(over.status).toBe(429);
			expect(over.headers.get('content-type')).toMatch(/problem\+json/);
			expect(over.body.type).toBe(`${sb.baseUrl}/errors/rate-limited`);
			expect(over.body.requestId).toBe(over.headers.get('x-request-id'));
			expect(over.headers.get('ratelimit-policy')).toBe('"default";q=120;w=60');
			const t = Number(/t=(\d+)/.exec(over.headers.get('ratelimit') ?? '')?.[1]);
			expect(over.headers.get('ratelimit')).toMatch(/^"default";r=0;t=\d+$/);
			expect(Number(over.headers.get('retry-after'))).toBe(t);
			expect(t).toBeGreaterThanOrEqual(58);
			// another key of the same user has its own window
			const other = await sb.control.createKey(1);
			expect((await get(sb, '/v1/brands', { key: other.apiKey })).status).toBe(200);
		} finally {
			await sb.close();
		}
	});

	test('every authenticated request counts (errors, 404s, writes) and the window resets', async () => {
		const sb = await withSandbox({ quota: 4, windowSeconds: 1 });
		try {
			expect((await get(sb, '/v1/nothing')).status).toBe(404);
			expect((await get(sb, '/v1/products?limit=0')).status).toBe(400);
			expect(
				(await call(sb, 'POST', '/v1/fulfillment/orders/packed', { body: { orderIds: [999] } }))
					.status,
			).toBe(200);
			const fourth = await get(sb, '/v1/brands');
			expect(fourth.headers.get('ratelimit')).toMatch(/^"default";r=0;t=1$/);
			expect(fourth.headers.get('ratelimit-policy')).toBe('"default";q=4;w=1');
			const fifth = await get(sb, '/v1/brands');
			expect(fifth.status).toBe(429);
			expect(fifth.headers.get('retry-after')).toBe('1');
			await sb.control.advanceClockMs(1050);
			const fresh = await get(sb, '/v1/brands');
			expect(fresh.status).toBe(200);
			expect(fresh.headers.get('ratelimit')).toMatch(/^"default";r=3;t=1$/);
			// the control API is neither authenticated nor counted
			for (let i = 0; i < 10; i++) await sb.control.clock();
			expect((await get(sb, '/v1/brands')).headers.get('ratelimit')).toMatch(/r=2;/);
		} finally {
			await sb.close();
		}
	});
});

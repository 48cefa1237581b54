/**
 * Pacing by RateLimit / RateLimit-Policy: with the quota lowered to 5 requests per 2 s window, a
 * Return All that needs more requests than one window allows completes without a single 429.
 */
import { Bench, expectUniqueRequestIds, items } from './helpers';

const bench = new Bench({ quota: 5, windowSeconds: 2 });
beforeAll(async () => await bench.start());
afterAll(async () => await bench.close());

test('three items of Return All over the products (12 requests, quota 5 per 2 s): zero 429 answers', async () => {
	const products = (await bench.control.state<{ brandId: number }>('products')).filter((p) => p.brandId <= 5);
	const pages = Math.ceil(products.length / 100);
	const r = await bench.run(
		{ resource: 'product', operation: 'getAll', returnAll: true, filters: { brandIds: '={{ $json.brands }}' } },
		{ inputItems: items({ brands: '1,2,3,4,5' }, { brands: '1,2,3,4,5' }, { brands: '1,2,3,4,5' }) },
	);
	expect(r.error).toBeUndefined();
	expect(r.sent).toHaveLength(3 * pages);
	expect(r.sent.length).toBeGreaterThan(2 * 5);
	expect(r.sent.map((s) => s.status)).toEqual(r.sent.map(() => 200));
	expectUniqueRequestIds(r.sent);
	expect(r.items).toHaveLength(3 * products.length);

	// A second run right after (same credential) goes on pacing from what the first one learned.
	const again = await bench.run({ resource: 'brand', operation: 'getAll', limit: 1 }, { inputItems: items({}, {}, {}, {}, {}, {}) });
	expect(again.sent.map((s) => s.status)).toEqual([200, 200, 200, 200, 200, 200]);
}, 30_000);

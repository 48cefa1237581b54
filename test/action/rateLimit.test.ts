/**
 * Pacing by RateLimit / RateLimit-Policy: with the quota lowered to 5 requests per 2 s window, a
 * Return All that needs more requests than one window allows completes without a single 429.
 */
import { spendQuota } from '../sandbox/testkit';
import { setTransportClock } from '../transportClock';
import { ConcurrentClock, useSteppedClock } from './clock';
import { NodeFixture, expectUniqueRequestIds, items } from './helpers';

describe('one execution', () => {
	const fixture = new NodeFixture({ quota: 5, windowSeconds: 2 });
	beforeAll(async () => await fixture.start());
	afterAll(async () => await fixture.close());
	const clock = useSteppedClock(() => fixture.control);

	test('three items of Return All over the products (12 requests, quota 5 per 2 s): zero 429 answers', async () => {
		const products = (await fixture.control.state<{ brandId: number }>('products')).filter(
			(p) => p.brandId <= 5,
		);
		const pages = Math.ceil(products.length / 100);
		const r = await fixture.run(
			{
				resource: 'product',
				operation: 'getAll',
				returnAll: true,
				filters: { brandIds: '={{ $json.brands }}' },
			},
			{
				inputItems: items(
					{ brands: '1,2,3,4,5' },
					{ brands: '1,2,3,4,5' },
					{ brands: '1,2,3,4,5' },
				),
			},
		);
		expect(r.error).toBeUndefined();
		expect(r.sent).toHaveLength(3 * pages);
		expect(r.sent.length).toBeGreaterThan(2 * 5);
		expect(r.sent.map((s) => s.status)).toEqual(r.sent.map(() => 200));
		expectUniqueRequestIds(r.sent);
		expect(r.items).toHaveLength(3 * products.length);
		// The pacer waited once per window used up, each time until that window's end (2 s from the
		// request that opened it, plus a 50 ms margin), and never otherwise.
		expect(clock().waits).toHaveLength(Math.ceil(r.sent.length / 5) - 1);
		for (const wait of clock().waits) {
			expect(wait).toBeGreaterThan(1500);
			expect(wait).toBeLessThanOrEqual(2050);
		}

		// A second run right after (same credential) goes on pacing from what the first one learned.
		const again = await fixture.run(
			{ resource: 'brand', operation: 'getAll', limit: 1 },
			{ inputItems: items({}, {}, {}, {}, {}, {}) },
		);
		expect(again.sent.map((s) => s.status)).toEqual([200, 200, 200, 200, 200, 200]);
	});
});

// What goes wrong here is the order in which concurrent answers arrive, so the runs' waits overlap
// as on the system clock (ConcurrentClock), and the answers in flight arrive while they wait.
describe('three executions sharing one credential', () => {
	const shared = new NodeFixture({ quota: 20, windowSeconds: 2 });
	beforeAll(async () => await shared.start());
	afterAll(async () => await shared.close());
	let clock: ConcurrentClock;
	beforeEach(() => {
		clock = new ConcurrentClock(shared.control);
		setTransportClock(clock);
	});
	afterEach(() => setTransportClock());

	test('Return All in three concurrent runs, 85% of the window already spent by another client: zero 429 answers', async () => {
		const products = (await shared.control.state<{ brandId: number }>('products')).filter(
			(p) => p.brandId <= 5,
		);
		const pages = Math.ceil(products.length / 100);
		// Another client spends 17 of the window's 20 requests with the same key.
		const spent = await spendQuota(shared.sandbox, 17);
		expect(spent).toEqual(spent.map(() => 200));
		const before = (await shared.control.requests()).at(-1)?.seq ?? 0;

		const runs = await Promise.all(
			[1, 2, 3].map(
				async () =>
					await shared.run(
						{
							resource: 'product',
							operation: 'getAll',
							returnAll: true,
							filters: { brandIds: '1,2,3,4,5' },
						},
						{ inputItems: items({}) },
					),
			),
		);
		for (const run of runs) {
			expect(run.error).toBeUndefined();
			expect(run.items).toHaveLength(products.length);
		}
		const sent = (await shared.control.requests(before)).map((r) => r.status);
		expect(sent).toHaveLength(3 * pages);
		expect(sent).toEqual(sent.map(() => 200));
		// more requests than the 3 left in the window: the runs waited for the next one (2 s from the
		// other client's first request, plus the 50 ms margin), and their waits overlapped: together
		// they took that window once, not once per run
		expect(sent.length).toBeGreaterThan(3);
		expect(Math.max(...clock.waits)).toBeGreaterThan(1500);
		expect(Math.max(...clock.waits)).toBeLessThanOrEqual(2050);
		expect(clock.movedMs).toBeLessThanOrEqual(2100);
	});
});

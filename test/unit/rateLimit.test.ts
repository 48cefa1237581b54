import { Pacer, parseStructuredList, readRateLimit } from '../../nodes/shared/transport/rateLimit';

describe('parseStructuredList', () => {
	it('reads quoted names with integer parameters', () => {
		expect(parseStructuredList('"default";r=50;t=30')).toEqual([
			{ value: 'default', params: { r: 50, t: 30 } },
		]);
	});

	it('reads several members, tokens, spaces after separators and boolean parameters', () => {
		expect(parseStructuredList('"a";q=10;w=1, burst; q=5;x')).toEqual([
			{ value: 'a', params: { q: 10, w: 1 } },
			{ value: 'burst', params: { q: 5, x: true } },
		]);
	});

	it.each([
		[''],
		['"unterminated;r=1'],
		['"a";R=1'],
		['"a";r=1,'],
		['"a" "b"'],
		['"a";r=1;;t=2'],
		['"bad\\escape";r=1'],
	])('rejects malformed input %j', (header) => {
		expect(parseStructuredList(header)).toBeUndefined();
	});
});

describe('readRateLimit', () => {
	it('combines RateLimit with the matching RateLimit-Policy', () => {
		expect(readRateLimit('"default";r=7;t=12', '"default";q=120;w=60')).toEqual({
			remaining: 7,
			resetSeconds: 12,
			quota: 120,
			windowSeconds: 60,
		});
	});

	it('takes the most constraining of several policies', () => {
		expect(readRateLimit('"minute";r=40;t=20, "burst";r=2;t=1', undefined)).toEqual({
			remaining: 2,
			resetSeconds: 1,
		});
	});

	it.each([
		[undefined],
		['default;r=1;t=1;'],
		['"default";r=-1;t=5'],
		['"default";r=1.5;t=5'],
		['"default";t=5'],
		['garbage here'],
	])('ignores a missing or malformed RateLimit %j', (header) => {
		expect(readRateLimit(header, '"default";q=120;w=60')).toBeUndefined();
	});

	it('ignores a malformed policy but keeps a valid RateLimit', () => {
		expect(readRateLimit('"default";r=3;t=4', '"default";q=x;w=60')).toEqual({
			remaining: 3,
			resetSeconds: 4,
		});
	});
});

describe('Pacer', () => {
	it('sends at once while requests are left and waits for the announced reset when none are', () => {
		const pacer = new Pacer(50);
		expect(pacer.reserve(0)).toBe(0); // nothing known yet
		pacer.observe({ remaining: 2, resetSeconds: 10 }, 1000);
		expect(pacer.reserve(1100)).toBe(0);
		expect(pacer.reserve(1200)).toBe(0);
		// both reserved: the third waits until 1000 + 10 s (+ margin)
		expect(pacer.reserve(1300)).toBe(11000 + 50 - 1300);
	});

	it('does not wait once the announced window has passed', () => {
		const pacer = new Pacer(50);
		pacer.observe({ remaining: 0, resetSeconds: 2 }, 0);
		expect(pacer.reserve(2500)).toBe(0);
	});

	it('never waits on a missing reading', () => {
		const pacer = new Pacer();
		pacer.observe(undefined, 0);
		expect(pacer.reserve(1)).toBe(0);
	});

	it('uses no built-in quota: a window of 1000 requests is used up before any wait', () => {
		const pacer = new Pacer(0);
		pacer.observe({ remaining: 1000, resetSeconds: 60 }, 0);
		for (let i = 0; i < 1000; i++) expect(pacer.reserve(i)).toBe(0);
		expect(pacer.reserve(1000)).toBe(59_000);
	});

	it('uses the end of a window it saw open when that agrees with the rounded-up t', () => {
		const pacer = new Pacer(50);
		// request sent at 1000 opened a 6 s window (r = q - 1); answered at 1010 with t = 6
		pacer.observe({ remaining: 119, resetSeconds: 6, quota: 120, windowSeconds: 6 }, 1010, 1000);
		// later in the same window t rounds up to 2 s, though the window ends at 7000
		pacer.observe({ remaining: 0, resetSeconds: 2, quota: 120, windowSeconds: 6 }, 5500, 5490);
		expect(pacer.reserve(5600)).toBe(7000 + 50 - 5600);
	});

	it('falls back to t when the learned window end disagrees with it (another client opened it)', () => {
		const pacer = new Pacer(50);
		pacer.observe({ remaining: 119, resetSeconds: 6, quota: 120, windowSeconds: 6 }, 1010, 1000);
		// the window was reset by someone else meanwhile: t says 5 s from 9000, not 7000
		pacer.observe({ remaining: 0, resetSeconds: 5, quota: 120, windowSeconds: 6 }, 9000, 8990);
		expect(pacer.reserve(9000)).toBe(14000 + 50 - 9000);
	});
});

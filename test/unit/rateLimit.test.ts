import type { IExecuteFunctions } from 'n8n-workflow';

import {
	Pacer,
	PROBE_WAIT_MS,
	parseStructuredList,
	readRateLimit,
} from '../../nodes/shared/transport/rateLimit';
import { apiRequest, pacerCount } from '../../nodes/shared/transport/request';
import { setTransportClock } from '../transportClock';

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

/** A ticket the pacer must give now. */
function send(pacer: Pacer, nowMs: number): number {
	const turn = pacer.reserve(nowMs);
	expect(turn.waitMs).toBe(0);
	return turn.ticket!;
}

describe('Pacer', () => {
	it('sends at once while requests are left and waits for the announced reset when none are', () => {
		const pacer = new Pacer(50);
		const first = send(pacer, 0); // nothing known yet
		pacer.observe(first, { remaining: 2, resetSeconds: 10 }, 1000);
		send(pacer, 1100);
		send(pacer, 1200);
		// both reserved: the third waits until 1000 + 10 s (+ margin), and is told so again if it asks early
		expect(pacer.reserve(1300)).toEqual({ waitMs: 11000 + 50 - 1300 });
		expect(pacer.reserve(1400)).toEqual({ waitMs: 11000 + 50 - 1400 });
	});

	it('sends one request once the announced window has passed, and holds the others until it answers', () => {
		const pacer = new Pacer(50);
		pacer.observe(send(pacer, 0), { remaining: 0, resetSeconds: 2 }, 0);
		const probe = send(pacer, 2500);
		expect(pacer.reserve(2501)).toEqual({ waitMs: PROBE_WAIT_MS });
		expect(pacer.reserve(2600)).toEqual({ waitMs: PROBE_WAIT_MS });
		pacer.observe(probe, { remaining: 5, resetSeconds: 2 }, 2610);
		send(pacer, 2611);
	});

	it('a request whose answer waits for others (the Test call) goes at once and holds nobody up', () => {
		const pacer = new Pacer(50);
		pacer.observe(send(pacer, 0), { remaining: 0, resetSeconds: 2 }, 0);
		// the window has passed: the Test call goes without learning it, a read during it learns it
		const testCall = pacer.reserve(2500, false);
		expect(testCall.waitMs).toBe(0);
		const read = send(pacer, 2501);
		expect(pacer.reserve(2502)).toEqual({ waitMs: PROBE_WAIT_MS });
		pacer.observe(read, { remaining: 5, resetSeconds: 2 }, 2600);
		// the remainder counts the Test call still in flight
		for (let i = 0; i < 4; i++) send(pacer, 2601);
		expect(pacer.reserve(2602).waitMs).toBeGreaterThan(0);
	});

	it('sends one request at a time while answers carry no reading', () => {
		const pacer = new Pacer();
		const first = send(pacer, 0);
		expect(pacer.reserve(1)).toEqual({ waitMs: PROBE_WAIT_MS });
		pacer.observe(first, undefined, 2);
		send(pacer, 3);
	});

	it('lets the next request go when the one it waited for failed without an answer', () => {
		const pacer = new Pacer();
		const probe = send(pacer, 0);
		pacer.observe(probe, undefined, 30_000); // a network error settles the ticket too
		send(pacer, 30_001);
	});

	it('uses no built-in quota: a window of 1000 requests is used up before any wait', () => {
		const pacer = new Pacer(0);
		pacer.observe(send(pacer, 0), { remaining: 1000, resetSeconds: 60 }, 0);
		for (let i = 0; i < 1000; i++) send(pacer, i);
		expect(pacer.reserve(1000)).toEqual({ waitMs: 59_000 });
	});

	it('subtracts the requests still in flight from what an answer says is left', () => {
		const pacer = new Pacer(0);
		pacer.observe(send(pacer, 0), { remaining: 4, resetSeconds: 60 }, 10);
		const a = send(pacer, 20);
		send(pacer, 21);
		send(pacer, 22);
		// a's answer: 3 left, counted before the two requests sent after it reached the service
		pacer.observe(a, { remaining: 3, resetSeconds: 60 }, 30);
		send(pacer, 31);
		expect(pacer.reserve(32).waitMs).toBeGreaterThan(0);
	});

	it('ignores an answer older than the one it last read', () => {
		const pacer = new Pacer(0);
		pacer.observe(send(pacer, 0), { remaining: 10, resetSeconds: 60 }, 10);
		const older = send(pacer, 20);
		const newer = send(pacer, 21);
		// another client spent most of the rest; `older` still in flight counts as sent: 2 - 1 left
		pacer.observe(newer, { remaining: 2, resetSeconds: 60 }, 30);
		pacer.observe(older, { remaining: 3, resetSeconds: 60 }, 31); // counted before `newer`: stale

		send(pacer, 32);
		expect(pacer.reserve(33).waitMs).toBeGreaterThan(0);
	});

	it('uses the end of a window it saw open when that agrees with the rounded-up t', () => {
		const pacer = new Pacer(50);
		// request sent at 1000 opened a 6 s window (r = q - 1); answered at 1010 with t = 6
		pacer.observe(
			send(pacer, 1000),
			{ remaining: 119, resetSeconds: 6, quota: 120, windowSeconds: 6 },
			1010,
			1000,
		);
		// later in the same window t rounds up to 2 s, though the window ends at 7000
		pacer.observe(
			send(pacer, 5400),
			{ remaining: 0, resetSeconds: 2, quota: 120, windowSeconds: 6 },
			5500,
			5490,
		);
		expect(pacer.reserve(5600)).toEqual({ waitMs: 7000 + 50 - 5600 });
	});

	it('falls back to t when the learned window end disagrees with it (another client opened it)', () => {
		const pacer = new Pacer(50);
		pacer.observe(
			send(pacer, 1000),
			{ remaining: 119, resetSeconds: 6, quota: 120, windowSeconds: 6 },
			1010,
			1000,
		);
		// the window was reset by someone else meanwhile: t says 5 s from 9000, not 7000
		pacer.observe(
			send(pacer, 8900),
			{ remaining: 0, resetSeconds: 5, quota: 120, windowSeconds: 6 },
			9000,
			8990,
		);
		expect(pacer.reserve(9000)).toEqual({ waitMs: 14000 + 50 - 9000 });
	});
});

describe('the transport keeps a pacer only while its credential is active', () => {
	/** A context whose n8n request helper answers 200 with the given window (r left, t seconds). */
	const contextOf = (credentialId: string, window: { r: number; t: number }) =>
		({
			getNode: () => ({
				credentials: { marketplaceApi: { id: credentialId, name: credentialId } },
			}),
			getCredentials: async () => ({ baseUrl: 'https://api.example.test', apiKey: 'k' }),
			helpers: {
				httpRequestWithAuthentication: async () => ({
					statusCode: 200,
					headers: {
						ratelimit: `"default";r=${window.r};t=${window.t}`,
						'ratelimit-policy': '"default";q=120;w=120',
					},
					body: { brands: [] },
				}),
			},
		}) as unknown as IExecuteFunctions;

	let nowMs = 1_000_000;
	const waits: number[] = [];
	beforeAll(() =>
		setTransportClock({
			now: () => nowMs,
			sleep: async (ms) => {
				waits.push(ms);
				nowMs += ms;
			},
			random: () => 0.5,
		}),
	);
	afterAll(() => setTransportClock());

	const read = async (credentialId: string, window: { r: number; t: number }) =>
		await apiRequest.call(contextOf(credentialId, window), { route: 'listBrands' });

	it('pacers whose window is over are dropped on the next lookup; an active one is kept, and paces', async () => {
		const before = pacerCount();
		for (let i = 0; i < 50; i++) await read(`idle-${i}`, { r: 5, t: 60 });
		await read('busy', { r: 0, t: 120 });
		expect(pacerCount()).toBe(before + 51);

		nowMs += 61_000; // past the 50 windows, not past busy's
		await read('fresh', { r: 5, t: 60 });
		expect(pacerCount()).toBe(2);

		// busy's pacer still knows its window is used up: its next request waits for the reset
		expect(waits).toEqual([]);
		await read('busy', { r: 119, t: 120 });
		expect(waits).toEqual([120_000 - 61_000 + 50]);
	});
});

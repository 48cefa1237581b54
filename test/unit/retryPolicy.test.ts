import {
	DEFAULT_RETRY,
	isRetryable,
	mayHaveRun,
	parseRetryAfter,
	retryDelay,
} from '../../nodes/shared/transport/retryPolicy';

const settings = { maxAttempts: 5, baseDelayMs: 1000, maxDelayMs: 120_000 };

describe('isRetryable', () => {
	it.each([429, 500, 502, 503])('retries status %i', (status) => {
		expect(isRetryable({ kind: 'response', status })).toBe(true);
	});

	it('retries 409 idempotency-in-progress but not a plain 409 conflict', () => {
		expect(isRetryable({ kind: 'response', status: 409, slug: 'idempotency-in-progress' })).toBe(
			true,
		);
		expect(isRetryable({ kind: 'response', status: 409, slug: 'conflict' })).toBe(false);
	});

	it.each([400, 401, 403, 404, 413, 422])('never retries %i', (status) => {
		expect(isRetryable({ kind: 'response', status })).toBe(false);
	});

	it('retries network errors', () => {
		expect(isRetryable({ kind: 'network', code: 'ECONNRESET' })).toBe(true);
	});
});

describe('parseRetryAfter', () => {
	it('reads delta seconds and HTTP dates, and rejects anything else', () => {
		expect(parseRetryAfter('7', 0)).toBe(7000);
		const now = Date.parse('2026-11-22T10:00:00Z');
		expect(parseRetryAfter('Sun, 22 Nov 2026 10:00:30 GMT', now)).toBe(30_000);
		expect(parseRetryAfter('-3', now)).toBeUndefined();
		expect(parseRetryAfter('soon', now)).toBeUndefined();
		expect(parseRetryAfter(undefined, now)).toBeUndefined();
	});
});

describe('retryDelay', () => {
	it('waits Retry-After on 429', () => {
		expect(
			retryDelay({ kind: 'response', status: 429, retryAfter: '3' }, 1, settings, 0, 0.5),
		).toBe(3000);
	});

	it('backs off exponentially with jitter between half and all of the step', () => {
		const steps = [1, 2, 3, 4].map((attempt) => [
			retryDelay({ kind: 'response', status: 500 }, attempt, settings, 0, 0),
			retryDelay({ kind: 'response', status: 500 }, attempt, settings, 0, 0.999999),
		]);
		expect(steps).toEqual([
			[500, 1000],
			[1000, 2000],
			[2000, 4000],
			[4000, 8000],
		]);
	});

	it('stops after maxAttempts and on final statuses', () => {
		expect(retryDelay({ kind: 'response', status: 500 }, 5, settings, 0, 0)).toBeUndefined();
		expect(
			retryDelay(
				{ kind: 'response', status: 422, slug: 'idempotency-key-reused' },
				1,
				settings,
				0,
				0,
			),
		).toBeUndefined();
	});

	it('caps a long Retry-After at maxDelayMs', () => {
		expect(
			retryDelay({ kind: 'response', status: 429, retryAfter: '100000' }, 1, DEFAULT_RETRY, 0, 0),
		).toBe(DEFAULT_RETRY.maxDelayMs);
	});
});

describe('mayHaveRun: a failed write the service may have run, which only a write that can look for its effect sends again', () => {
	it.each([500, 502, 503, 504])(
		'a %i answer may have run (the service released the key)',
		(status) => {
			expect(mayHaveRun({ kind: 'response', status })).toBe(true);
		},
	);

	it('429 and 409 idempotency-in-progress did not run', () => {
		expect(mayHaveRun({ kind: 'response', status: 429 })).toBe(false);
		expect(mayHaveRun({ kind: 'response', status: 409, slug: 'idempotency-in-progress' })).toBe(
			false,
		);
	});

	it.each([
		'ECONNRESET',
		'ETIMEDOUT',
		'ESOCKETTIMEDOUT',
		'EPIPE',
		'ECONNABORTED',
		'UND_ERR_SOCKET',
	])('no answer after the request may have been sent (%s) may have run', (code) => {
		expect(mayHaveRun({ kind: 'network', code })).toBe(true);
	});

	it.each(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH'])(
		'a connection never made (%s) did not run',
		(code) => {
			expect(mayHaveRun({ kind: 'network', code })).toBe(false);
		},
	);
});

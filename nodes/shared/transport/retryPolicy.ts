/**
 * When to retry and how long to wait, by the service's retry rules. Pure: no n8n imports, no timers.
 * Retried: 429, 5xx, 409 `idempotency-in-progress` and network errors. Every other 4xx is final.
 */

export interface RetrySettings {
	/** total attempts including the first */
	maxAttempts: number;
	/** first backoff step; doubles each attempt (1, 2, 4, 8 s with the default) */
	baseDelayMs: number;
	/** upper bound of one backoff step and of an honoured Retry-After */
	maxDelayMs: number;
}

export const DEFAULT_RETRY: RetrySettings = {
	maxAttempts: 5,
	baseDelayMs: 1000,
	maxDelayMs: 120_000,
};

export type Outcome =
	| { kind: 'response'; status: number; slug?: string; retryAfter?: string }
	| { kind: 'network'; code?: string };

/** Error codes of a connection that failed or broke, or of a request that timed out. */
const NETWORK_CODES = new Set([
	'ECONNRESET',
	'ECONNREFUSED',
	'ECONNABORTED',
	'ETIMEDOUT',
	'ESOCKETTIMEDOUT',
	'EPIPE',
	'EAI_AGAIN',
	'ENOTFOUND',
	'EHOSTUNREACH',
	'ENETUNREACH',
	'ERR_SOCKET_CONNECTION_TIMEOUT',
	'UND_ERR_SOCKET',
]);

export function isNetworkErrorCode(code: string | undefined): boolean {
	return code !== undefined && NETWORK_CODES.has(code);
}

/**
 * Codes of a connection that was never made (refused, name not resolved, no route): the request
 * cannot have reached the service.
 */
const NOT_SENT_CODES = new Set([
	'ECONNREFUSED',
	'ENOTFOUND',
	'EAI_AGAIN',
	'EHOSTUNREACH',
	'ENETUNREACH',
	'ERR_SOCKET_CONNECTION_TIMEOUT',
]);

/**
 * Whether a failed write may have been run by the service: a 5xx answer (the service then releases
 * the Idempotency-Key, so a resend runs the write again) or no answer after the request may have
 * been sent (a broken connection, a timeout). A 429, a 409 `idempotency-in-progress` and a
 * connection never made are certain: the service did not run that attempt.
 */
export function mayHaveRun(outcome: Outcome): boolean {
	if (outcome.kind === 'network') return !NOT_SENT_CODES.has(outcome.code ?? '');
	return outcome.status >= 500;
}

export function isRetryable(outcome: Outcome): boolean {
	if (outcome.kind === 'network') return true;
	const { status, slug } = outcome;
	if (status === 429 || status >= 500) return true;
	return status === 409 && slug === 'idempotency-in-progress';
}

/** Retry-After as delta-seconds or an HTTP date; undefined when absent or malformed. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
	if (value === undefined) return undefined;
	const text = value.trim();
	if (/^\d+$/.test(text)) return Number(text) * 1000;
	const date = Date.parse(text);
	if (!Number.isNaN(date) && /[a-z]/i.test(text)) return Math.max(0, date - nowMs);
	return undefined;
}

/**
 * Milliseconds to wait before attempt `attempt + 1` (attempt counts from 1), or undefined when the
 * outcome is final or the attempts are used up. `random` in [0, 1) supplies the jitter.
 */
export function retryDelay(
	outcome: Outcome,
	attempt: number,
	settings: RetrySettings,
	nowMs: number,
	random: number,
): number | undefined {
	if (!isRetryable(outcome) || attempt >= settings.maxAttempts) return undefined;
	if (outcome.kind === 'response' && outcome.status === 429) {
		const retryAfter = parseRetryAfter(outcome.retryAfter, nowMs);
		if (retryAfter !== undefined) return Math.min(retryAfter, settings.maxDelayMs);
	}
	const step = Math.min(settings.baseDelayMs * 2 ** (attempt - 1), settings.maxDelayMs);
	// "Equal jitter": half the step fixed, half random, so retries of many clients spread out.
	return Math.round(step / 2 + (step / 2) * random);
}

/**
 * The one transport: every request of every node goes through `apiRequest`.
 * - auth: n8n's `httpRequestWithAuthentication` with the `marketplaceApi` credential (Bearer)
 * - encoding: the route's own query encoder, never n8n's `qs` serialiser
 * - a fresh X-Request-Id per attempt (the service logs each attempt as its own request), named in every error
 * - pacing from RateLimit / RateLimit-Policy, shared by every request of the same credential
 * - retries with the write's Idempotency-Key kept across them; waits use n8n's `sleep` (via clock.ts, which tests replace)
 * - a write is sent again after a failure that may have left its effect (5xx, no answer) only when
 *   it can look for that effect first (`reconcile`) or says it may be resent; one that says what it
 *   may have done (`ifUncertain`) fails with that instead
 * - errors: both error shapes become NodeApiError; the API key never reaches a message
 */
import { randomUUID } from 'node:crypto';
import type {
	IDataObject,
	IExecuteFunctions,
	IHookFunctions,
	IHttpRequestOptions,
	ILoadOptionsFunctions,
	IPollFunctions,
	ITriggerFunctions,
	IWebhookFunctions,
	JsonObject,
} from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import { fillPath, ROUTES, type RouteName } from '../routes';
import { transportClock, type TransportClock } from './clock';
import { nodeApiError } from './transportErrors';
import { formatProblem, readProblem, type ApiProblem } from './serviceErrorBody';
import { encodeQuery, type QueryValues } from './queryEncoding';
import { Pacer, readRateLimit } from './rateLimit';
import {
	DEFAULT_RETRY,
	isNetworkErrorCode,
	mayHaveRun,
	retryDelay,
	type Outcome,
	type RetrySettings,
} from './retryPolicy';

export const CREDENTIAL_TYPE = 'marketplaceApi';

export type TransportContext =
	| IExecuteFunctions
	| IHookFunctions
	| IPollFunctions
	| ITriggerFunctions
	| IWebhookFunctions
	| ILoadOptionsFunctions;

export interface ApiRequest {
	route: RouteName;
	pathParams?: Record<string, string | number>;
	query?: QueryValues;
	body?: IDataObject;
	/** required for writes: one per logical write, the same across its retries */
	idempotencyKey?: string;
	/** item the request is made for, named in errors */
	itemIndex?: number;
	/**
	 * For a write whose effect may already have happened although no success answer came back (a
	 * 5xx or 429 answer; the service releases the Idempotency-Key after a 5xx, so a retry would run
	 * again): called before each retry, it looks for the effect and returns the body to
	 * answer with instead of retrying, or undefined to retry.
	 */
	reconcile?: () => Promise<unknown>;
	/**
	 * For a write whose effect cannot be looked for before a retry: it is sent again only when the
	 * service certainly did not run it (429, `idempotency-in-progress`, a connection never made).
	 * After a 5xx or no answer it fails with a NodeApiError saying what may have happened and what
	 * to do, instead of running a second time.
	 */
	ifUncertain?: UncertainWrite;
}

/** What a write that failed without a certain answer may have done, in the user's words. */
export interface UncertainWrite {
	/** completes "... after the request was sent: ", e.g. "the secret may have been rotated" */
	effect: string;
	/** what to check and do now, one or two sentences */
	advice: string;
}

export interface ApiResponse<T = unknown> {
	body: T;
	headers: Record<string, string>;
	/** the X-Request-Id the service answered with */
	requestId: string;
	/** true when the service replayed a stored response (Idempotent-Replayed) */
	replayed: boolean;
	/**
	 * true when an earlier attempt failed in a way that may have left its effect (5xx, 429 or a
	 * network error): the write may have been applied by that attempt rather than by this answer
	 */
	uncertain: boolean;
}

export interface TransportSettings {
	timeoutMs: number;
	retry: RetrySettings;
	/**
	 * Time the whole logical request may take (ms). A wait, for the rate-limit window or before a
	 * retry, that would end past it stops the request with the error at hand instead (a pacing wait
	 * as 429 rate-limited). For callers with a hard deadline, such as a webhook's answer.
	 */
	budgetMs?: number;
}

export const DEFAULT_TRANSPORT: TransportSettings = { timeoutMs: 30_000, retry: DEFAULT_RETRY };

/**
 * Pacing state per credential, shared by all executions in this n8n process (in queue mode each
 * process paces on its own, and a 429 is waited out and retried).
 */
const pacers = new Map<string, Pacer>();

/**
 * The pacer of a credential and Base URL. Each lookup drops the idle pacers (nothing in flight,
 * their window over), because such a pacer knows nothing a new one would not learn from its first
 * answer. Callers that wait look their pacer up again after each wait, so none holds a dropped one.
 */
function pacerFor(key: string, nowMs: number): Pacer {
	for (const [other, pacer] of pacers) {
		if (other !== key && pacer.idle(nowMs)) pacers.delete(other);
	}
	let pacer = pacers.get(key);
	if (!pacer) {
		pacer = new Pacer();
		pacers.set(key, pacer);
	}
	return pacer;
}

/** How many pacers are kept (read by the tests). */
export function pacerCount(): number {
	return pacers.size;
}

/** A new opaque key for a write (the service asks for a unique string, for example a UUID). */
export function newIdempotencyKey(): string {
	return randomUUID();
}

function lowerCaseHeaders(headers: unknown): Record<string, string> {
	const out: Record<string, string> = {};
	if (headers && typeof headers === 'object') {
		for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
			if (value === undefined || value === null) continue;
			out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
		}
	}
	return out;
}

/** The network error code (ECONNRESET, ETIMEDOUT, ...) of a thrown request error, if any. */
function networkCode(error: unknown): string | undefined {
	let current: unknown = error;
	for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
		const record = current as { code?: unknown; cause?: unknown; message?: unknown };
		if (typeof record.code === 'string' && isNetworkErrorCode(record.code)) return record.code;
		if (typeof record.message === 'string') {
			if (/timeout of \d+ms exceeded/i.test(record.message)) return 'ETIMEDOUT';
			if (/socket hang up/i.test(record.message)) return 'ECONNRESET';
		}
		current = record.cause;
	}
	return undefined;
}

function problemObject(problem: ApiProblem): JsonObject {
	return {
		status: problem.status,
		type: problem.slug,
		requestId: problem.requestId ?? null,
		errors: problem.pointers.map((p) => ({ pointer: p.pointer, detail: p.detail })),
	};
}

function apiError(
	ctx: TransportContext,
	problem: ApiProblem,
	itemIndex: number | undefined,
): NodeApiError {
	const { message, description } = formatProblem(problem);
	return nodeApiError(ctx.getNode(), problemObject(problem), {
		message,
		description,
		httpCode: String(problem.status),
		itemIndex,
	});
}

/**
 * A write that is not sent again failed after it may have run: the message says what may have
 * happened and what to do; the error object is the one the answer (or the network error) gives.
 */
function uncertainWriteError(
	ctx: TransportContext,
	what: UncertainWrite,
	failure: { problem: ApiProblem } | { code: string; requestId: string },
	itemIndex: number | undefined,
): NodeApiError {
	const answered = 'problem' in failure;
	const cause = answered
		? `The service failed (HTTP ${failure.problem.status})`
		: `No answer came from the service (network error ${failure.code})`;
	const description = answered
		? `Not sent again: after a 5xx the service forgets the Idempotency-Key, so a resend would run the write a second time. The service answered: ${formatProblem(failure.problem).message}`
		: `Not sent again: the service may have run the write without its answer arriving, and a resend would run it a second time (request id ${failure.requestId}).`;
	return nodeApiError(
		ctx.getNode(),
		answered
			? problemObject(failure.problem)
			: { code: failure.code, requestId: failure.requestId },
		{
			message: `${cause} after the request was sent: ${what.effect}. ${what.advice}`,
			description,
			httpCode: answered ? String(failure.problem.status) : undefined,
			itemIndex,
		},
	);
}

function networkError(
	ctx: TransportContext,
	code: string,
	requestId: string,
	attempts: number,
	itemIndex: number | undefined,
): NodeApiError {
	return nodeApiError(
		ctx.getNode(),
		{ code, requestId },
		{
			message: `network error ${code} after ${attempts} attempt${attempts === 1 ? '' : 's'} (request id ${requestId})`,
			description:
				'The service could not be reached or did not answer in time. Writes were retried with the same Idempotency-Key, so none was applied twice.',
			itemIndex,
		},
	);
}

/**
 * A failure that is neither an HTTP answer nor a network error. Rebuilt from its message only: the
 * original error may hold the request configuration, Authorization header included.
 */
function unexpectedError(
	ctx: TransportContext,
	error: unknown,
	requestId: string,
	itemIndex: number | undefined,
): NodeApiError {
	const message = error instanceof Error ? error.message : String(error);
	return nodeApiError(
		ctx.getNode(),
		{ message, requestId },
		{ message: `request failed: ${message} (request id ${requestId})`, itemIndex },
	);
}

async function baseUrlOf(ctx: TransportContext): Promise<string> {
	const credentials = await ctx.getCredentials(CREDENTIAL_TYPE);
	const baseUrl = String(credentials.baseUrl ?? '')
		.trim()
		.replace(/\/+$/, '');
	if (!/^https?:\/\/[^/]/i.test(baseUrl)) {
		throw new NodeApiError(
			ctx.getNode(),
			{ field: 'baseUrl' },
			{
				message: "The credential's Base URL must be an http(s) URL such as https://api.example.com",
			},
		);
	}
	return baseUrl;
}

/**
 * Sends one logical request, with pacing and retries. Non-2xx answers become NodeApiError.
 */
export async function apiRequest<T = unknown>(
	this: TransportContext,
	request: ApiRequest,
	settings: TransportSettings = DEFAULT_TRANSPORT,
): Promise<ApiResponse<T>> {
	const route = ROUTES[request.route];
	const write = 'write' in route && route.write === true;
	if (write && !request.idempotencyKey) {
		throw new Error(`internal: write ${request.route} sent without an Idempotency-Key`);
	}
	const baseUrl = await baseUrlOf(this);
	const listEncoding = 'listEncoding' in route ? route.listEncoding : undefined;
	const queryString = encodeQuery(request.query ?? {}, listEncoding);
	const url = `${baseUrl}${fillPath(route.path, request.pathParams ?? {})}${queryString ? `?${queryString}` : ''}`;
	const headers: IDataObject = { Accept: 'application/json' };
	if (request.idempotencyKey) headers['Idempotency-Key'] = request.idempotencyKey;
	if (request.body !== undefined) headers['Content-Type'] = 'application/json';
	const options: IHttpRequestOptions = {
		method: route.method,
		url,
		headers,
		body: request.body,
		json: true,
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
	};
	const pacerKey = `${this.getNode().credentials?.[CREDENTIAL_TYPE]?.id ?? ''}|${baseUrl}`;
	const clock = transportClock();
	const deadline = settings.budgetMs === undefined ? Infinity : clock.now() + settings.budgetMs;
	const overBudget = (waitMs: number) => clock.now() + waitMs > deadline;
	let uncertain = false;

	// The Test call's answer waits for a delivery, whose own requests must not wait for that answer.
	const learns = request.route !== 'testWebhookEndpoint';
	for (let attempt = 1; ; attempt++) {
		const { pacer, ticket } = await takeTurn(clock, pacerKey, learns, overBudget, (waitMs) =>
			apiError(this, rateLimitedByBudget(waitMs, settings.budgetMs), request.itemIndex),
		);
		// Every attempt is its own request for the service (on a replay, its X-Request-Id
		// describes the repeat), so each gets its own id; the Idempotency-Key ties them together.
		const requestId = randomUUID();

		let outcome: Outcome;
		let response: { body: unknown; headers: unknown; statusCode: number } | undefined;
		try {
			response = (await this.helpers.httpRequestWithAuthentication.call(this, CREDENTIAL_TYPE, {
				...options,
				headers: { ...headers, 'X-Request-Id': requestId },
				// an answer that would come after the budget is of no use to the caller
				timeout: Math.max(1, Math.min(settings.timeoutMs, deadline - clock.now())),
			})) as { body: unknown; headers: unknown; statusCode: number };
		} catch (error) {
			pacer.observe(ticket, undefined, clock.now());
			const code = networkCode(error);
			if (code === undefined) throw unexpectedError(this, error, requestId, request.itemIndex);
			outcome = { kind: 'network', code };
			if (write && request.ifUncertain && mayHaveRun(outcome)) {
				throw uncertainWriteError(
					this,
					request.ifUncertain,
					{ code, requestId },
					request.itemIndex,
				);
			}
			const delay = retryDelay(outcome, attempt, settings.retry, clock.now(), clock.random());
			if (delay === undefined || overBudget(delay)) {
				throw networkError(this, code, requestId, attempt, request.itemIndex);
			}
			// A dropped connection may come after the service stored its answer: the retry replays it.
			uncertain = true;
			await clock.sleep(delay);
			continue;
		}

		const responseHeaders = lowerCaseHeaders(response.headers);
		// The window a request opened began when the service counted it, which is no later than the
		// answer's arrival: the only bound that is never too early.
		const receivedAt = clock.now();
		pacer.observe(
			ticket,
			readRateLimit(responseHeaders.ratelimit, responseHeaders['ratelimit-policy']),
			receivedAt,
			receivedAt,
		);
		const status = response.statusCode;
		const answeredId = responseHeaders['x-request-id'] ?? requestId;
		if (status >= 200 && status < 300) {
			return {
				body: parseBody(response.body) as T,
				headers: responseHeaders,
				requestId: answeredId,
				replayed: responseHeaders['idempotent-replayed'] === 'true',
				uncertain,
			};
		}
		const problem = readProblem(status, response.body, answeredId);
		outcome = {
			kind: 'response',
			status,
			slug: problem.slug,
			retryAfter: responseHeaders['retry-after'],
		};
		if (write && request.ifUncertain && mayHaveRun(outcome)) {
			throw uncertainWriteError(this, request.ifUncertain, { problem }, request.itemIndex);
		}
		const delay = retryDelay(outcome, attempt, settings.retry, clock.now(), clock.random());
		if (delay === undefined || overBudget(delay)) throw apiError(this, problem, request.itemIndex);
		if (status >= 500 || status === 429) {
			uncertain = true;
			if (write && request.reconcile) {
				const found = await request.reconcile();
				if (found !== undefined) {
					return {
						body: found as T,
						headers: {},
						requestId: answeredId,
						replayed: false,
						uncertain,
					};
				}
			}
		}
		await clock.sleep(delay);
	}
}

/**
 * Waits until the credential's pacer gives this request a ticket; the answer goes to that pacer. A
 * wait that would end past the request's budget fails at once with the error `overBudgetError` makes.
 */
async function takeTurn(
	clock: TransportClock,
	pacerKey: string,
	learns: boolean,
	overBudget: (waitMs: number) => boolean,
	overBudgetError: (waitMs: number) => Error,
): Promise<{ pacer: Pacer; ticket: number }> {
	for (;;) {
		const pacer = pacerFor(pacerKey, clock.now());
		const turn = pacer.reserve(clock.now(), learns);
		if (turn.ticket !== undefined) return { pacer, ticket: turn.ticket };
		if (overBudget(turn.waitMs)) throw overBudgetError(turn.waitMs);
		await clock.sleep(turn.waitMs);
	}
}

function rateLimitedByBudget(waitMs: number, budgetMs: number | undefined): ApiProblem {
	return {
		status: 429,
		slug: 'rate-limited',
		detail: `the API key's request window is used up; waiting ${waitMs} ms for it would exceed this request's ${budgetMs} ms budget`,
		pointers: [],
	};
}

function parseBody(body: unknown): unknown {
	if (typeof body !== 'string') return body ?? {};
	if (body.trim() === '') return {};
	try {
		return JSON.parse(body);
	} catch {
		return body;
	}
}

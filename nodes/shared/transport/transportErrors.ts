/**
 * The transport's errors, made and read in one place. request.ts throws NodeApiErrors built by
 * `nodeApiError` with the error object `{ status, type (slug), requestId, errors: [{ pointer,
 * detail }] }`, or `{ code, requestId }` for a network error; `readFailure` reads them back for
 * callers that branch on them. Branches on status and slug only, never on message text.
 */
import type { INode, JsonObject } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import { isRetryable } from './retryPolicy';

/**
 * A NodeApiError showing exactly `message`. (NodeApiError swaps a message that contains a common
 * error code (ECONNRESET, ETIMEDOUT, ...) or whose code it knows for its own generic sentence,
 * which would drop the slug, the attempts and the request id.)
 */
export function nodeApiError(
	node: INode,
	errorObject: JsonObject,
	options: { message: string; description?: string; httpCode?: string; itemIndex?: number },
): NodeApiError {
	const error = new NodeApiError(node, errorObject, options);
	error.message = options.message;
	return error;
}

export interface ApiFailure {
	/** HTTP status, undefined when no answer came (network error, timeout) */
	status?: number;
	slug?: string;
	/** network error code such as ECONNREFUSED or ETIMEDOUT */
	networkCode?: string;
	pointers: Array<{ pointer: string; detail: string }>;
	message: string;
}

export function readFailure(error: unknown): ApiFailure {
	const message = error instanceof Error ? error.message : String(error);
	if (!(error instanceof NodeApiError)) return { pointers: [], message };
	const body = (error.errorResponse ?? {}) as Record<string, unknown>;
	const status = typeof body.status === 'number' ? body.status : Number(error.httpCode);
	const pointers = Array.isArray(body.errors)
		? (body.errors as Array<Record<string, unknown>>)
				.filter((e) => e && typeof e.pointer === 'string')
				.map((e) => ({
					pointer: String(e.pointer),
					detail: typeof e.detail === 'string' ? e.detail : '',
				}))
		: [];
	return {
		status: Number.isInteger(status) && status >= 100 ? status : undefined,
		slug: typeof body.type === 'string' ? body.type : undefined,
		networkCode: typeof body.code === 'string' ? body.code : undefined,
		pointers,
		message,
	};
}

/**
 * Worth asking the sender to try again later: 429, 5xx, `idempotency-in-progress`,
 * or no answer at all. Everything else (400, 401, 403, 404, a bad credential URL) is permanent.
 */
export function isTransient(failure: ApiFailure): boolean {
	if (failure.status === undefined) return failure.networkCode !== undefined;
	return isRetryable({ kind: 'response', status: failure.status, slug: failure.slug });
}

/**
 * The error object to build a new NodeApiError with a message of our own. (Passing the thrown
 * NodeApiError itself would hand back the original unchanged: n8n's NodeApiError constructor
 * returns an error it is given as is.)
 */
export function errorObjectOf(error: unknown): JsonObject {
	if (error instanceof NodeApiError && error.errorResponse)
		return { ...(error.errorResponse as JsonObject) };
	return { message: error instanceof Error ? error.message : String(error) };
}

/** The service's error types and the two body shapes they are written in. */

export type ProblemSlug =
	| 'invalid-request'
	| 'unauthorized'
	| 'forbidden'
	| 'not-found'
	| 'conflict'
	| 'idempotency-in-progress'
	| 'idempotency-key-reused'
	| 'payload-too-large'
	| 'rate-limited'
	| 'internal';

const PROBLEMS: Record<ProblemSlug, { status: number; title: string }> = {
	'invalid-request': { status: 400, title: 'Invalid request' },
	unauthorized: { status: 401, title: 'Unauthorized' },
	forbidden: { status: 403, title: 'Forbidden' },
	'not-found': { status: 404, title: 'Not found' },
	conflict: { status: 409, title: 'Conflict' },
	'idempotency-in-progress': { status: 409, title: 'Idempotency key in progress' },
	'idempotency-key-reused': { status: 422, title: 'Idempotency key reused' },
	'payload-too-large': { status: 413, title: 'Payload too large' },
	'rate-limited': { status: 429, title: 'Too many requests' },
	internal: { status: 500, title: 'Internal error' },
};

export interface FieldError {
	/** JSON Pointer into the body, or /name for a query or path parameter */
	pointer: string;
	detail: string;
}

/** An error answered as application/problem+json. */
export class ApiError extends Error {
	constructor(
		readonly slug: ProblemSlug,
		readonly detail: string,
		readonly errors?: FieldError[],
		readonly headers: Record<string, string> = {},
	) {
		super(detail);
	}

	get status(): number {
		return PROBLEMS[this.slug].status;
	}
}

/**
 * A validation failure answered in the service's other error shape
 * (`{statusCode, message, path, error, errors}` as application/json).
 */
export class PlainValidationError extends Error {
	constructor(readonly errors: FieldError[]) {
		super(errors.map((e) => `${e.pointer.slice(1) || 'body'}: ${e.detail}`).join('; '));
	}
}

export function invalid(pointer: string, detail: string): ApiError {
	return new ApiError('invalid-request', detail, [{ pointer, detail }]);
}

export function invalidAll(errors: FieldError[]): ApiError {
	return new ApiError('invalid-request', errors.map((e) => e.detail).join('; '), errors);
}

export function problemStatus(slug: ProblemSlug): number {
	return PROBLEMS[slug].status;
}

export function problemBody(
	slug: ProblemSlug,
	detail: string,
	requestId: string,
	errorsUrl: string,
	errors?: FieldError[],
): Record<string, unknown> {
	const { status, title } = PROBLEMS[slug];
	const body: Record<string, unknown> = {
		type: `${errorsUrl}/${slug}`,
		title,
		status,
		detail,
		requestId,
	};
	if (errors) body.errors = errors;
	return body;
}

/** The per-item error object of batch results (same type/title/detail members as a problem). */
export function itemError(slug: ProblemSlug, detail: string, errorsUrl: string) {
	return { type: `${errorsUrl}/${slug}`, title: PROBLEMS[slug].title, detail };
}

export function plainValidationBody(
	error: PlainValidationError,
	path: string,
): Record<string, unknown> {
	return {
		statusCode: 400,
		message: error.message,
		path,
		error: 'Bad Request',
		errors: error.errors.map((e) => ({ field: e.pointer.slice(1), message: e.detail })),
	};
}

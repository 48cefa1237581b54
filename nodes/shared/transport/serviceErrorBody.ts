/**
 * Reads the service's two error shapes (problem+json and `{statusCode, message, path}`) into one description. Pure: no n8n imports.
 * - problem+json: `type` ({errors_url}/<slug>), `title`, `status`, `detail`, `requestId`, `errors[]`
 * - the other shape: `statusCode`, `message`, `path` (sometimes more fields)
 * Branches only on `type` / `status`; title and detail are only shown.
 */
import { isRecord } from '../isRecord';

export interface ProblemPointer {
	pointer: string;
	detail: string;
}

export interface ApiProblem {
	status: number;
	/** last path segment of `type`, e.g. `invalid-request`; derived from the status for the other shape */
	slug: string;
	title?: string;
	detail?: string;
	requestId?: string;
	pointers: ProblemPointer[];
}

const SLUG_BY_STATUS: Record<number, string> = {
	400: 'invalid-request',
	401: 'unauthorized',
	403: 'forbidden',
	404: 'not-found',
	409: 'conflict',
	413: 'payload-too-large',
	422: 'idempotency-key-reused',
	429: 'rate-limited',
	500: 'internal',
};

const text = (v: unknown): string | undefined =>
	typeof v === 'string' && v.trim() !== '' ? v : undefined;

function slugOf(type: unknown, status: number): string {
	const t = text(type);
	if (t) {
		const last = t.replace(/\/+$/, '').split('/').pop();
		if (last) return last;
	}
	return SLUG_BY_STATUS[status] ?? (status >= 500 ? 'internal' : `http-${status}`);
}

/** Interprets an error response body (parsed JSON, a string, or nothing). */
export function readProblem(status: number, body: unknown, requestIdHeader?: string): ApiProblem {
	let parsed: unknown = body;
	if (typeof body === 'string') {
		try {
			parsed = JSON.parse(body);
		} catch {
			parsed = undefined;
		}
	}
	const problem: ApiProblem = { status, slug: slugOf(undefined, status), pointers: [] };
	if (isRecord(parsed)) {
		if ('type' in parsed || 'title' in parsed || 'detail' in parsed) {
			problem.slug = slugOf(parsed.type, status);
			problem.title = text(parsed.title);
			problem.detail = text(parsed.detail);
			problem.requestId = text(parsed.requestId);
			if (Array.isArray(parsed.errors)) {
				for (const e of parsed.errors) {
					if (isRecord(e) && text(e.pointer)) {
						problem.pointers.push({ pointer: String(e.pointer), detail: text(e.detail) ?? '' });
					}
				}
			}
		} else if ('statusCode' in parsed || 'message' in parsed) {
			const message = parsed.message;
			problem.detail = Array.isArray(message)
				? message.filter((m) => typeof m === 'string').join('; ')
				: text(message);
			problem.title = text(parsed.error);
			problem.requestId = text(parsed.requestId);
			if (Array.isArray(parsed.errors)) {
				for (const e of parsed.errors) {
					if (!isRecord(e)) continue;
					const field = text(e.pointer) ?? text(e.field) ?? text(e.property);
					if (field) {
						problem.pointers.push({
							pointer: field.startsWith('/') ? field : `/${field}`,
							detail: text(e.detail) ?? text(e.message) ?? '',
						});
					}
				}
			}
		}
	} else if (typeof body === 'string' && body.trim() !== '') {
		problem.detail = body.trim().slice(0, 300);
	}
	problem.requestId ??= requestIdHeader;
	return problem;
}

/** Client-side advice per error type, shown as the error's description. */
const ADVICE: Record<string, string> = {
	'invalid-request': 'Fix the named fields; the request was not retried.',
	unauthorized:
		'The API key is missing, unknown or revoked. Check the Marketplace Management API credential.',
	forbidden:
		'The API key lacks the permission for this operation, or a brand is outside its scope.',
	'not-found': "The resource does not exist or is outside the API key's brand scope.",
	conflict: "The request conflicts with the resource's current state: read it again, then decide.",
	'idempotency-key-reused':
		'This Idempotency-Key was already used for a different request. Use a new key (or leave the Idempotency Key option empty to let the node generate one per item).',
	'idempotency-in-progress': 'A request with the same Idempotency-Key is still running.',
	'payload-too-large': 'The request body is too large: send fewer items per request.',
	'rate-limited': "The API key's request quota was used up and retries did not get through.",
	internal: 'The service failed; retries with backoff did not succeed.',
};

/** One line naming slug, status, detail, every pointer and the request id. */
export function formatProblem(problem: ApiProblem): { message: string; description: string } {
	const parts = [`${problem.slug} (${problem.status})`];
	const detail = problem.detail ?? problem.title;
	let message = parts[0] + (detail ? `: ${detail}` : '');
	if (problem.pointers.length > 0) {
		message += ` [${problem.pointers
			.map((p) => (p.detail ? `${p.pointer}: ${p.detail}` : p.pointer))
			.join('; ')}]`;
	}
	if (problem.requestId) message += ` (request id ${problem.requestId})`;
	const description = ADVICE[problem.slug] ?? `The service answered with status ${problem.status}.`;
	return { message, description };
}

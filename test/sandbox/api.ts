import type { IncomingMessage, ServerResponse } from 'node:http';
import { ROUTES } from '../../nodes/shared/routes';
import { authenticate } from './auth';
import { ApiError, PlainValidationError, plainValidationBody, problemBody } from './errors';
import type { Fault } from './faults';
import { HANDLERS } from './handlers';
import type { ApiContext } from './handlers/context';
import { type HandlerResult, toWire, type WireResponse, writeWire } from './http';
import { IdempotencyStore } from './idempotency';
import { Query } from './query';
import { FixedWindowLimiter } from './rateLimit';
import type { LoggedRequest } from './requestLog';
import { matchRoute } from './routeMatch';
import type { SandboxState } from './state';

export interface IncomingApiRequest {
	req: IncomingMessage;
	res: ServerResponse;
	path: string;
	rawQuery: string;
	body: string;
	tooLarge: boolean;
	requestId: string;
	logged: LoggedRequest;
}

/**
 * The /v1 pipeline: authentication (and its failure limit), rate limit, route, permission,
 * idempotency, fault injection, handler. Every answer carries X-Request-Id; every answer to an
 * authenticated request carries the rate-limit headers.
 */
export async function handleApi(state: SandboxState, r: IncomingApiRequest): Promise<void> {
	const method = r.req.method ?? 'GET';
	let extraHeaders: Record<string, string> = { 'x-request-id': r.requestId };
	const respond = (wire: WireResponse) => {
		wire.headers = { ...wire.headers, ...extraHeaders };
		r.logged.status = wire.status;
		writeWire(r.res, wire);
	};
	const render = (error: unknown) => renderError(state, error, r.path, r.requestId);

	if (!r.path.startsWith('/v1/'))
		return respond(
			render(new ApiError('not-found', `${r.path} is not an operation of the service`)),
		);

	const auth = authenticate(state.store, r.req.headers.authorization);
	if (!auth.ok) {
		const failures = state.authFailLimiter.hit(
			r.req.socket.remoteAddress ?? 'unknown',
			state.clock.now(),
		);
		if (!failures.allowed) {
			return respond(
				render(
					new ApiError(
						'rate-limited',
						'too many failed authentications from this address',
						undefined,
						{ 'retry-after': String(failures.resetSeconds) },
					),
				),
			);
		}
		return respond(
			render(
				new ApiError('unauthorized', auth.detail, undefined, { 'www-authenticate': 'Bearer' }),
			),
		);
	}

	const window = state.limiter.hit(auth.key.key, state.clock.now());
	extraHeaders = {
		...extraHeaders,
		'ratelimit-policy': state.limiter.policyHeader(),
		ratelimit: FixedWindowLimiter.stateHeader(window),
	};
	if (!window.allowed) {
		return respond(
			render(
				new ApiError(
					'rate-limited',
					`quota of ${state.limiter.quota} requests per ${state.limiter.windowSeconds} s used up`,
					undefined,
					{ 'retry-after': String(window.resetSeconds) },
				),
			),
		);
	}
	if (r.tooLarge)
		return respond(
			render(
				new ApiError('payload-too-large', `body larger than ${state.options.maxBodyBytes} bytes`),
			),
		);

	const match = matchRoute(method, r.path);
	if (!match)
		return respond(
			render(new ApiError('not-found', `${method} ${r.path} is not an operation of the service`)),
		);
	r.logged.route = match.name;
	const route = ROUTES[match.name];
	const permission = 'permission' in route ? route.permission : undefined;
	if (permission && !state.store.permissionsOf(auth.key).has(permission)) {
		return respond(render(new ApiError('forbidden', `the API key lacks permission ${permission}`)));
	}

	const ctx: ApiContext = {
		state,
		route: match.name,
		user: auth.user,
		key: auth.key,
		params: match.params,
		query: new Query(r.rawQuery),
		rawBody: r.body,
		path: r.path,
		requestId: r.requestId,
	};
	const idempotencyKey = method !== 'GET' ? header(r.req, 'idempotency-key') : undefined;
	const fingerprint = IdempotencyStore.fingerprint(method, r.path, r.rawQuery, r.body);
	if (idempotencyKey !== undefined) {
		const claim = state.idempotency.claim(auth.key.key, idempotencyKey, fingerprint);
		if (claim.kind === 'reused')
			return respond(
				render(
					new ApiError(
						'idempotency-key-reused',
						'this Idempotency-Key was used with a different request',
					),
				),
			);
		if (claim.kind === 'in-progress')
			return respond(
				render(
					new ApiError(
						'idempotency-in-progress',
						'a request with this Idempotency-Key is still running',
					),
				),
			);
		if (claim.kind === 'replay') {
			r.logged.replayed = true;
			const stored = claim.response;
			const headers: Record<string, string> = { 'idempotent-replayed': 'true' };
			if (stored.contentType) headers['content-type'] = stored.contentType;
			return respond({ status: stored.status, headers, body: stored.body });
		}
	}
	const settle = (wire: WireResponse | undefined) => {
		if (idempotencyKey === undefined) return;
		if (wire)
			state.idempotency.finish(auth.key.key, idempotencyKey, fingerprint, {
				status: wire.status,
				contentType: wire.headers['content-type'],
				body: wire.body,
			});
		else state.idempotency.release(auth.key.key, idempotencyKey);
	};
	const drop = () => {
		r.logged.dropped = true;
		r.req.socket.destroy();
	};

	const fault = state.faults.take(match.name);
	if (fault?.when === 'before' && fault.mode !== 'hang') {
		settle(undefined);
		return fault.mode === 'drop' ? drop() : respond(render(faultError(fault)));
	}
	if (fault?.when === 'before') await state.clock.wait(fault.hangMs);

	let wire: WireResponse;
	try {
		wire = toWire(await HANDLERS[match.name](ctx));
	} catch (error) {
		wire = render(error);
	}

	if (fault?.when === 'after') {
		if (fault.mode === '500' || fault.mode === '429') {
			settle(undefined);
			return respond(render(faultError(fault)));
		}
		if (fault.mode === 'drop') {
			settle(wire);
			return drop();
		}
		await state.clock.wait(fault.hangMs);
	}
	settle(wire);
	respond(wire);
}

function header(req: IncomingMessage, name: string): string | undefined {
	const value = req.headers[name];
	return Array.isArray(value) ? value[0] : value;
}

function faultError(fault: Fault): ApiError {
	return fault.mode === '429'
		? new ApiError('rate-limited', 'injected rate limit', undefined, {
				'retry-after': String(fault.retryAfterSeconds),
			})
		: new ApiError('internal', 'injected failure');
}

/** Problem+json for ApiError, the plain shape for PlainValidationError, 500 for anything else. */
export function renderError(
	state: SandboxState,
	error: unknown,
	path: string,
	requestId: string,
): WireResponse {
	let result: HandlerResult;
	if (error instanceof PlainValidationError) {
		result = { status: 400, body: plainValidationBody(error, path) };
	} else {
		const apiError =
			error instanceof ApiError ? error : new ApiError('internal', 'the sandbox failed');
		if (!(error instanceof ApiError)) console.error('[sandbox] handler failed:', error);
		result = {
			status: apiError.status,
			contentType: 'application/problem+json',
			body: problemBody(
				apiError.slug,
				apiError.detail,
				requestId,
				state.errorsUrl,
				apiError.errors,
			),
			headers: apiError.headers,
		};
	}
	return toWire(result);
}

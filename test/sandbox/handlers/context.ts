import type { RouteName } from '../../../nodes/shared/routes';
import { ApiError } from '../errors';
import type { HandlerResult } from '../http';
import type { ApiKeyRecord, User } from '../model';
import type { Query } from '../query';
import type { SandboxState } from '../state';

/** Everything a handler of an authenticated /v1 request gets. */
export interface ApiContext {
	state: SandboxState;
	route: RouteName;
	user: User;
	key: ApiKeyRecord;
	params: Record<string, string>;
	query: Query;
	rawBody: string;
	path: string;
	requestId: string;
}

export type Handler = (ctx: ApiContext) => HandlerResult | Promise<HandlerResult>;

export function ok(body: unknown, status = 200): HandlerResult {
	return { status, body };
}

export function inScope(user: User, brandId: number): boolean {
	return user.brandIds.includes(brandId);
}

/** Brands a list read covers: the requested ones (403 if any is outside the scope) or the whole scope. */
export function brandFilter(user: User, requested: number[] | undefined): Set<number> {
	if (!requested) return new Set(user.brandIds);
	const outside = requested.filter((id) => !inScope(user, id));
	if (outside.length)
		throw new ApiError('forbidden', `brand ${outside.join(', ')} is outside the key's brand scope`);
	return new Set(requested);
}

export function notFound(what: string): ApiError {
	return new ApiError('not-found', `${what} not found`);
}

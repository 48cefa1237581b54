import type { ApiKeyRecord, User } from './model';
import type { Store } from './store';

export type AuthResult =
	| { ok: true; key: ApiKeyRecord; user: User }
	| { ok: false; detail: string };

/** `Authorization: Bearer <key>` against the store. */
export function authenticate(store: Store, header: string | undefined): AuthResult {
	if (!header) return { ok: false, detail: 'missing Authorization header' };
	const match = /^Bearer ([^\s]+)$/.exec(header);
	if (!match) return { ok: false, detail: 'Authorization must be "Bearer <API key>"' };
	const key = store.keys.get(match[1]);
	if (!key) return { ok: false, detail: 'unknown API key' };
	if (key.revoked) return { ok: false, detail: 'API key revoked' };
	const user = store.user(key.userId);
	if (!user) return { ok: false, detail: 'unknown API key' };
	return { ok: true, key, user };
}

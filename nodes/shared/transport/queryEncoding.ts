/**
 * Query-string encoders: one per operation, chosen by the route table's
 * `listEncoding`. Pure: no n8n imports. n8n's own `qs`/`arrayFormat` handling is never used,
 * so the bracket form (`brandIds[]=1`) can never reach the service.
 */
import type { ListEncoding } from '../routes';

export type QueryScalar = string | number | boolean;
export type QueryValue = QueryScalar | readonly QueryScalar[] | undefined | null;
export type QueryValues = Record<string, QueryValue>;

/** RFC 3986 unreserved characters stay as they are; everything else is percent-encoded. */
function encodeComponent(value: string): string {
	return encodeURIComponent(value).replace(
		/[!'()*]/g,
		(c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
	);
}

/**
 * Builds the raw query string (without `?`). Parameters whose value is undefined, null, an empty
 * string or an empty list are left out: an optional field the user left empty is never sent.
 * Order follows the object's key order, so the string is deterministic.
 */
export function encodeQuery(values: QueryValues, listEncoding: ListEncoding = 'comma'): string {
	const parts: string[] = [];
	for (const [name, value] of Object.entries(values)) {
		if (value === undefined || value === null || value === '') continue;
		const key = encodeComponent(name);
		if (Array.isArray(value)) {
			const list = (value as readonly QueryScalar[]).map(String).filter((v) => v !== '');
			if (list.length === 0) continue;
			if (listEncoding === 'repeat') {
				for (const item of list) parts.push(`${key}=${encodeComponent(item)}`);
			} else {
				// The comma separates values and is written literally, as the service splits on it.
				parts.push(`${key}=${list.map(encodeComponent).join(',')}`);
			}
		} else {
			parts.push(`${key}=${encodeComponent(String(value))}`);
		}
	}
	return parts.join('&');
}

/** A time as the service's date filters take it: ISO 8601 in UTC, to the second (the milliseconds dropped). */
export function isoSeconds(ms: number): string {
	return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

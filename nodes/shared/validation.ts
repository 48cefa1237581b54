/**
 * Input checks that run before any request is sent. Pure: luxon is the only import (n8n ships it).
 * Each failure is an InputError naming the parameter and what was wrong with it.
 */
import { DateTime } from 'luxon';

export class InputError extends Error {
	constructor(
		readonly field: string,
		readonly problem: string,
	) {
		super(`${field}: ${problem}`);
		this.name = 'InputError';
	}
}

const isBlank = (v: unknown) =>
	v === undefined || v === null || (typeof v === 'string' && v.trim() === '');

/** A whole number >= 1 given as a number or a digit string. */
export function toId(value: unknown, field: string): number {
	if (isBlank(value)) throw new InputError(field, 'is required');
	const text =
		typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
	if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text)) || Number(text) < 1) {
		throw new InputError(
			field,
			`must be a whole number of 1 or more, got ${JSON.stringify(value)}`,
		);
	}
	return Number(text);
}

/** Splits a list given as an array, or as text separated by commas or whitespace. */
function splitList(value: unknown): unknown[] {
	if (isBlank(value)) return [];
	if (Array.isArray(value))
		return value.flatMap((v) => (typeof v === 'string' || Array.isArray(v) ? splitList(v) : [v]));
	if (typeof value === 'string') return value.split(/[\s,]+/).filter((v) => v !== '');
	return [value];
}

/** A list of ids; empty when nothing was given (optional filters) unless `required`. */
export function toIdList(value: unknown, field: string, required = false): number[] {
	const items = splitList(value);
	if (items.length === 0) {
		if (required) throw new InputError(field, 'needs at least one id');
		return [];
	}
	return items.map((item) => {
		if (isBlank(item))
			throw new InputError(field, `contains an empty entry (${JSON.stringify(item ?? null)})`);
		return toId(item, field);
	});
}

/** Values from a fixed, case-sensitive set (e.g. order statuses). */
export function toEnumList<T extends string>(
	value: unknown,
	field: string,
	allowed: readonly T[],
): T[] {
	return splitList(value).map((item) => {
		if (typeof item !== 'string' || !(allowed as readonly string[]).includes(item)) {
			throw new InputError(
				field,
				`must be one of ${allowed.join(', ')} (exact case), got ${JSON.stringify(item)}`,
			);
		}
		return item as T;
	});
}

/** A whole number within min..max (given as a number or a digit string); max may be Infinity. */
export function toWholeNumber(value: unknown, field: string, min: number, max: number): number {
	const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
	if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
		const range = Number.isFinite(max) ? `from ${min} to ${max}` : `of ${min} or more`;
		throw new InputError(field, `must be a whole number ${range}, got ${JSON.stringify(value)}`);
	}
	return n;
}

/** Page size within the operation's bounds (Infinity: no upper bound, e.g. Limit on a whole list). */
export function toLimit(value: unknown, field: string, max: number): number {
	return toWholeNumber(value, field, 1, max);
}

/** A true/false value, also as the text `true` / `false`. */
export function toBoolean(value: unknown, field: string): boolean {
	if (typeof value === 'boolean') return value;
	if (value === 'true' || value === 'false') return value === 'true';
	throw new InputError(field, `must be true or false, got ${JSON.stringify(value)}`);
}

/** Longest user-supplied Idempotency-Key; batch writes append `-<n>` to it. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 200;

/**
 * A user-supplied Idempotency-Key, or undefined when empty. Only visible ASCII is accepted: an
 * HTTP header cannot carry anything else faithfully (other characters would be dropped on the
 * wire, so two different keys could arrive as the same one).
 */
export function toIdempotencyKey(value: unknown, field: string): string | undefined {
	const key = toText(value, field);
	if (key === undefined) return undefined;
	if (!/^[\x21-\x7e]+$/.test(key)) {
		throw new InputError(
			field,
			'may contain only visible ASCII characters (letters, digits and punctuation, no spaces)',
		);
	}
	if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
		throw new InputError(
			field,
			`must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters, got ${key.length}`,
		);
	}
	return key;
}

/**
 * A date or date-time as n8n's date picker, an expression or luxon gives it; times without a zone
 * are read in `zone` (the workflow's timezone). Returns ISO 8601 UTC, or undefined when empty.
 */
export function toUtcDateTime(value: unknown, field: string, zone = 'UTC'): string | undefined {
	if (isBlank(value)) return undefined;
	let date: DateTime;
	if (DateTime.isDateTime(value)) date = value;
	else if (value instanceof Date) date = DateTime.fromJSDate(value);
	else if (typeof value === 'string')
		date = DateTime.fromISO(value.trim(), { zone, setZone: true });
	else throw new InputError(field, `must be a date, got ${JSON.stringify(value)}`);
	if (!date.isValid) {
		throw new InputError(
			field,
			`must be an ISO 8601 date such as 2026-11-20 or 2026-11-20T18:00:00Z, got ${JSON.stringify(value)}`,
		);
	}
	return date.toUTC().toISO({ suppressMilliseconds: true }) as string;
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/** An absolute https URL (http only for a loopback host, for local testing). */
export function toWebhookUrl(value: unknown, field: string): string {
	if (isBlank(value)) throw new InputError(field, 'is required');
	const text = String(value).trim();
	if (!URL.canParse(text)) {
		throw new InputError(
			field,
			`must be an absolute URL such as https://example.com/hook, got ${JSON.stringify(value)}`,
		);
	}
	const url = new URL(text);
	if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.test(url.hostname))) {
		throw new InputError(
			field,
			`must use https (the service delivers only to public https addresses), got ${url.protocol.replace(':', '')}`,
		);
	}
	return url.toString();
}

/** Non-empty trimmed text, or undefined when optional and empty. */
export function toText(value: unknown, field: string, required = false): string | undefined {
	if (isBlank(value)) {
		if (required) throw new InputError(field, 'is required');
		return undefined;
	}
	if (typeof value !== 'string' && typeof value !== 'number') {
		throw new InputError(field, `must be text, got ${JSON.stringify(value)}`);
	}
	return String(value).trim();
}

/**
 * A secret (a password field), or undefined when blank. Its error names the field only: the value
 * itself must never reach a message. A password is sent as typed, spaces and all; other secrets are
 * trimmed, as a copied key often carries a line break.
 */
export function toSecret(value: unknown, field: string, asTyped = false): string | undefined {
	if (isBlank(value)) return undefined;
	if (typeof value !== 'string' && typeof value !== 'number') {
		throw new InputError(field, 'must be text');
	}
	return asTyped ? String(value) : String(value).trim();
}

/** A list of strings kept exactly as given (names may contain commas, so nothing is split). */
export function toStringList(value: unknown, field: string): string[] {
	if (isBlank(value)) return [];
	const list = Array.isArray(value) ? value : [value];
	return list
		.filter((v) => !isBlank(v))
		.map((v) => {
			if (typeof v !== 'string')
				throw new InputError(field, `must be text, got ${JSON.stringify(v)}`);
			return v;
		});
}

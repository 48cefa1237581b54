/**
 * Standard Webhooks signature verification, with the service's limits.
 *
 * Pure module: only `node:crypto`, no n8n imports, no other dependency, so the trigger node, the
 * sandbox and the tests share one implementation.
 *
 * Signed content: `${webhook-id}.${webhook-timestamp}.` followed by the raw body bytes. The body is
 * never decoded to a string, so non-UTF-8 bodies verify exactly as sent.
 */

import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import type { KeyObject } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
/** Standard Webhooks: a signing secret is 24 to 64 random bytes. */
export const MIN_SECRET_BYTES = 24;
export const MAX_SECRET_BYTES = 64;
/** The service's timestamp tolerance: 5 minutes. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export const WEBHOOK_ID_HEADER = 'webhook-id';
export const WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';

export type WebhookSecretErrorCode = 'missing-prefix' | 'invalid-base64' | 'invalid-length';

/** Thrown by `parseSecret`; the message never contains the secret. */
export class WebhookSecretError extends Error {
	readonly code: WebhookSecretErrorCode;

	constructor(code: WebhookSecretErrorCode, message: string) {
		super(message);
		this.name = 'WebhookSecretError';
		this.code = code;
	}
}

export type VerifyFailure =
	/** webhook-id, webhook-timestamp or webhook-signature absent or empty */
	| 'missing-header'
	/** one of the three headers given more than once (array value) */
	| 'duplicate-header'
	/** webhook-timestamp is not a plain decimal integer of seconds */
	| 'bad-timestamp'
	| 'timestamp-too-old'
	| 'timestamp-too-new'
	/** webhook-signature has no entry with version v1 */
	| 'no-v1-signature'
	/** no v1 entry matches any of the secrets */
	| 'signature-mismatch'
	/** the caller passed no secret to verify against */
	| 'no-secret';

export type VerifyResult =
	/**
	 * `unknownSignatures`: v1 entries that match none of the secrets. The service signs with two
	 * secrets for 24 hours after a rotation, so one the receiver cannot match means a rotation it
	 * did not make.
	 */
	| { ok: true; id: string; timestamp: number; unknownSignatures: number }
	| { ok: false; reason: VerifyFailure; message: string };

export interface VerifyInput {
	/** request headers with lower-case names, as in Node's IncomingHttpHeaders */
	headers: Record<string, string | string[] | undefined>;
	/** the request body exactly as received */
	rawBody: Buffer;
	/** parsed keys (see parseSecret): the current one and, during a rotation overlap, the previous */
	secrets: Buffer[];
	/** current Unix time in seconds; default: the system clock */
	nowSeconds?: number;
	/** allowed absolute difference between webhook-timestamp and now; default 300 */
	toleranceSeconds?: number;
}

const BASE64_CHARS = /^[A-Za-z0-9+/]*$/;
const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Standard base64 alphabet value of each ASCII code, -1 for anything else. */
const BASE64_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE64_ALPHABET.length; i++) BASE64_VALUE[BASE64_ALPHABET.charCodeAt(i)] = i;

const SIGNATURE_BYTES = 32;
/** canonical padded base64 of 32 bytes: 43 data characters and one `=` */
const SIGNATURE_CHARS = 44;

function b64(code: number): number {
	return code < 128 ? BASE64_VALUE[code] : -1;
}

/**
 * Decodes `text[start..end)` as one HMAC-SHA256 signature in canonical padded base64 (43 data
 * characters whose last one has its 2 unused bits zero, then `=`). Returns undefined for anything
 * else, including URL-safe letters, whitespace or a missing `=` (Buffer.from would skip or accept
 * those). Writes the 32 bytes into `out` and returns whether the entry was well-formed.
 * Hand-written because a regex plus Buffer.from cost more than the rest of the checks.
 */
function decodeSignature(text: string, start: number, end: number, out: Buffer): boolean {
	if (end - start !== SIGNATURE_CHARS || text.charCodeAt(end - 1) !== 0x3d /* = */) return false;
	let o = 0;
	let i = start;
	// 10 groups of 4 characters -> 30 bytes
	for (; o < 30; i += 4) {
		const a = b64(text.charCodeAt(i));
		const b = b64(text.charCodeAt(i + 1));
		const c = b64(text.charCodeAt(i + 2));
		const d = b64(text.charCodeAt(i + 3));
		if ((a | b | c | d) < 0) return false;
		const n = (a << 18) | (b << 12) | (c << 6) | d;
		out[o++] = n >>> 16;
		out[o++] = (n >>> 8) & 0xff;
		out[o++] = n & 0xff;
	}
	// last 3 data characters -> 2 bytes; the 2 leftover bits must be zero
	const a = b64(text.charCodeAt(i));
	const b = b64(text.charCodeAt(i + 1));
	const c = b64(text.charCodeAt(i + 2));
	if ((a | b | c) < 0 || (c & 3) !== 0) return false;
	const n = (a << 10) | (b << 4) | (c >>> 2);
	out[o++] = n >>> 8;
	out[o] = n & 0xff;
	return true;
}

/**
 * Where the first well-formed v1 entry is decoded. Creating a Buffer costs about as much as the
 * rest of the checks together, and verifyWebhook is synchronous and never lets this escape, so
 * one module-level Buffer is reused; only further entries get their own.
 */
const firstCandidate = Buffer.alloc(SIGNATURE_BYTES);

/** Longest accepted webhook-timestamp: 15 digits stay a safe integer. */
const MAX_TIMESTAMP_DIGITS = 15;

/**
 * Plain decimal seconds: ASCII digits only, no sign, no leading zero, no fraction, no whitespace,
 * at most 15 digits. Returns -1 for anything else.
 */
function parseTimestamp(text: string): number {
	const length = text.length;
	if (length > MAX_TIMESTAMP_DIGITS || (length > 1 && text.charCodeAt(0) === 0x30 /* 0 */)) return -1;
	let value = 0;
	for (let i = 0; i < length; i++) {
		const digit = text.charCodeAt(i) - 0x30;
		if (digit < 0 || digit > 9) return -1;
		value = value * 10 + digit;
	}
	return length === 0 ? -1 : value;
}

/**
 * Turns `whsec_<base64>` into the HMAC key.
 *
 * Strict: the prefix is required; the base64 must use the standard alphabet and be canonical
 * (unused trailing bits zero). Padding is optional but, when present, must be exactly right
 * (what the standardwebhooks library and Node's encoders produce is always accepted; the Python
 * library also accepts unpadded secrets, so we do too). The key must be 24..64 bytes.
 */
export function parseSecret(secret: string): Buffer {
	if (typeof secret !== 'string' || !secret.startsWith(SECRET_PREFIX)) {
		throw new WebhookSecretError('missing-prefix', `Webhook secret must start with "${SECRET_PREFIX}"`);
	}
	const text = secret.slice(SECRET_PREFIX.length);
	let pad = 0;
	while (pad < text.length && text.charCodeAt(text.length - 1 - pad) === 0x3d /* = */) pad++;
	const data = text.length - pad;
	const body = text.slice(0, data);
	const rem = data % 4;
	const paddingOk = pad === 0 ? rem !== 1 : text.length % 4 === 0 && rem !== 0 && pad === 4 - rem;
	if (!BASE64_CHARS.test(body) || !paddingOk) {
		throw new WebhookSecretError(
			'invalid-base64',
			'Webhook secret must be "whsec_" followed by standard base64 text',
		);
	}
	if (rem !== 0) {
		// canonical form: the bits of the last character that do not belong to a byte are zero
		const last = BASE64_ALPHABET.indexOf(body[data - 1]);
		const unusedMask = rem === 2 ? 0x0f : 0x03;
		if ((last & unusedMask) !== 0) {
			throw new WebhookSecretError(
				'invalid-base64',
				'Webhook secret is not canonical base64 (non-zero trailing bits)',
			);
		}
	}
	const key = Buffer.from(body, 'base64');
	if (key.length < MIN_SECRET_BYTES || key.length > MAX_SECRET_BYTES) {
		throw new WebhookSecretError(
			'invalid-length',
			`Webhook secret must decode to ${MIN_SECRET_BYTES}..${MAX_SECRET_BYTES} bytes, got ${key.length}`,
		);
	}
	return key;
}

/**
 * `createHmac` with a raw Buffer key sets the key up anew on every call, which on Node 24 costs
 * more than hashing a 4 KB body; with a reused KeyObject that cost goes away (see
 * test/bench/results/signatures.md). KeyObjects are cached by key content, not by Buffer identity, so a caller
 * that parses the secret on every request still hits the cache and a Buffer modified after use can
 * never select a stale key. The cache is bounded; the oldest entry is dropped first.
 */
const KEY_CACHE_LIMIT = 64;
const keyCache = new Map<string, KeyObject>();

function keyObject(key: Buffer): KeyObject {
	const cacheKey = key.toString('latin1');
	let cached = keyCache.get(cacheKey);
	if (cached === undefined) {
		cached = createSecretKey(key);
		if (keyCache.size >= KEY_CACHE_LIMIT) {
			keyCache.delete(keyCache.keys().next().value as string);
		}
		keyCache.set(cacheKey, cached);
	}
	return cached;
}

function hmac(key: Buffer, prefix: string | Buffer, rawBody: Buffer): Buffer {
	return createHmac('sha256', keyObject(key)).update(prefix).update(rawBody).digest();
}

/** Returns the `webhook-signature` entry `v1,<base64>` for one key. */
export function signWebhook(id: string, timestampSeconds: number, rawBody: Buffer, key: Buffer): string {
	if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
		throw new RangeError('timestampSeconds must be a non-negative integer number of seconds');
	}
	return `v1,${hmac(key, `${id}.${timestampSeconds}.`, rawBody).toString('base64')}`;
}

function fail(reason: VerifyFailure, message: string): VerifyResult {
	return { ok: false, reason, message };
}

const DUPLICATE = 1;
const MISSING = 0;

/** The header's single non-empty value, or MISSING / DUPLICATE (no allocation on the good path). */
function readHeader(headers: VerifyInput['headers'], name: string): string | typeof MISSING | typeof DUPLICATE {
	let value = headers[name];
	if (typeof value === 'string') return value.length === 0 ? MISSING : value;
	if (Array.isArray(value)) {
		if (value.length > 1) return DUPLICATE;
		value = value[0];
		return typeof value === 'string' && value.length > 0 ? value : MISSING;
	}
	return MISSING;
}

function headerFailure(name: string, state: typeof MISSING | typeof DUPLICATE): VerifyResult {
	return state === DUPLICATE
		? fail('duplicate-header', `Header ${name} is given more than once`)
		: fail('missing-header', `Header ${name} is missing`);
}

/** Constant-time comparison; the length guard keeps timingSafeEqual from throwing. */
function matches(expected: Buffer, candidate: Buffer): boolean {
	return (
		expected.length === SIGNATURE_BYTES &&
		candidate.length === SIGNATURE_BYTES &&
		timingSafeEqual(expected, candidate)
	);
}

/**
 * Verifies one delivery. Cheap checks (headers, timestamp window, signature syntax) run before any
 * HMAC; then one HMAC per secret is compared, in constant time, with every well-formed v1 entry.
 */
export function verifyWebhook(input: VerifyInput): VerifyResult {
	const { headers, rawBody, secrets } = input;

	const id = readHeader(headers, WEBHOOK_ID_HEADER);
	if (typeof id !== 'string') return headerFailure(WEBHOOK_ID_HEADER, id);
	const timestampText = readHeader(headers, WEBHOOK_TIMESTAMP_HEADER);
	if (typeof timestampText !== 'string') return headerFailure(WEBHOOK_TIMESTAMP_HEADER, timestampText);
	const signatures = readHeader(headers, WEBHOOK_SIGNATURE_HEADER);
	if (typeof signatures !== 'string') return headerFailure(WEBHOOK_SIGNATURE_HEADER, signatures);

	const timestamp = parseTimestamp(timestampText);
	if (timestamp < 0) {
		return fail('bad-timestamp', 'Header webhook-timestamp must be an integer number of seconds');
	}
	const now = input.nowSeconds ?? Math.floor(Date.now() / 1000);
	const tolerance = input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
	if (now - timestamp > tolerance) {
		return fail('timestamp-too-old', `Timestamp is ${now - timestamp} s old (tolerance ${tolerance} s)`);
	}
	if (timestamp - now > tolerance) {
		return fail('timestamp-too-new', `Timestamp is ${timestamp - now} s ahead (tolerance ${tolerance} s)`);
	}

	// Entries are separated by spaces; entries of other versions (v1a, v2, ...) are skipped.
	// Malformed v1 entries count as v1 entries that cannot match.
	let v1Entries = 0;
	// the usual single well-formed entry needs no array
	let first: Buffer | undefined;
	let more: Buffer[] | undefined;
	let start = 0;
	const end = signatures.length;
	while (start < end) {
		let stop = signatures.indexOf(' ', start);
		if (stop === -1) stop = end;
		if (
			stop - start >= 3 &&
			signatures.charCodeAt(start) === 0x76 /* v */ &&
			signatures.charCodeAt(start + 1) === 0x31 /* 1 */ &&
			signatures.charCodeAt(start + 2) === 0x2c /* , */
		) {
			v1Entries++;
			if (first === undefined) {
				if (decodeSignature(signatures, start + 3, stop, firstCandidate)) first = firstCandidate;
			} else {
				const candidate = Buffer.allocUnsafe(SIGNATURE_BYTES);
				if (decodeSignature(signatures, start + 3, stop, candidate)) (more ??= []).push(candidate);
			}
		}
		start = stop + 1;
	}
	if (v1Entries === 0) {
		return fail('no-v1-signature', 'Header webhook-signature has no v1 entry');
	}
	if (secrets.length === 0) {
		return fail('no-secret', 'No signing secret to verify against');
	}

	if (first !== undefined) {
		// The prefix is encoded once when several secrets need it; with one secret, hashing the
		// string directly avoids the extra Buffer.
		const prefix: string | Buffer =
			secrets.length > 1 ? Buffer.from(`${id}.${timestampText}.`) : `${id}.${timestampText}.`;
		const expected: Buffer[] = [];
		for (const key of secrets) expected.push(hmac(key, prefix, rawBody));
		let matched = 0;
		for (const candidate of more === undefined ? [first] : [first, ...more]) {
			if (expected.some((e) => matches(e, candidate))) matched++;
		}
		if (matched > 0) return { ok: true, id, timestamp, unknownSignatures: v1Entries - matched };
	}
	return fail('signature-mismatch', 'No v1 signature matches the signing secret');
}

/**
 * Standard Webhooks signature verification, with the service's limits.
 *
 * Pure module: only `node:crypto`, no n8n imports, no other dependency, so the trigger node and
 * the tests share one implementation.
 *
 * Signed content: `${webhook-id}.${webhook-timestamp}.` followed by the raw body bytes. The body is
 * never decoded to a string, so non-UTF-8 bodies verify exactly as sent.
 */

import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
/** Standard Webhooks: a signing secret is 24 to 64 random bytes. */
const MIN_SECRET_BYTES = 24;
const MAX_SECRET_BYTES = 64;
/** The service's timestamp tolerance: 5 minutes. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** Thrown by `parseSecret`; the message never contains the secret. */
export class WebhookSecretError extends Error {
	constructor(
		readonly code: 'missing-prefix' | 'invalid-base64' | 'invalid-length',
		message: string,
	) {
		super(message);
		this.name = 'WebhookSecretError';
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
	/**
	 * HMAC keys, the current one and, during a rotation overlap, the previous: from `signingKey` (set
	 * up once, for a caller that keeps them) or `parseSecret`
	 */
	secrets: Array<KeyObject | Buffer>;
	/** current Unix time in seconds (the caller's clock: the verifier reads none of its own) */
	nowSeconds: number;
	/** allowed absolute difference between webhook-timestamp and now; default 300 */
	toleranceSeconds?: number;
}

/**
 * Turns `whsec_<base64>` into the HMAC key. Strict: the prefix is required and the text must be
 * the canonical standard base64 of the key, padded or not (the Python library accepts unpadded
 * secrets); Buffer.from alone would also take URL-safe letters, whitespace and stray bits, so the
 * key is re-encoded and compared. The key must be 24..64 bytes.
 */
export function parseSecret(secret: string): Buffer {
	if (typeof secret !== 'string' || !secret.startsWith(SECRET_PREFIX)) {
		throw new WebhookSecretError(
			'missing-prefix',
			`Webhook secret must start with "${SECRET_PREFIX}"`,
		);
	}
	const text = secret.slice(SECRET_PREFIX.length);
	const key = Buffer.from(text, 'base64');
	const canonical = key.toString('base64');
	if (text !== canonical && text !== canonical.replace(/=+$/, '')) {
		throw new WebhookSecretError(
			'invalid-base64',
			'Webhook secret must be "whsec_" followed by canonical base64 text',
		);
	}
	if (key.length < MIN_SECRET_BYTES || key.length > MAX_SECRET_BYTES) {
		throw new WebhookSecretError(
			'invalid-length',
			`Webhook secret must decode to ${MIN_SECRET_BYTES}..${MAX_SECRET_BYTES} bytes, got ${key.length}`,
		);
	}
	return key;
}

/**
 * The HMAC key of a `whsec_` secret, set up once: setting up a raw Buffer key on every call costs
 * more than hashing a 4 KB body (test/bench/results/signatures.md). This module keeps no key: a
 * caller that verifies often keeps its own, for as long as the secret is its.
 */
export function signingKey(secret: string): KeyObject {
	return createSecretKey(parseSecret(secret));
}

function hmac(key: KeyObject | Buffer, prefix: string, rawBody: Buffer): Buffer {
	return createHmac('sha256', key).update(prefix).update(rawBody).digest();
}

/** Returns the `webhook-signature` entry `v1,<base64>` for one key. */
export function signWebhook(
	id: string,
	timestampSeconds: number,
	rawBody: Buffer,
	key: KeyObject | Buffer,
): string {
	if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
		throw new RangeError('timestampSeconds must be a non-negative integer number of seconds');
	}
	return `v1,${hmac(key, `${id}.${timestampSeconds}.`, rawBody).toString('base64')}`;
}

function fail(reason: VerifyFailure, message: string): VerifyResult {
	return { ok: false, reason, message };
}

/** The header's single non-empty value, or why there is none. */
function header(headers: VerifyInput['headers'], name: string): string | VerifyResult {
	const value = headers[name];
	if (Array.isArray(value) && value.length > 1)
		return fail('duplicate-header', `Header ${name} is given more than once`);
	return (
		(Array.isArray(value) ? value[0] : value) || fail('missing-header', `Header ${name} is missing`)
	);
}

/** Standard base64 alphabet value of each ASCII code, -1 for anything else. */
const BASE64_VALUE = new Int8Array(128).fill(-1);
[...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].forEach(
	(c, i) => (BASE64_VALUE[c.charCodeAt(0)] = i),
);
const SIGNATURE_BYTES = 32;

function b64(code: number): number {
	return code < 128 ? BASE64_VALUE[code] : -1;
}

/**
 * Decodes `text[start..end)` into `out` if it is one HMAC-SHA256 signature in canonical padded
 * base64 (43 data characters, the last with its 2 spare bits zero, then `=`), which Buffer.from
 * does not check (it takes URL-safe letters, whitespace, stray bits); hand-written because a regex
 * plus Buffer.from put the verifier over 1.25x a bare HMAC at 4 KB (test/bench/results/signatures.md).
 */
function decodeSignature(text: string, start: number, end: number, out: Buffer): boolean {
	if (end - start !== 44 || text.charCodeAt(end - 1) !== 0x3d /* = */) return false;
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

/** Where the first v1 entry is decoded: verifyWebhook is synchronous and never lets it escape, and a new Buffer costs as much as the other checks. */
const firstCandidate = Buffer.alloc(SIGNATURE_BYTES);

/** Plain decimal seconds: no sign, leading zero, fraction or whitespace; 15 digits stay a safe integer. */
const TIMESTAMP = /^(0|[1-9][0-9]{0,14})$/;

/**
 * Verifies one delivery. Cheap checks (headers, timestamp window, signature syntax) run before any
 * HMAC; then one HMAC per secret is compared, in constant time, with every well-formed v1 entry.
 */
export function verifyWebhook(input: VerifyInput): VerifyResult {
	const id = header(input.headers, 'webhook-id');
	if (typeof id !== 'string') return id;
	const timestampText = header(input.headers, 'webhook-timestamp');
	if (typeof timestampText !== 'string') return timestampText;
	const signatures = header(input.headers, 'webhook-signature');
	if (typeof signatures !== 'string') return signatures;

	if (!TIMESTAMP.test(timestampText)) {
		return fail('bad-timestamp', 'Header webhook-timestamp must be an integer number of seconds');
	}
	const timestamp = Number(timestampText);
	const now = input.nowSeconds;
	const tolerance = input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
	if (now - timestamp > tolerance) {
		return fail(
			'timestamp-too-old',
			`Timestamp is ${now - timestamp} s old (tolerance ${tolerance} s)`,
		);
	}
	if (timestamp - now > tolerance) {
		return fail(
			'timestamp-too-new',
			`Timestamp is ${timestamp - now} s ahead (tolerance ${tolerance} s)`,
		);
	}

	// Entries are separated by spaces; other versions (v1a, v2, ...) are skipped, and a malformed v1
	// entry counts as one that cannot match.
	let v1 = 0;
	const candidates: Buffer[] = [];
	for (let start = 0, stop = 0; start < signatures.length; start = stop + 1) {
		stop = signatures.indexOf(' ', start);
		if (stop === -1) stop = signatures.length;
		if (!signatures.startsWith('v1,', start)) continue;
		v1++;
		const candidate =
			candidates.length === 0 ? firstCandidate : Buffer.allocUnsafe(SIGNATURE_BYTES);
		if (decodeSignature(signatures, start + 3, stop, candidate)) candidates.push(candidate);
	}
	if (v1 === 0) return fail('no-v1-signature', 'Header webhook-signature has no v1 entry');
	if (input.secrets.length === 0) return fail('no-secret', 'No signing secret to verify against');
	if (candidates.length > 0) {
		const expected = input.secrets.map((key) =>
			hmac(key, `${id}.${timestampText}.`, input.rawBody),
		);
		const matched = candidates.filter((candidate) =>
			expected.some((e) => timingSafeEqual(e, candidate)),
		).length;
		if (matched > 0) return { ok: true, id, timestamp, unknownSignatures: v1 - matched };
	}
	return fail('signature-mismatch', 'No v1 signature matches the signing secret');
}

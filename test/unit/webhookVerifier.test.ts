import * as crypto from 'node:crypto';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';

import {
	DEFAULT_TOLERANCE_SECONDS,
	parseSecret,
	signWebhook,
	verifyWebhook,
	WebhookSecretError,
} from '../../nodes/shared/webhookVerifier';
import type { VerifyFailure, VerifyInput, VerifyResult } from '../../nodes/shared/webhookVerifier';

/*
 * Published Standard Webhooks test vectors. Source:
 * github.com/standard-webhooks/standard-webhooks, libraries/javascript/src/webhook.test.ts
 * (commit b2fa7b8), test "sign function works" and the negative cases around it. The same secret,
 * id, timestamp, payload and expected signature appear in libraries/go/webhook_test.go,
 * libraries/python/tests/test_webhooks.py, libraries/php/tests/WebhookTest.php,
 * libraries/ruby/spec/webhook_spec.rb and libraries/csharp/StandardWebhooks.Tests/WebhookTest.cs;
 * the wrong-signature strings below come from those files too.
 */
const VECTOR = {
	secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
	id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
	timestamp: 1614265330,
	payload: '{"test": 2432232314}',
	signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
/** the "multi sig payload is valid" case: two wrong v1 entries and one v2 around the valid one */
const OTHER_SIGNATURE = 'Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=';

const NOW = 1_700_000_000;

function headersOf(
	id: string,
	timestamp: number | string,
	signature: string,
): VerifyInput['headers'] {
	return {
		'webhook-id': id,
		'webhook-timestamp': String(timestamp),
		'webhook-signature': signature,
	};
}

function vectorInput(overrides: Partial<VerifyInput> = {}): VerifyInput {
	return {
		headers: headersOf(VECTOR.id, VECTOR.timestamp, VECTOR.signature),
		rawBody: Buffer.from(VECTOR.payload),
		secrets: [parseSecret(VECTOR.secret)],
		nowSeconds: VECTOR.timestamp,
		...overrides,
	};
}

function expectFailure(result: VerifyResult, reason: VerifyFailure): void {
	expect(result).toMatchObject({ ok: false, reason });
}

function randomSecret(bytes = 32): string {
	return `whsec_${crypto.randomBytes(bytes).toString('base64')}`;
}

/** a delivery signed with our signer, verified at NOW */
function delivery(
	options: { body?: Buffer; keys?: Buffer[]; timestamp?: number; id?: string } = {},
) {
	const keys = options.keys ?? [parseSecret(randomSecret())];
	const body = options.body ?? Buffer.from('{"id":"evt_1","type":"order.created"}');
	const timestamp = options.timestamp ?? NOW;
	const id = options.id ?? 'evt_1';
	const signature = keys.map((key) => signWebhook(id, timestamp, body, key)).join(' ');
	const input: VerifyInput = {
		headers: headersOf(id, timestamp, signature),
		rawBody: body,
		secrets: keys,
		nowSeconds: NOW,
	};
	return { keys, body, timestamp, id, signature, input };
}

describe('Standard Webhooks published vectors', () => {
	test('signWebhook reproduces the published signature', () => {
		expect(
			signWebhook(
				VECTOR.id,
				VECTOR.timestamp,
				Buffer.from(VECTOR.payload),
				parseSecret(VECTOR.secret),
			),
		).toBe(VECTOR.signature);
	});

	test('the published signature verifies', () => {
		expect(verifyWebhook(vectorInput())).toEqual({
			ok: true,
			id: VECTOR.id,
			timestamp: VECTOR.timestamp,
			unknownSignatures: 0,
		});
	});

	test('the library agrees on the vector (oracle sanity check)', () => {
		const webhook = new Webhook(VECTOR.secret);
		expect(webhook.sign(VECTOR.id, new Date(VECTOR.timestamp * 1000), VECTOR.payload)).toBe(
			VECTOR.signature,
		);
	});

	test.each([
		['garbage signature', 'v1,dawfeoifkpqwoekfpqoekf'],
		['partial signature (first 8 characters)', VECTOR.signature.slice(0, 8)],
		['empty v1 signature', 'v1,'],
		['last character changed (python)', 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OA='],
		['tail replaced, unpadded (ruby, csharp)', 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLawdd'],
		['another message signature', `v1,${OTHER_SIGNATURE}`],
	])('rejects %s', (_name, signature) => {
		const headers = headersOf(VECTOR.id, VECTOR.timestamp, signature);
		expectFailure(verifyWebhook(vectorInput({ headers })), 'signature-mismatch');
	});

	test('multi-signature header with the valid one in the middle verifies', () => {
		const signature = [
			`v1,${OTHER_SIGNATURE}`,
			`v2,${OTHER_SIGNATURE}`,
			VECTOR.signature,
			`v1,${OTHER_SIGNATURE}`,
		].join(' ');
		const headers = headersOf(VECTOR.id, VECTOR.timestamp, signature);
		expect(verifyWebhook(vectorInput({ headers })).ok).toBe(true);
	});

	test.each(['webhook-id', 'webhook-timestamp', 'webhook-signature'])(
		'missing %s is rejected',
		(name) => {
			const headers = { ...vectorInput().headers };
			delete headers[name];
			expectFailure(verifyWebhook(vectorInput({ headers })), 'missing-header');
		},
	);

	test('a non-numeric timestamp ("hello") is rejected', () => {
		const headers = headersOf(VECTOR.id, 'hello', VECTOR.signature);
		expectFailure(verifyWebhook(vectorInput({ headers })), 'bad-timestamp');
	});

	test('tolerance + 1 s old or ahead is rejected (the vector checked at a later / earlier clock)', () => {
		expectFailure(
			verifyWebhook(vectorInput({ nowSeconds: VECTOR.timestamp + DEFAULT_TOLERANCE_SECONDS + 1 })),
			'timestamp-too-old',
		);
		expectFailure(
			verifyWebhook(vectorInput({ nowSeconds: VECTOR.timestamp - DEFAULT_TOLERANCE_SECONDS - 1 })),
			'timestamp-too-new',
		);
	});

	test('an empty body verifies', () => {
		const key = parseSecret(VECTOR.secret);
		const empty = Buffer.alloc(0);
		const signature = signWebhook(VECTOR.id, NOW, empty, key);
		expect(signature).toBe(new Webhook(VECTOR.secret).sign(VECTOR.id, new Date(NOW * 1000), ''));
		const headers = headersOf(VECTOR.id, NOW, signature);
		expect(verifyWebhook({ headers, rawBody: empty, secrets: [key], nowSeconds: NOW }).ok).toBe(
			true,
		);
	});

	test('empty secrets are rejected ("" and "whsec_")', () => {
		expect(() => parseSecret('')).toThrow(WebhookSecretError);
		expect(() => parseSecret('whsec_')).toThrow(WebhookSecretError);
	});
});

describe('parseSecret', () => {
	function code(secret: string): string | undefined {
		try {
			parseSecret(secret);
			return undefined;
		} catch (error) {
			expect(error).toBeInstanceOf(WebhookSecretError);
			expect((error as Error).message).not.toContain(secret.slice(6) || '\u0000');
			return (error as WebhookSecretError).code;
		}
	}

	test('decodes the published secret to 24 bytes', () => {
		expect(parseSecret(VECTOR.secret)).toEqual(
			Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64'),
		);
		expect(parseSecret(VECTOR.secret)).toHaveLength(24);
	});

	test('requires the whsec_ prefix (the library accepts a bare base64 secret; we do not)', () => {
		expect(code('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')).toBe('missing-prefix');
		expect(code('WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')).toBe('missing-prefix');
		expect(code('')).toBe('missing-prefix');
	});

	test('key length 24..64 bytes', () => {
		expect(code('whsec_')).toBe('invalid-length');
		expect(code(`whsec_${Buffer.alloc(23, 7).toString('base64')}`)).toBe('invalid-length');
		expect(parseSecret(`whsec_${Buffer.alloc(24, 7).toString('base64')}`)).toHaveLength(24);
		expect(parseSecret(`whsec_${Buffer.alloc(64, 7).toString('base64')}`)).toHaveLength(64);
		expect(code(`whsec_${Buffer.alloc(65, 7).toString('base64')}`)).toBe('invalid-length');
		expect(code(`whsec_${Buffer.alloc(1, 7).toString('base64')}`)).toBe('invalid-length');
	});

	test.each([
		['a character outside the alphabet', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS!'],
		['URL-safe letters', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLa-_'],
		['inner whitespace', 'whsec_MfKQ9r8GKYqrTwjU PD8ILPZIo2LaLaSw'],
		['trailing newline', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n'],
		['leading space', 'whsec_ MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
		['padding on a full group', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw='],
		['too much padding', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwBA==='],
		['too little padding', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwBA='],
		['padding in the middle', 'whsec_MfKQ9r8GKYqr=wjUPD8ILPZIo2LaLaSw'],
		['a length of 4n+1 data characters', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwB'],
		[
			'non-zero trailing bits (python test secret "...SwBr")',
			'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwBr==',
		],
		['non-zero trailing bits, 1 pad', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwBrB='],
		['only padding', 'whsec_===='],
	])('rejects %s', (_name, secret) => {
		expect(code(secret)).toBe('invalid-base64');
	});

	test('accepts canonical unpadded base64 as the same key as padded', () => {
		const padded = `whsec_${Buffer.alloc(32, 0xab).toString('base64')}`;
		expect(padded.endsWith('=')).toBe(true);
		expect(parseSecret(padded.replace(/=+$/, ''))).toEqual(parseSecret(padded));
		const twoPad = `whsec_${Buffer.alloc(25, 0xcd).toString('base64')}`;
		expect(twoPad.endsWith('==')).toBe(true);
		expect(parseSecret(twoPad.replace(/=+$/, ''))).toEqual(parseSecret(twoPad));
	});

	test('property: every key of 24..64 bytes round-trips through Buffer base64 (what senders produce)', () => {
		fc.assert(
			fc.property(fc.uint8Array({ minLength: 24, maxLength: 64 }), (bytes) => {
				const key = Buffer.from(bytes);
				expect(parseSecret(`whsec_${key.toString('base64')}`)).toEqual(key);
				expect(parseSecret(`whsec_${key.toString('base64').replace(/=+$/, '')}`)).toEqual(key);
			}),
		);
	});
});

describe('verifyWebhook: timestamp window', () => {
	test.each([
		[-301, 'timestamp-too-old'],
		[301, 'timestamp-too-new'],
	] as const)('timestamp now%+d s is rejected', (offset, reason) => {
		const { input } = delivery({ timestamp: NOW + offset });
		expectFailure(verifyWebhook(input), reason);
	});

	test.each([-300, -1, 0, 1, 300])('timestamp now%+d s is accepted', (offset) => {
		const { input } = delivery({ timestamp: NOW + offset });
		expect(verifyWebhook(input)).toMatchObject({ ok: true, timestamp: NOW + offset });
	});

	test('a custom tolerance applies', () => {
		const { input } = delivery({ timestamp: NOW - 61 });
		expectFailure(verifyWebhook({ ...input, toleranceSeconds: 60 }), 'timestamp-too-old');
		expect(verifyWebhook({ ...input, toleranceSeconds: 61 }).ok).toBe(true);
	});

	test('a correctly signed millisecond timestamp is rejected as too new', () => {
		const { input } = delivery({ timestamp: NOW * 1000 });
		expectFailure(verifyWebhook(input), 'timestamp-too-new');
	});

	test.each([
		['plus sign', `+${NOW}`],
		['minus sign', `-${NOW}`],
		['decimal fraction', `${NOW}.0`],
		['exponent', '1.7e9'],
		['hex', '0x6553F100'],
		['leading zero', `0${NOW}`],
		['leading space', ` ${NOW}`],
		['trailing space', `${NOW} `],
		['trailing newline', `${NOW}\n`],
		['two values joined as Node joins duplicates', `${NOW}, ${NOW}`],
		['full-width digits', '\uff11\uff17\uff10\uff10\uff10\uff10\uff10\uff10\uff10\uff10'],
		['more digits than a safe integer', '1'.repeat(17)],
		['letters after digits (parseInt would accept)', `${NOW}abc`],
	])('a timestamp with %s is rejected', (_name, timestamp) => {
		const key = parseSecret(randomSecret());
		const body = Buffer.from('{}');
		// signed over the exact header text, so only the format rule can reject it
		const signature = `v1,${crypto.createHmac('sha256', key).update(`evt_1.${timestamp}.`).update(body).digest('base64')}`;
		const headers = headersOf('evt_1', timestamp, signature);
		expectFailure(
			verifyWebhook({ headers, rawBody: body, secrets: [key], nowSeconds: NOW }),
			'bad-timestamp',
		);
	});
});

describe('verifyWebhook: headers', () => {
	test.each(['webhook-id', 'webhook-timestamp', 'webhook-signature'])(
		'%s empty is missing',
		(name) => {
			const { input } = delivery();
			expectFailure(
				verifyWebhook({ ...input, headers: { ...input.headers, [name]: '' } }),
				'missing-header',
			);
		},
	);

	test.each(['webhook-id', 'webhook-timestamp', 'webhook-signature'])(
		'%s given twice (array) is rejected',
		(name) => {
			const { input } = delivery();
			const value = input.headers[name] as string;
			expectFailure(
				verifyWebhook({ ...input, headers: { ...input.headers, [name]: [value, value] } }),
				'duplicate-header',
			);
		},
	);

	test('a one-element array is the same as a string; an empty array is missing', () => {
		const { input } = delivery();
		const id = input.headers['webhook-id'] as string;
		expect(verifyWebhook({ ...input, headers: { ...input.headers, 'webhook-id': [id] } }).ok).toBe(
			true,
		);
		expectFailure(
			verifyWebhook({ ...input, headers: { ...input.headers, 'webhook-id': [] } }),
			'missing-header',
		);
	});

	test('header names are the lower-case ones Node gives', () => {
		const { input } = delivery();
		const headers = {
			'Webhook-Id': input.headers['webhook-id'],
			'webhook-timestamp': input.headers['webhook-timestamp'],
			'webhook-signature': input.headers['webhook-signature'],
		};
		expectFailure(verifyWebhook({ ...input, headers }), 'missing-header');
	});

	test('failure messages never contain the signature', () => {
		const { input, signature } = delivery();
		const result = verifyWebhook({ ...input, secrets: [parseSecret(randomSecret())] });
		expectFailure(result, 'signature-mismatch');
		expect(JSON.stringify(result)).not.toContain(signature.slice(3));
	});
});

describe('verifyWebhook: signature entries', () => {
	test('v1a and v2 entries are ignored, even when they carry the right bytes', () => {
		const { input, signature } = delivery();
		const bytes = signature.slice(3);
		const only = (header: string) =>
			verifyWebhook({ ...input, headers: { ...input.headers, 'webhook-signature': header } });
		expectFailure(only(`v1a,${bytes} v2,${bytes}`), 'no-v1-signature');
		expectFailure(only(`V1,${bytes}`), 'no-v1-signature');
		expectFailure(only(`${bytes}`), 'no-v1-signature');
		expectFailure(only(' '), 'no-v1-signature');
		expect(only(`v1a,${bytes} v2,${bytes} ${signature}`).ok).toBe(true);
	});

	test('multiple entries with one valid, in any position, with extra spaces', () => {
		const { input, signature } = delivery();
		const wrong = `v1,${crypto.randomBytes(32).toString('base64')}`;
		for (const header of [
			`${signature} ${wrong} ${wrong}`,
			`${wrong} ${signature} ${wrong}`,
			`${wrong} ${wrong} ${signature}`,
			`  ${wrong}   ${signature}  `,
		]) {
			expect(
				verifyWebhook({ ...input, headers: { ...input.headers, 'webhook-signature': header } }).ok,
			).toBe(true);
		}
	});

	const ALPHABET64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

	/** a delivery whose signature has a + or /, so that every mangling below changes the text */
	function deliveryWithPlusOrSlash() {
		for (let i = 0; ; i++) {
			const d = delivery({ id: `evt_${i}` });
			if (/[+/]/.test(d.signature)) return d;
		}
	}

	test.each([
		['unpadded', false, (b64: string) => b64.replace(/=$/, '')],
		[
			'in the URL-safe alphabet',
			true,
			(b64: string) => b64.replace(/\+/g, '-').replace(/\//g, '_'),
		],
		[
			'non-canonical in its last character',
			true,
			(b64: string) => b64.slice(0, 42) + ALPHABET64[ALPHABET64.indexOf(b64[42]) | 1] + '=',
		],
		[
			'followed by a comma (Node joins duplicate headers with ", ")',
			true,
			(b64: string) => `${b64},`,
		],
		['followed by an extra character', false, (b64: string) => `${b64}A`],
		['split by a tab', true, (b64: string) => `${b64.slice(0, 10)}\t${b64.slice(10)}`],
	])('a v1 entry %s does not match', (_name, nodeDecodesSame, mangle) => {
		const { input, signature } = deliveryWithPlusOrSlash();
		const b64 = signature.slice(3);
		const mangled = mangle(b64);
		expect(mangled).not.toBe(b64);
		if (nodeDecodesSame) {
			// Buffer.from(..., 'base64') would have accepted it: the strict decoder is what rejects it
			expect(Buffer.from(mangled, 'base64')).toEqual(Buffer.from(b64, 'base64'));
		}
		expectFailure(
			verifyWebhook({
				...input,
				headers: { ...input.headers, 'webhook-signature': `v1,${mangled}` },
			}),
			'signature-mismatch',
		);
	});

	test('Node-joined duplicate signature headers still find the valid entry', () => {
		const { input, signature } = delivery();
		const joined = `v1,${crypto.randomBytes(32).toString('base64')}, ${signature}`;
		expect(
			verifyWebhook({ ...input, headers: { ...input.headers, 'webhook-signature': joined } }).ok,
		).toBe(true);
	});

	test('one HMAC per secret, not per entry', () => {
		const a = parseSecret(randomSecret());
		const b = parseSecret(randomSecret());
		const { input } = delivery({ keys: [a] });
		const wrong = Array.from(
			{ length: 5 },
			() => `v1,${crypto.randomBytes(32).toString('base64')}`,
		).join(' ');
		// spy on the module object the verifier calls into (not the import-star copy)
		const spy = jest.spyOn(jest.requireActual<typeof crypto>('node:crypto'), 'createHmac');
		try {
			const result = verifyWebhook({
				...input,
				secrets: [a, b],
				headers: { ...input.headers, 'webhook-signature': wrong },
			});
			expectFailure(result, 'signature-mismatch');
			expect(spy).toHaveBeenCalledTimes(2);
			spy.mockClear();
			// cheap rejections compute no HMAC at all
			expectFailure(verifyWebhook({ ...input, nowSeconds: NOW + 1000 }), 'timestamp-too-old');
			expectFailure(
				verifyWebhook({ ...input, headers: { ...input.headers, 'webhook-signature': 'v1,short' } }),
				'signature-mismatch',
			);
			expect(spy).not.toHaveBeenCalled();
		} finally {
			spy.mockRestore();
		}
	});
});

describe('verifyWebhook: secrets', () => {
	test('rotation: two secrets, either one valid', () => {
		const oldKey = parseSecret(randomSecret(24));
		const newKey = parseSecret(randomSecret(32));
		const both = delivery({ keys: [newKey, oldKey] });
		const onlyOld = delivery({ keys: [oldKey] });
		const onlyNew = delivery({ keys: [newKey] });
		for (const d of [both, onlyOld, onlyNew]) {
			expect(verifyWebhook({ ...d.input, secrets: [newKey, oldKey] }).ok).toBe(true);
			expect(verifyWebhook({ ...d.input, secrets: [oldKey, newKey] }).ok).toBe(true);
		}
		expect(verifyWebhook({ ...both.input, secrets: [newKey] }).ok).toBe(true);
		expect(verifyWebhook({ ...both.input, secrets: [oldKey] }).ok).toBe(true);
		expectFailure(verifyWebhook({ ...onlyOld.input, secrets: [newKey] }), 'signature-mismatch');
		expectFailure(verifyWebhook({ ...onlyNew.input, secrets: [oldKey] }), 'signature-mismatch');
	});

	test('unknownSignatures counts the v1 entries no given secret made (a rotation the receiver did not make)', () => {
		const ours = parseSecret(randomSecret(32));
		const theirs = parseSecret(randomSecret(32));
		const mine = parseSecret(randomSecret(32));
		expect(verifyWebhook({ ...delivery({ keys: [ours] }).input, secrets: [ours] })).toMatchObject({
			ok: true,
			unknownSignatures: 0,
		});
		expect(
			verifyWebhook({ ...delivery({ keys: [theirs, ours] }).input, secrets: [ours] }),
		).toMatchObject({ ok: true, unknownSignatures: 1 });
		expect(
			verifyWebhook({ ...delivery({ keys: [ours, mine] }).input, secrets: [mine, ours] }),
		).toMatchObject({ ok: true, unknownSignatures: 0 });
		expect(
			verifyWebhook({ ...delivery({ keys: [theirs, mine] }).input, secrets: [mine, ours] }),
		).toMatchObject({ ok: true, unknownSignatures: 1 });
	});

	test('no secret at all is its own failure', () => {
		const { input } = delivery();
		expectFailure(verifyWebhook({ ...input, secrets: [] }), 'no-secret');
	});

	test('a key Buffer changed after use is not served from a stale cache', () => {
		const key = Buffer.from(parseSecret(randomSecret()));
		const { input } = delivery({ keys: [key] });
		expect(verifyWebhook(input).ok).toBe(true);
		key[0] ^= 1;
		expectFailure(verifyWebhook(input), 'signature-mismatch');
		key[0] ^= 1;
		expect(verifyWebhook(input).ok).toBe(true);
	});

	test('shortest (24 B) and longest (64 B) keys verify', () => {
		for (const size of [24, 64]) {
			expect(verifyWebhook(delivery({ keys: [parseSecret(randomSecret(size))] }).input).ok).toBe(
				true,
			);
		}
	});
});

describe('verifyWebhook: raw body bytes', () => {
	test('a non-UTF-8 body verifies byte for byte', () => {
		const body = Buffer.from([0xff, 0xfe, 0x80, 0x00, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0x7b, 0x7d]);
		const { input, keys, signature } = delivery({ body });
		expect(verifyWebhook(input).ok).toBe(true);
		// the same text after a UTF-8 round trip (what decoding would do) no longer verifies
		const roundTripped = Buffer.from(body.toString('utf8'), 'utf8');
		expect(roundTripped.equals(body)).toBe(false);
		expectFailure(verifyWebhook({ ...input, rawBody: roundTripped }), 'signature-mismatch');
		// the library decodes a Buffer payload to a string before signing, so it signs other bytes
		const secret = `whsec_${keys[0].toString('base64')}`;
		expect(new Webhook(secret).sign('evt_1', new Date(NOW * 1000), body)).not.toBe(signature);
	});

	test('signWebhook rejects a timestamp that is not whole seconds', () => {
		const key = parseSecret(randomSecret());
		expect(() => signWebhook('evt_1', 1.5, Buffer.alloc(0), key)).toThrow(RangeError);
		expect(() => signWebhook('evt_1', -1, Buffer.alloc(0), key)).toThrow(RangeError);
		expect(() => signWebhook('evt_1', Number.NaN, Buffer.alloc(0), key)).toThrow(RangeError);
	});
});

describe('property: agreement with the standardwebhooks library', () => {
	beforeEach(() => {
		// the library reads Date.now(); freeze it so both sides see the same clock
		jest.useFakeTimers({ now: NOW * 1000 });
	});
	afterEach(() => {
		jest.useRealTimers();
	});

	const keyArb = fc.uint8Array({ minLength: 24, maxLength: 64 }).map((bytes) => Buffer.from(bytes));
	const idArb = fc.stringMatching(/^[A-Za-z0-9_.-]{1,40}$/);
	// any Unicode text: the library signs its UTF-8 bytes, exactly what arrives on the wire
	const bodyArb = fc.string({ unit: 'grapheme', maxLength: 300 });

	function libraryAccepts(secret: string, body: string, headers: Record<string, string>): boolean {
		try {
			new Webhook(secret).verify(body, headers, { jsonParse: false });
			return true;
		} catch {
			return false;
		}
	}

	test("valid deliveries signed by the library: both accept, and our signature equals the library's", () => {
		fc.assert(
			fc.property(
				keyArb,
				idArb,
				bodyArb,
				fc.integer({ min: -300, max: 300 }),
				(key, id, body, offset) => {
					const secret = `whsec_${key.toString('base64')}`;
					const timestamp = NOW + offset;
					const signature = new Webhook(secret).sign(id, new Date(timestamp * 1000), body);
					expect(signWebhook(id, timestamp, Buffer.from(body, 'utf8'), parseSecret(secret))).toBe(
						signature,
					);
					const headers = headersOf(id, timestamp, signature) as Record<string, string>;
					expect(libraryAccepts(secret, body, headers)).toBe(true);
					const ours = verifyWebhook({
						headers,
						rawBody: Buffer.from(body, 'utf8'),
						secrets: [parseSecret(secret)],
						nowSeconds: NOW,
					});
					expect(ours).toEqual({ ok: true, id, timestamp, unknownSignatures: 0 });
				},
			),
			{ numRuns: 300 },
		);
	});

	test('accept/reject decisions agree over timestamps around the window and extra entries', () => {
		const entryArb = fc.oneof(
			fc.constant('valid'),
			fc.constantFrom('v1a', 'v2', 'v0').map((v) => `${v},VALID`),
			fc
				.uint8Array({ minLength: 32, maxLength: 32 })
				.map((b) => `v1,${Buffer.from(b).toString('base64')}`),
			fc.stringMatching(/^v1,[A-Za-z0-9+/=]{0,50}$/),
		);
		fc.assert(
			fc.property(
				keyArb,
				idArb,
				bodyArb,
				fc.integer({ min: -400, max: 400 }),
				fc.array(entryArb, { minLength: 1, maxLength: 4 }),
				(key, id, body, offset, entries) => {
					const secret = `whsec_${key.toString('base64')}`;
					const timestamp = NOW + offset;
					const valid = new Webhook(secret).sign(id, new Date(timestamp * 1000), body);
					const header = entries
						.map((e) => (e === 'valid' ? valid : e.replace('VALID', valid.slice(3))))
						.join(' ');
					const headers = headersOf(id, timestamp, header) as Record<string, string>;
					const ours = verifyWebhook({
						headers,
						rawBody: Buffer.from(body, 'utf8'),
						secrets: [parseSecret(secret)],
						nowSeconds: NOW,
					});
					expect(ours.ok).toBe(libraryAccepts(secret, body, headers));
					expect(ours.ok).toBe(Math.abs(offset) <= 300 && entries.includes('valid'));
				},
			),
			{ numRuns: 300 },
		);
	});
});

describe('property: every single mutation of a valid delivery is rejected', () => {
	type Mutation =
		| { kind: 'body-bit'; index: number; bit: number }
		| { kind: 'id'; suffix: string }
		| { kind: 'timestamp'; delta: number }
		| { kind: 'secret-bit'; index: number; bit: number }
		| { kind: 'signature-char'; index: number; step: number }
		| { kind: 'signature-truncate'; length: number }
		| { kind: 'signature-version'; version: string };

	const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
		fc.record({
			kind: fc.constant('body-bit' as const),
			index: fc.nat(),
			bit: fc.integer({ min: 0, max: 7 }),
		}),
		fc.record({
			kind: fc.constant('id' as const),
			suffix: fc.string({ minLength: 1, maxLength: 3 }),
		}),
		fc.record({
			kind: fc.constant('timestamp' as const),
			delta: fc.integer({ min: -300, max: 300 }).filter((d) => d !== 0),
		}),
		fc.record({
			kind: fc.constant('secret-bit' as const),
			index: fc.nat(),
			bit: fc.integer({ min: 0, max: 7 }),
		}),
		fc.record({
			kind: fc.constant('signature-char' as const),
			index: fc.integer({ min: 0, max: 42 }),
			step: fc.integer({ min: 1, max: 63 }),
		}),
		fc.record({
			kind: fc.constant('signature-truncate' as const),
			length: fc.integer({ min: 0, max: 43 }),
		}),
		fc.record({
			kind: fc.constant('signature-version' as const),
			version: fc.constantFrom('v1a', 'v2', 'v0', 'V1', ''),
		}),
	);
	const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

	test('ours rejects each mutation', () => {
		fc.assert(
			fc.property(
				fc.uint8Array({ minLength: 24, maxLength: 64 }),
				fc.uint8Array({ minLength: 1, maxLength: 512 }),
				fc.stringMatching(/^[A-Za-z0-9_-]{1,30}$/),
				mutationArb,
				(keyBytes, bodyBytes, id, mutation) => {
					const key = Buffer.from(keyBytes);
					const body = Buffer.from(bodyBytes);
					const signature = signWebhook(id, NOW, body, key);
					const base: VerifyInput = {
						headers: headersOf(id, NOW, signature),
						rawBody: body,
						secrets: [key],
						nowSeconds: NOW,
					};
					expect(verifyWebhook(base).ok).toBe(true);

					const m = { ...base, headers: { ...base.headers } };
					const b64 = signature.slice(3);
					switch (mutation.kind) {
						case 'body-bit': {
							const copy = Buffer.from(body);
							copy[mutation.index % copy.length] ^= 1 << mutation.bit;
							m.rawBody = copy;
							break;
						}
						case 'id':
							m.headers['webhook-id'] = id + mutation.suffix;
							break;
						case 'timestamp':
							m.headers['webhook-timestamp'] = String(NOW + mutation.delta);
							break;
						case 'secret-bit': {
							const copy = Buffer.from(key);
							copy[mutation.index % copy.length] ^= 1 << mutation.bit;
							m.secrets = [copy];
							break;
						}
						case 'signature-char': {
							const i = mutation.index;
							let v = (ALPHABET.indexOf(b64[i]) + mutation.step) % 64;
							// the last data character carries 2 unused bits; keep the change in used bits
							if (i === 42) v = (ALPHABET.indexOf(b64[i]) + 4 * (1 + (mutation.step % 15))) % 64;
							m.headers['webhook-signature'] =
								`v1,${b64.slice(0, i)}${ALPHABET[v]}${b64.slice(i + 1)}`;
							break;
						}
						case 'signature-truncate':
							m.headers['webhook-signature'] = `v1,${b64.slice(0, mutation.length)}`;
							break;
						case 'signature-version':
							m.headers['webhook-signature'] = `${mutation.version},${b64}`;
							break;
					}
					expect(verifyWebhook(m).ok).toBe(false);
				},
			),
			{ numRuns: 1000 },
		);
	});
});

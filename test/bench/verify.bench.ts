/**
 * Signature verification benchmark: our verifier vs the `standardwebhooks` library's verify vs a
 * bare `crypto.createHmac` over the same bytes plus `timingSafeEqual`, in two forms: with the raw
 * Buffer key (the obvious code) and with a KeyObject made once (the real floor: no key set-up per
 * call, which is what our verifier does through its KeyObject cache).
 *
 * Run: .ci/with-node24 node -r ts-node/register/transpile-only test/bench/verify.bench.ts
 *
 * Method: one process, same inputs for all. Per body size: a warm-up, then ROUNDS rounds; within a
 * round the implementations take turns in slices of about SLICE_MS (in a random order every time) for
 * about ROUND_MS each in total; ops/s per round, the median over rounds is reported. Every call's result is
 * checked, so nothing is optimised away and a broken implementation cannot look fast.
 */

import { createHmac, createSecretKey, randomBytes, timingSafeEqual } from 'node:crypto';
import { loadavg } from 'node:os';
import { Webhook } from 'standardwebhooks';

import { parseSecret, signingKey, verifyWebhook } from '../../nodes/shared/webhookVerifier';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11);
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 250);
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 500);
const SLICE_MS = Number(process.env.BENCH_SLICE_MS ?? 20);

const SIZES: Array<[string, number]> = [
	['256 B', 256],
	['4 KB', 4 * 1024],
	['64 KB', 64 * 1024],
	['1 MB', 1024 * 1024],
];

/** An ASCII JSON body of exactly `size` bytes (valid UTF-8, so the library signs the same bytes). */
function jsonBody(size: number): Buffer {
	const head = '{"id":"evt_1","type":"order.created","pad":"';
	const tail = '"}';
	const fill = randomBytes(size)
		.toString('base64')
		.replace(/[+/=]/g, 'x')
		.slice(0, size - head.length - tail.length);
	const body = Buffer.from(head + fill + tail);
	if (body.length !== size) throw new Error(`body size ${body.length} != ${size}`);
	return body;
}

type Impl = { name: string; run: () => boolean };

function runBatch(impl: Impl, count: number): bigint {
	const start = process.hrtime.bigint();
	for (let i = 0; i < count; i++) {
		if (!impl.run()) throw new Error(`${impl.name} rejected a valid delivery`);
	}
	return process.hrtime.bigint() - start;
}

/** calls per batch so that one batch takes about `ms` */
function calibrate(impl: Impl, ms: number): number {
	let count = 1;
	for (;;) {
		const elapsed = runBatch(impl, count);
		if (elapsed >= BigInt(ms) * 1_000_000n)
			return Math.max(1, Math.round((count * ms * 1e6) / Number(elapsed)));
		count *= 2;
	}
}
/** 0..n-1 in random order (Fisher-Yates), so no implementation always runs after the same one */
function shuffled(n: number): number[] {
	const order = Array.from({ length: n }, (_, i) => i);
	for (let i = n - 1; i > 0; i--) {
		const j = Math.floor(Math.random() * (i + 1));
		[order[i], order[j]] = [order[j], order[i]];
	}
	return order;
}

function median(values: number[]): number {
	const sorted = [...values].sort((a, b) => a - b);
	const mid = sorted.length >> 1;
	return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function fmt(opsPerSecond: number): string {
	return Math.round(opsPerSecond).toLocaleString('en-US');
}

function benchSize(label: string, size: number): string {
	const secret = `whsec_${randomBytes(32).toString('base64')}`;
	const key = parseSecret(secret);
	const ourKey = signingKey(secret);
	const webhook = new Webhook(secret);
	const body = jsonBody(size);
	const id = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W';
	const timestampSeconds = Math.floor(Date.now() / 1000);
	const signature = webhook.sign(id, new Date(timestampSeconds * 1000), body.toString());
	const headers = {
		'webhook-id': id,
		'webhook-timestamp': String(timestampSeconds),
		'webhook-signature': signature,
	};
	const expected = Buffer.from(signature.slice(3), 'base64');
	const prefix = `${id}.${timestampSeconds}.`;
	const keyObject = createSecretKey(key);

	const impls: Impl[] = [
		{
			// the trigger's keys are set up once per secret (its memory of the endpoint keeps them)
			name: 'ours',
			run: () =>
				verifyWebhook({
					headers,
					rawBody: body,
					secrets: [ourKey],
					nowSeconds: Math.floor(Date.now() / 1000),
				}).ok,
		},
		{
			name: 'standardwebhooks',
			run: () => {
				// jsonParse: false so only verification is timed, not JSON.parse of the body.
				// The library takes a string or a Buffer; a Buffer is decoded to a string first, so
				// pass what a caller with a raw body would pass.
				webhook.verify(body, headers, { jsonParse: false });
				return true;
			},
		},
		{
			name: 'bare HMAC',
			run: () => {
				const digest = createHmac('sha256', key).update(prefix).update(body).digest();
				return digest.length === expected.length && timingSafeEqual(digest, expected);
			},
		},
		{
			name: 'bare HMAC KeyObject',
			run: () => {
				const digest = createHmac('sha256', keyObject).update(prefix).update(body).digest();
				return digest.length === expected.length && timingSafeEqual(digest, expected);
			},
		},
	];

	// warm-up (JIT, key cache) and batch sizes of about SLICE_MS each
	for (const impl of impls) calibrate(impl, WARMUP_MS);
	const counts = impls.map((impl) => calibrate(impl, SLICE_MS));
	const samples = new Map<string, number[]>(impls.map((impl) => [impl.name, []]));
	// Each round interleaves the implementations in short slices, so a load change on the machine
	// hits all of them alike; a round's figure is ops / time summed over its slices.
	for (let round = 0; round < ROUNDS; round++) {
		const ops = impls.map(() => 0);
		const nanos = impls.map(() => 0n);
		const roundEnd = process.hrtime.bigint() + BigInt(ROUND_MS * impls.length) * 1_000_000n;
		while (process.hrtime.bigint() < roundEnd) {
			for (const j of shuffled(impls.length)) {
				nanos[j] += runBatch(impls[j], counts[j]);
				ops[j] += counts[j];
			}
		}
		impls.forEach((impl, j) => samples.get(impl.name)!.push(ops[j] / (Number(nanos[j]) / 1e9)));
	}
	const ours = median(samples.get('ours')!);
	const lib = median(samples.get('standardwebhooks')!);
	const bare = median(samples.get('bare HMAC')!);
	const bareKeyObject = median(samples.get('bare HMAC KeyObject')!);
	return (
		`| ${label} | ${fmt(ours)} | ${fmt(lib)} | ${fmt(bare)} | ${fmt(bareKeyObject)} ` +
		`| ${(ours / lib).toFixed(1)}x | ${(bare / ours).toFixed(2)}x | ${(bareKeyObject / ours).toFixed(2)}x |`
	);
}

function main(): void {
	console.log(
		`Node ${process.version}, ${process.platform}/${process.arch}; ${ROUNDS} rounds x ${ROUND_MS} ms per implementation in ${SLICE_MS} ms interleaved slices, median ops/s; load average ${loadavg()
			.map((l) => l.toFixed(2))
			.join(' ')}\n`,
	);
	console.log(
		'| body | ours (ops/s) | standardwebhooks (ops/s) | bare HMAC, Buffer key (ops/s) | bare HMAC, KeyObject (ops/s) ' +
			'| ours vs library (speed-up) | ours time / bare Buffer-key time | ours time / bare KeyObject time |',
	);
	console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
	for (const [label, size] of SIZES) console.log(benchSize(label, size));
}

main();

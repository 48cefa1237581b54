/**
 * What the option History Size costs per event: n8n's deduplication helper (2.41.1
 * `deduplication-helper.js` handleHashedItems) reads the node's `processed_data` row, parses its
 * JSON, builds a Set of it, appends the new hash, trims it to maxEntries and writes it back as JSON.
 * This measures that CPU work for rows of each size (the database's own read and write come on top).
 *
 *   .ci/with-node24 node -r ts-node/register/transpile-only test/bench/historySize.bench.ts
 */
import { createHash } from 'node:crypto';

// the first size twice: its first pass warms the JIT up and is not printed
const sizes = [1_000, 1_000, 2_000, 5_000, 10_000];
const rounds = 200;
const md5 = (value: string) => createHash('md5').update(value).digest('base64');

for (const [index, size] of sizes.entries()) {
	const row = JSON.stringify({
		mode: 'entries',
		data: Array.from({ length: size }, (_, i) => md5(`order:${i}`)),
	});
	const started = process.hrtime.bigint();
	for (let round = 0; round < rounds; round++) {
		const value = JSON.parse(row) as { data: string[] };
		const seen = new Set(value.data);
		const hash = md5(`order:new-${round}`);
		if (!seen.has(hash)) value.data.push(hash);
		value.data.splice(0, value.data.length - size);
		JSON.stringify(value);
	}
	const ms = Number(process.hrtime.bigint() - started) / 1e6 / rounds;
	if (index > 0)
		console.log(
			`History Size ${size}: row ${row.length} bytes, ${ms.toFixed(3)} ms of CPU per event`,
		);
}

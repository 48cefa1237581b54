/**
 * Throughput and latency of the Marketplace Trigger against n8n's built-in Webhook node, in ONE
 * real n8n 2.41.1 server with this package loaded (test/e2e/n8n.ts), both workflows active at once:
 *
 *   A. Marketplace Trigger (order.created) -> No Operation   /webhook/<webhookId>/webhook
 *   B. Webhook node (POST, respond immediately) -> No Operation   /webhook/<path>
 *
 * The same signed deliveries (Standard Webhooks headers signed with the endpoint's secret read from
 * the sandbox's control API, a distinct webhook-id each) go to both URLs from a keep-alive load
 * generator at a fixed concurrency, in alternating slices (A B, B A, A B, ...) so drift of the
 * shared machine hits both alike. Both nodes answer before their execution runs ("onReceived"), so
 * after each slice the script also waits until n8n has finished that slice's executions: the
 * end-to-end rate counts that drain, the response rate does not.
 *
 * Run: .ci/with-node24 npm run build && \
 *      .ci/with-node24 node -r ts-node/register/transpile-only test/bench/trigger.bench.ts [--per-level 2000] [--slice 250] [--levels 1,4,16] [--env KEY=VALUE,...] [--out file.md]
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import {
	activate,
	allExecutions,
	bootBench,
	codeVersion,
	endpointFor,
	eventIdOf,
	fmt,
	keepAliveAgent,
	orderCreatedEvent,
	percentile,
	pool,
	post,
	signedDelivery,
	waitForExecutions,
	triggerWorkflow,
	webhookNodeWorkflow,
	type Delivery,
} from './n8nBench';

const COMMAND = '.ci/with-node24 node -r ts-node/register/transpile-only test/bench/trigger.bench.ts';
const RESULTS = join(__dirname, 'results', 'trigger.md');

function arg(name: string, fallback: string): string {
	const i = process.argv.indexOf(`--${name}`);
	return i >= 0 ? process.argv[i + 1] : fallback;
}

interface Tally {
	sent: number;
	ok: number;
	other: Record<string, number>;
	latencies: number[];
	sendMs: number;
	drainMs: number;
}
const newTally = (): Tally => ({ sent: 0, ok: 0, other: {}, latencies: [], sendMs: 0, drainMs: 0 });

async function main() {
	const perLevel = Number(arg('per-level', '2000'));
	const sliceSize = Number(arg('slice', '250'));
	const levels = arg('levels', '1,4,16').split(',').map(Number);
	const started = Date.now();

	// --env KEY=VALUE[,KEY=VALUE]: extra n8n environment for a variant run (e.g. to test a cause)
	const extraEnv = Object.fromEntries(
		arg('env', '')
			.split(',')
			.filter(Boolean)
			.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
	);
	const out = arg('out', RESULTS);
	const bench = await bootBench({ env: extraEnv });
	const { n8n } = bench;
	const ours = triggerWorkflow('benchMktTrigger1', randomUUID(), bench.credentialId);
	const theirs = webhookNodeWorkflow('benchWebhookNod1', `bench-${randomUUID()}`);
	await n8n.createWorkflow(ours);
	await n8n.createWorkflow(theirs);
	await activate(bench, ours.id);
	await activate(bench, theirs.id);
	const nodes = {
		ours: { workflowId: ours.id, url: `${n8n.baseUrl}/webhook/${(ours.nodes[0] as { webhookId: string }).webhookId}/webhook`, label: 'Marketplace Trigger' },
		theirs: { workflowId: theirs.id, url: `${n8n.baseUrl}/webhook/${(theirs.nodes[0] as { parameters: { path: string } }).parameters.path}`, label: 'Webhook node' },
	} as const;
	const { secret } = await endpointFor(bench, nodes.ours.url);
	if (!secret) throw new Error('the sandbox holds no secret for the endpoint');
	console.log(`[bench] n8n ${n8n.baseUrl} up after ${((Date.now() - started) / 1000).toFixed(1)} s; ours ${nodes.ours.url}; theirs ${nodes.theirs.url}`);

	const expected = { ours: 0, theirs: 0 };
	const sendSlice = async (which: 'ours' | 'theirs', deliveries: Delivery[], concurrency: number, tally: Tally) => {
		const agent = keepAliveAgent(concurrency);
		const t = performance.now();
		const results = await pool(concurrency, deliveries.length, async (i) => await post(agent, nodes[which].url, deliveries[i]));
		tally.sendMs += performance.now() - t;
		agent.destroy();
		for (const r of results) {
			tally.sent++;
			tally.latencies.push(r.ms);
			if (r.status >= 200 && r.status < 300) tally.ok++;
			else tally.other[String(r.status || r.error)] = (tally.other[String(r.status || r.error)] ?? 0) + 1;
		}
		expected[which] += results.filter((r) => r.status >= 200 && r.status < 300).length;
		tally.drainMs += await waitForExecutions(n8n, nodes[which].workflowId, expected[which]);
	};
	const makeSlice = (count: number) => Array.from({ length: count }, (_, i) => signedDelivery(secret, orderCreatedEvent(undefined, 1001 + (i % 96))));

	// Warm-up (not counted in the table): JIT, SQLite pages, connection set-up.
	{
		const warm = makeSlice(100);
		await sendSlice('ours', warm, 4, newTally());
		await sendSlice('theirs', warm, 4, newTally());
	}

	const rows: Array<{ level: number; ours: Tally; theirs: Tally }> = [];
	for (const level of levels) {
		const tallies = { ours: newTally(), theirs: newTally() };
		const slices = Math.ceil(perLevel / sliceSize);
		for (let s = 0; s < slices; s++) {
			const deliveries = makeSlice(Math.min(sliceSize, perLevel - s * sliceSize));
			const order: Array<'ours' | 'theirs'> = s % 2 === 0 ? ['ours', 'theirs'] : ['theirs', 'ours'];
			for (const which of order) await sendSlice(which, deliveries, level, tallies[which]);
		}
		rows.push({ level, ...tallies });
		const rate = (t: Tally) => (t.ok / ((t.sendMs + t.drainMs) / 1000)).toFixed(1);
		console.log(`[bench] concurrency ${level}: ours ${rate(tallies.ours)}/s, webhook node ${rate(tallies.theirs)}/s (end to end)`);
	}

	// Executions through the public API: every accepted delivery made exactly one execution.
	const oursExecutions = await allExecutions(bench.api, nodes.ours.workflowId, true);
	const theirsExecutions = await allExecutions(bench.api, nodes.theirs.workflowId, false);
	const oursIds = oursExecutions.map(eventIdOf);
	const distinctOurs = new Set(oursIds.filter(Boolean)).size;
	const staticData = (await n8n.rest<{ staticData?: unknown }>('GET', `/workflows/${nodes.ours.workflowId}`)).staticData;
	const staticBytes = Buffer.byteLength(JSON.stringify(staticData ?? null));
	const notSuccess = (list: any[]) => list.filter((e) => e.status !== 'success').length;

	const lines: string[] = [];
	lines.push('# Marketplace Trigger vs n8n\'s Webhook node in one real n8n 2.41.1');
	lines.push('');
	const envArg = Object.keys(extraEnv).length ? ` --env ${Object.entries(extraEnv).map(([k, v]) => `${k}=${v}`).join(',')}` : '';
	const outArg = out === RESULTS ? '' : ` --out ${out}`;
	lines.push(`Generated by \`${COMMAND} --per-level ${perLevel} --slice ${sliceSize} --levels ${levels.join(',')}${envArg}${outArg}\` (after \`.ci/with-node24 npm run build\`) on ${new Date().toISOString()} (Node ${process.version}, ${process.platform}/${process.arch}).`);
	lines.push(`Code measured: ${codeVersion()}. Whole run ${((Date.now() - started) / 1000).toFixed(0)} s.`);
	lines.push('');
	lines.push('One n8n server (SQLite, regular mode, execution pruning off), both workflows active: A = Marketplace Trigger (order.created) -> No Operation,');
	lines.push('B = Webhook node (POST, respond immediately) -> No Operation. Each delivery is signed with the endpoint\'s secret (Standard Webhooks headers,');
	lines.push('distinct webhook-id); the same deliveries go to A and B in alternating slices (A B, B A, ...) of ' + sliceSize + ' from a keep-alive');
	lines.push('load generator at the given concurrency. Both answer before their execution runs, so after each slice the script waits until n8n');
	lines.push('has finished the slice\'s executions (polling the execution count). "end to end" = accepted / (send time + that drain); "responses" =');
	lines.push('accepted / send time only. Latency = one request\'s response time at the client. Noisy shared 2-core machine: compare A with B');
	lines.push('within a row only.');
	lines.push('');
	lines.push('| concurrency | node | deliveries | 2xx | other | end to end (/s) | responses (/s) | p50 (ms) | p99 (ms) | A / B end to end | A / B responses |');
	lines.push('|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|');
	for (const row of rows) {
		const e2e = (t: Tally) => t.ok / ((t.sendMs + t.drainMs) / 1000);
		const resp = (t: Tally) => t.ok / (t.sendMs / 1000);
		for (const which of ['ours', 'theirs'] as const) {
			const t = row[which];
			const sorted = [...t.latencies].sort((a, b) => a - b);
			const other = Object.entries(t.other).map(([k, v]) => `${k}: ${v}`).join(', ') || '0';
			const ratio = which === 'ours' ? `**${(e2e(row.ours) / e2e(row.theirs)).toFixed(2)}x**` : '';
			const ratioResp = which === 'ours' ? `${(resp(row.ours) / resp(row.theirs)).toFixed(2)}x` : '';
			lines.push(
				`| ${row.level} | ${which === 'ours' ? 'A Marketplace Trigger' : 'B Webhook node'} | ${fmt(t.sent)} | ${fmt(t.ok)} | ${other} | ${fmt(e2e(t), 1)} | ${fmt(resp(t), 1)} | ${fmt(percentile(sorted, 50), 1)} | ${fmt(percentile(sorted, 99), 1)} | ${ratio} | ${ratioResp} |`,
			);
		}
	}
	lines.push('');
	lines.push('Target: A at least 0.9x B\'s throughput (end to end).');
	lines.push('');
	lines.push('## Executions (public API, after the run; warm-up of 100 per node included)');
	lines.push('');
	lines.push('| node | accepted (2xx) | executions | not success | distinct event ids in executions |');
	lines.push('|---|---:|---:|---:|---:|');
	lines.push(`| A Marketplace Trigger | ${fmt(expected.ours)} | ${fmt(oursExecutions.length)} | ${notSuccess(oursExecutions)} | ${fmt(distinctOurs)} |`);
	lines.push(`| B Webhook node | ${fmt(expected.theirs)} | ${fmt(theirsExecutions.length)} | ${notSuccess(theirsExecutions)} | n/a |`);
	lines.push('');
	const hasSeen = JSON.stringify(staticData ?? null).includes('"seen"');
	lines.push(
		`Static data of workflow A after the run, as n8n stored it: ${fmt(staticBytes)} bytes of JSON, ${hasSeen ? 'with' : 'WITHOUT'} the accepted-id store "seen" (it is written with every accepted delivery). ` +
			'Cause of the gap: trigger-isolate-skip-off.md (n8n acquires an expression isolate for every webhook request of a trigger other than its own Webhook node; with that skip turned off both rates are equal at concurrency 1).',
	);
	lines.push('');
	const text = lines.join('\n');
	console.log(text);
	mkdirSync(join(__dirname, 'results'), { recursive: true });
	writeFileSync(out, text);
	console.log(`[bench] wrote ${out}`);

	await n8n.stop();
	await bench.sandbox.close();
}

main().then(
	() => process.exit(0),
	(e) => {
		console.error(e);
		process.exit(1);
	},
);

/**
 * Webhook soak through a real n8n 2.41.1 (test/e2e/n8n.ts) with this package loaded: N deliveries
 * (default 5,000) to the Marketplace Trigger's production URL, in a seeded random order, at a fixed
 * concurrency:
 *
 *   80%  valid, distinct webhook-ids (each must make exactly one execution)
 *   10%  duplicates: the same webhook-id and body as a valid one, signed anew at send time (as the
 *        service's retry is); may run before, after or at the same time as the first copy
 *    5%  tampered: one body byte changed (half) or one signature character changed (half); own ids
 *    5%  stale: timestamp 301-900 s in the past, correctly signed for that timestamp; own ids
 *
 * Everything is signed at send time (the run takes longer than the 5-minute tolerance). Targets:
 * tampered and stale all 401, zero forged accepted, zero duplicate executions, zero valid events lost,
 * counted from the executions n8n stored (public API, with data: the event id of each).
 *
 * Run: .ci/with-node24 npm run build && \
 *      .ci/with-node24 node -r ts-node/register/transpile-only test/bench/soak.ts [--count 5000] [--concurrency 8] [--seed 42]
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
	shuffle,
	signedDelivery,
	triggerWorkflow,
	waitForExecutions,
	type Delivery,
} from './n8nBench';

const COMMAND = '.ci/with-node24 node -r ts-node/register/transpile-only test/bench/soak.ts';
const RESULTS = join(__dirname, 'results', 'soak.md');

function arg(name: string, fallback: string): string {
	const i = process.argv.indexOf(`--${name}`);
	return i >= 0 ? process.argv[i + 1] : fallback;
}

type Kind = 'valid' | 'duplicate' | 'tampered-body' | 'tampered-signature' | 'stale';
interface Planned {
	kind: Kind;
	event: ReturnType<typeof orderCreatedEvent>;
	staleBySeconds?: number;
}

/** Changes one character of `text` at `at` to another of the same class (keeps JSON or base64 shape). */
function flipChar(text: string, at: number): string {
	const c = text[at];
	const swapped = /[0-9]/.test(c)
		? String((Number(c) + 1) % 10)
		: c === 'A'
			? 'B'
			: /[A-Za-z]/.test(c)
				? 'A'
				: c === '+'
					? '/'
					: '+';
	return text.slice(0, at) + swapped + text.slice(at + 1);
}

function build(plan: Planned, secret: string): Delivery {
	switch (plan.kind) {
		case 'valid':
		case 'duplicate':
			return signedDelivery(secret, plan.event);
		case 'stale':
			return signedDelivery(secret, plan.event, -(plan.staleBySeconds ?? 360));
		case 'tampered-body': {
			const d = signedDelivery(secret, plan.event);
			// a digit of the order id: still valid JSON, different bytes
			const at = d.body.indexOf('"orderId":') + '"orderId":'.length;
			return { ...d, body: flipChar(d.body, at) };
		}
		case 'tampered-signature': {
			const d = signedDelivery(secret, plan.event);
			const sig = d.headers['webhook-signature'];
			return { ...d, headers: { ...d.headers, 'webhook-signature': flipChar(sig, 10) } };
		}
	}
}

async function main() {
	const count = Number(arg('count', '5000'));
	const concurrency = Number(arg('concurrency', '8'));
	const seed = Number(arg('seed', '42'));
	const started = Date.now();

	const nDuplicate = Math.round(count * 0.1);
	const nTampered = Math.round(count * 0.05);
	const nStale = Math.round(count * 0.05);
	const nValid = count - nDuplicate - nTampered - nStale;

	const bench = await bootBench();
	const { n8n } = bench;
	const wf = triggerWorkflow('soakMktTrigger01', randomUUID(), bench.credentialId);
	await n8n.createWorkflow(wf);
	await activate(bench, wf.id);
	const url = `${n8n.baseUrl}/webhook/${(wf.nodes[0] as { webhookId: string }).webhookId}/webhook`;
	const { secret } = await endpointFor(bench, url);
	if (!secret) throw new Error('the sandbox holds no secret for the endpoint');
	const bootMs = Date.now() - started;

	const valid: Planned[] = Array.from({ length: nValid }, (_, i) => ({
		kind: 'valid',
		event: orderCreatedEvent(`evt_valid_${i}_${randomUUID()}`),
	}));
	const plans: Planned[] = [...valid];
	for (let i = 0; i < nDuplicate; i++)
		plans.push({ kind: 'duplicate', event: valid[(i * 7919) % nValid].event });
	for (let i = 0; i < nTampered; i++)
		plans.push({
			kind: i % 2 === 0 ? 'tampered-body' : 'tampered-signature',
			event: orderCreatedEvent(`evt_tampered_${i}_${randomUUID()}`),
		});
	for (let i = 0; i < nStale; i++)
		plans.push({
			kind: 'stale',
			event: orderCreatedEvent(`evt_stale_${i}_${randomUUID()}`),
			staleBySeconds: 301 + ((i * 37) % 600),
		});
	const order = shuffle(plans, seed);

	const agent = keepAliveAgent(concurrency);
	const sendStarted = performance.now();
	let done = 0;
	const results = await pool(concurrency, order.length, async (i) => {
		const r = await post(agent, url, build(order[i], secret));
		if (++done % 500 === 0)
			console.log(
				`[soak] ${done}/${order.length} sent, ${((performance.now() - sendStarted) / 1000).toFixed(0)} s`,
			);
		return r;
	});
	const sendMs = performance.now() - sendStarted;
	agent.destroy();

	// Status per kind. A duplicate and its first copy are told apart only by execution counts.
	const kinds: Kind[] = ['valid', 'duplicate', 'tampered-body', 'tampered-signature', 'stale'];
	const byKind = new Map<
		Kind,
		{ sent: number; statuses: Record<string, number>; latencies: number[] }
	>();
	for (const k of kinds) byKind.set(k, { sent: 0, statuses: {}, latencies: [] });
	const acceptedValidIds = new Set<string>();
	results.forEach((r, i) => {
		const t = byKind.get(order[i].kind)!;
		t.sent++;
		t.latencies.push(r.ms);
		const key = String(r.status || r.error);
		t.statuses[key] = (t.statuses[key] ?? 0) + 1;
		if (
			(order[i].kind === 'valid' || order[i].kind === 'duplicate') &&
			r.status >= 200 &&
			r.status < 300
		)
			acceptedValidIds.add(order[i].event.id);
	});

	const drainMs = await waitForExecutions(n8n, wf.id, acceptedValidIds.size);
	// a little longer: anything beyond the expected count (a duplicate execution) must show too
	await new Promise((r) => setTimeout(r, 3000));
	const executions = await allExecutions(bench.api, wf.id, true);
	const ids = executions.map(eventIdOf);
	const perId = new Map<string, number>();
	for (const id of ids) if (id) perId.set(id, (perId.get(id) ?? 0) + 1);
	const validIds = new Set(valid.map((p) => p.event.id));
	const forgedIds = new Set(
		plans.filter((p) => p.kind !== 'valid' && p.kind !== 'duplicate').map((p) => p.event.id),
	);
	const forgedExecuted = [...perId.keys()].filter((id) => forgedIds.has(id)).length;
	const duplicateExecutions = [...perId.values()].reduce((s, n) => s + (n > 1 ? n - 1 : 0), 0);
	const lost = [...validIds].filter((id) => !perId.has(id)).length;
	const unknownIds = [...perId.keys()].filter(
		(id) => !validIds.has(id) && !forgedIds.has(id),
	).length;
	const noId = ids.filter((id) => !id).length;
	const notSuccess = executions.filter((e) => e.status !== 'success').length;
	const forgedAccepted = ['tampered-body', 'tampered-signature', 'stale'].reduce((s, k) => {
		const st = byKind.get(k as Kind)!.statuses;
		return (
			s +
			Object.entries(st)
				.filter(([code]) => code !== '401')
				.reduce((a, [, n]) => a + n, 0)
		);
	}, 0);
	const validNot2xx = [...validIds].filter((id) => !acceptedValidIds.has(id)).length;

	const lines: string[] = [];
	lines.push('# Webhook soak through a real n8n 2.41.1');
	lines.push('');
	lines.push(
		`Generated by \`${COMMAND} --count ${count} --concurrency ${concurrency} --seed ${seed}\` (after \`.ci/with-node24 npm run build\`) on ${new Date().toISOString()} (Node ${process.version}, ${process.platform}/${process.arch}).`,
	);
	lines.push(`Code measured: ${codeVersion()}.`);
	lines.push('');
	lines.push(
		`One n8n server with the package, one active workflow (Marketplace Trigger on order.created -> No Operation), its endpoint registered`,
	);
	lines.push(
		`at the sandbox on activation; deliveries signed with that endpoint's secret (read from the sandbox's control API) at send time,`,
	);
	lines.push(
		`posted to the production URL in a seeded random order (seed ${seed}) by ${concurrency} keep-alive workers. Duplicates re-send the`,
	);
	lines.push(
		'webhook-id and body of a valid delivery (signed anew, as a service retry is) and may race their first copy. Tampered and stale',
	);
	lines.push(
		'deliveries carry ids of their own, so any execution with such an id is a forgery accepted.',
	);
	lines.push('');
	lines.push(
		`Durations: n8n boot + setup + activation ${(bootMs / 1000).toFixed(1)} s; sending ${(sendMs / 1000).toFixed(1)} s (${fmt(count / (sendMs / 1000), 1)} deliveries/s); executions finished ${(drainMs / 1000).toFixed(1)} s after the last response; whole run ${((Date.now() - started) / 1000).toFixed(0)} s.`,
	);
	lines.push('');
	lines.push('## Responses');
	lines.push('');
	lines.push('| kind | sent | responses (status: count) | expected | p50 (ms) | p99 (ms) |');
	lines.push('|---|---:|---|---|---:|---:|');
	const expectedOf: Record<Kind, string> = {
		valid: '2xx',
		duplicate: '2xx (no run)',
		'tampered-body': '401',
		'tampered-signature': '401',
		stale: '401',
	};
	for (const k of kinds) {
		const t = byKind.get(k)!;
		const sorted = [...t.latencies].sort((a, b) => a - b);
		const st = Object.entries(t.statuses)
			.map(([code, n]) => `${code}: ${fmt(n)}`)
			.join(', ');
		lines.push(
			`| ${k} | ${fmt(t.sent)} | ${st} | ${expectedOf[k]} | ${fmt(percentile(sorted, 50), 1)} | ${fmt(percentile(sorted, 99), 1)} |`,
		);
	}
	lines.push('');
	lines.push('## Executions (public API, with data)');
	lines.push('');
	lines.push('| measure | value | target | met |');
	lines.push('|---|---:|---:|:-:|');
	const row = (label: string, value: number, target: number) =>
		lines.push(
			`| ${label} | ${fmt(value)} | ${fmt(target)} | ${value === target ? 'yes' : '**no**'} |`,
		);
	row('valid distinct event ids sent', validIds.size, nValid);
	row('executions stored', executions.length, nValid);
	row('executions not successful', notSuccess, 0);
	row('distinct event ids in executions', perId.size, nValid);
	row('forged deliveries answered other than 401', forgedAccepted, 0);
	row('forged (tampered or stale) ids that ran', forgedExecuted, 0);
	row('duplicate executions (an id run more than once)', duplicateExecutions, 0);
	row('valid events lost (never ran)', lost, 0);
	row('valid events never answered 2xx', validNot2xx, 0);
	row('executions with an unknown id or none', unknownIds + noId, 0);
	lines.push('');
	const text = lines.join('\n');
	console.log(text);
	mkdirSync(join(__dirname, 'results'), { recursive: true });
	writeFileSync(RESULTS, text);
	console.log(`[soak] wrote ${RESULTS}`);

	mkdirSync(join(__dirname, '../../tmp'), { recursive: true });
	writeFileSync(join(__dirname, '../../tmp/soak-n8n.log'), n8n.logs());
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

/**
 * n8n down while the sandbox delivers, then back (a fault test through a real n8n 2.41.1):
 *
 *  1. One n8n (test/e2e/n8n.ts) with the package, a workflow Marketplace Trigger (order.created) ->
 *     No Operation, activated: its endpoint is registered at the sandbox.
 *  2. n8n stopped. K orders created in the sandbox: each order.created delivery's first attempt fails
 *     (connection refused). The virtual clock moved 60 s: the second attempts fail too.
 *  3. n8n started again on the same port and folder (the endpoint URL is fixed; a restart keeps the
 *     workflow active and its webhook registered).
 *  4. The clock moved 300 s: the third attempts reach n8n and are delivered. Then 1,800 s and
 *     7,200 s more: nothing is sent again.
 *  Also: one event delivered before the stop is redelivered after the start (same webhook-id and
 *  body): it must not run again (the trigger's de-duplication has to survive the restart).
 *
 * Checked: every event ran exactly once (executions through the public API, by event id), and the
 * attempt times in the sandbox's attempt log (virtual clock) are +60 s and +300 s after the previous
 * attempt (the service's retry gaps: 1 m, 5 m, 30 m, 2 h, ...).
 *
 * Run: .ci/with-node24 npm run build && \
 *      .ci/with-node24 node -r ts-node/register/transpile-only test/bench/outage.ts [--orders 20]
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort, startN8n } from '../e2e/n8n';
import {
	activate,
	allExecutions,
	BENCH_ENV,
	bootBench,
	codeVersion,
	eventIdOf,
	fmt,
	repoRoot,
	sleep,
	triggerWorkflow,
	waitForExecutions,
} from './n8nBench';

const COMMAND = '.ci/with-node24 node -r ts-node/register/transpile-only test/bench/outage.ts';
const RESULTS = join(__dirname, 'results', 'outage.md');
const SCHEDULE = [60, 300, 1800, 7200, 18_000, 36_000, 86_400];

function arg(name: string, fallback: string): string {
	const i = process.argv.indexOf(`--${name}`);
	return i >= 0 ? process.argv[i + 1] : fallback;
}

async function main() {
	const orders = Number(arg('orders', '20'));
	const started = Date.now();
	const port = await freePort();
	const userFolder = mkdtempSync(join(tmpdir(), 'n8n-outage-'));
	const timings: Array<[string, number]> = [];
	const time = async <T>(label: string, fn: () => Promise<T>): Promise<T> => {
		const t = Date.now();
		try {
			return await fn();
		} finally {
			timings.push([label, Date.now() - t]);
		}
	};

	const bench = await time('n8n boot + owner + credential', () => bootBench({ port, userFolder }));
	const { sandbox } = bench;
	let n8n = bench.n8n;
	const wf = triggerWorkflow('outageMktTrig01', randomUUID(), bench.credentialId);
	await n8n.createWorkflow(wf);
	await time('activate (endpoint registered)', () => activate(bench, wf.id));
	const url = `${n8n.baseUrl}/webhook/${(wf.nodes[0] as { webhookId: string }).webhookId}/webhook`;
	const endpoint = (await sandbox.control.endpoints()).find((e) => e.url === url);
	if (!endpoint) throw new Error(`no endpoint for ${url}`);

	// One event delivered while n8n is up: redelivered after the restart, it must not run again.
	const before = await sandbox.control.createOrder({ brandId: 1 });
	await waitForExecutions(n8n, wf.id, 1, 60_000);
	const staticDataOf = async () =>
		JSON.stringify(
			(await n8n.rest<{ staticData?: unknown }>('GET', `/workflows/${wf.id}`)).staticData ?? null,
		);
	const staticBefore = await staticDataOf();

	// 2. down
	await time('n8n stop', () => n8n.stop());
	const eventIds: string[] = [];
	const deliveryIds: number[] = [];
	for (let i = 0; i < orders; i++) {
		const created = await sandbox.control.createOrder({ brandId: 1 + (i % 5) });
		eventIds.push(created.event.id);
		deliveryIds.push(...created.deliveryIds);
	}
	const attemptsOf = async () =>
		(await sandbox.control.deliveries(endpoint.id)).filter((d) => deliveryIds.includes(d.id));
	const waitAttempts = async (n: number, what: string) => {
		const deadline = Date.now() + 60_000;
		while (Date.now() < deadline) {
			const list = await attemptsOf();
			if (
				list.length === deliveryIds.length &&
				list.every(
					(d) =>
						d.attemptLog.length >= n && d.attemptLog.every((a) => a.statusCode !== null || a.error),
				)
			)
				return list;
			await sleep(100);
		}
		throw new Error(`timed out waiting for ${what}`);
	};
	const afterFirst = await time('first attempts (n8n down)', () =>
		waitAttempts(1, 'the first attempts'),
	);
	const advance = async (seconds: number) =>
		(await sandbox.control.advanceClock(seconds)).attempts.length;
	const ranAt60 = await advance(60);
	const afterSecond = await time('second attempts (clock +60 s, n8n down)', () =>
		waitAttempts(2, 'the second attempts'),
	);

	// 3. back, same port and folder
	n8n = await time('n8n start again (same port, folder, database)', () =>
		startN8n({ packageRoot: repoRoot, port, userFolder, env: BENCH_ENV }),
	);
	await n8n.login();
	await time('publication status after the start', () => n8n.waitForActivation(wf.id));
	const api = await n8n.publicApi();
	const endpointsAfterStart = (await sandbox.control.endpoints()).length;

	// 4. retry schedule
	const ranAt300 = await advance(300);
	await time('third attempts (clock +300 s, n8n up) and executions finished', async () => {
		await waitAttempts(3, 'the third attempts');
		await waitForExecutions(n8n, wf.id, orders, 120_000);
	});
	// the event delivered before the stop, sent again by the service (same webhook-id and body)
	const redelivered = await sandbox.control.redeliver(before.deliveryIds[0]);
	const redeliveryStatus = redelivered.attemptLog[redelivered.attemptLog.length - 1].statusCode;
	const staticAfter = await staticDataOf();
	const ranAt1800 = await advance(1800);
	const ranAt7200 = await advance(7200);
	await sleep(2000);
	const finalDeliveries = await attemptsOf();
	const executions = await allExecutions(api, wf.id, true);
	const ran = executions.map(eventIdOf);
	const perId = new Map<string, number>();
	for (const id of ran) if (id) perId.set(id, (perId.get(id) ?? 0) + 1);
	const exactlyOnce = eventIds.filter((id) => perId.get(id) === 1).length;
	const extra = executions.length - exactlyOnce - (perId.get(before.event.id) ?? 0);
	const seenStored = (json: string) => (json.includes('"known"') ? 'yes' : 'no');

	// attempt spacing on the virtual clock
	const gaps: number[][] = finalDeliveries.map((d) =>
		d.attemptLog.slice(1).map((a, i) => (a.atMs - d.attemptLog[i].atMs) / 1000),
	);
	const onSchedule = gaps.filter((g) => g.every((s, i) => s === SCHEDULE[i])).length;
	const example = finalDeliveries[0];

	const lines: string[] = [];
	lines.push('# n8n down while the sandbox delivers, then back');
	lines.push('');
	lines.push(
		`Generated by \`${COMMAND} --orders ${orders}\` (after \`.ci/with-node24 npm run build\`) on ${new Date().toISOString()} (Node ${process.version}, ${process.platform}/${process.arch}).`,
	);
	lines.push(
		`Code measured: ${codeVersion()}. Whole run ${((Date.now() - started) / 1000).toFixed(0)} s.`,
	);
	lines.push('');
	lines.push(
		`Workflow: Marketplace Trigger (order.created) -> No Operation, active; n8n stopped; ${orders} orders created in the sandbox; the virtual clock`,
	);
	lines.push(
		'moved +60 s (n8n still down), n8n started again on the same port and folder, clock +300 s, then +1,800 s and +7,200 s.',
	);
	lines.push('');
	lines.push('## Result');
	lines.push('');
	lines.push('| measure | value | target | met |');
	lines.push('|---|---:|---:|:-:|');
	const row = (label: string, value: number | string, target: number | string) =>
		lines.push(
			`| ${label} | ${typeof value === 'number' ? fmt(value) : value} | ${typeof target === 'number' ? fmt(target) : target} | ${value === target ? 'yes' : '**no**'} |`,
		);
	row('events (order.created deliveries)', deliveryIds.length, orders);
	row(
		'first attempts failed with a connection error',
		afterFirst.filter((d) => d.attemptLog[0].statusCode === null && d.attemptLog[0].error).length,
		orders,
	);
	row('attempts run by clock +60 s (n8n down)', ranAt60, orders);
	row(
		'second attempts failed with a connection error',
		afterSecond.filter((d) => d.attemptLog[1].statusCode === null && d.attemptLog[1].error).length,
		orders,
	);
	row(
		'endpoints at the sandbox after the start (none created, none deleted)',
		endpointsAfterStart,
		1,
	);
	row('attempts run by clock +300 s (n8n up)', ranAt300, orders);
	row(
		'deliveries Delivered after the third attempt',
		finalDeliveries.filter(
			(d) =>
				d.status === 'Delivered' && d.attemptLog.length === 3 && d.attemptLog[2].statusCode === 200,
		).length,
		orders,
	);
	row('attempts run by clock +1,800 s and +7,200 s', ranAt1800 + ranAt7200, 0);
	row('events that ran exactly once', exactlyOnce, orders);
	row('executions beyond one per event', extra, 0);
	row('executions not successful', executions.filter((e) => e.status !== 'success').length, 0);
	row(
		"deliveries whose attempt gaps are the service's schedule (+60 s, +300 s)",
		onSchedule,
		orders,
	);
	row(
		'event delivered before the stop: executions after its redelivery post-restart',
		perId.get(before.event.id) ?? 0,
		1,
	);
	lines.push('');
	lines.push(
		`The redelivery after the restart was answered ${redeliveryStatus}. Accepted webhook-ids ("known") in the workflow's static data as n8n stored it:`,
	);
	lines.push(
		`before the stop: ${seenStored(staticBefore)} (${fmt(staticBefore.length)} bytes); after the restart and ${orders} deliveries: ${seenStored(staticAfter)} (${fmt(staticAfter.length)} bytes).`,
	);
	lines.push('');
	lines.push(
		`Attempt log of delivery ${example.id} (virtual clock; "timestamp sent" is the real Unix time the attempt was signed with):`,
	);
	lines.push('');
	lines.push('| attempt | at (virtual) | after previous (s) | timestamp sent | status | error |');
	lines.push('|---:|---|---:|---:|---:|---|');
	example.attemptLog.forEach((a, i) =>
		lines.push(
			`| ${a.number} | ${a.at} | ${i === 0 ? '' : (a.atMs - example.attemptLog[i - 1].atMs) / 1000} | ${a.timestampSent} | ${a.statusCode ?? ''} | ${a.error ?? ''} |`,
		),
	);
	lines.push('');
	lines.push('## Durations (wall clock)');
	lines.push('');
	lines.push('| step | seconds |');
	lines.push('|---|---:|');
	for (const [label, ms] of timings) lines.push(`| ${label} | ${(ms / 1000).toFixed(1)} |`);
	lines.push('');
	const text = lines.join('\n');
	console.log(text);
	mkdirSync(join(__dirname, 'results'), { recursive: true });
	writeFileSync(RESULTS, text);
	console.log(`[outage] wrote ${RESULTS}`);

	await n8n.stop();
	await sandbox.close();
	rmSync(userFolder, { recursive: true, force: true });
}

main().then(
	() => process.exit(0),
	(e) => {
		console.error(e);
		process.exit(1);
	},
);

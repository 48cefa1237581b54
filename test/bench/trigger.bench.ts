/**
 * Throughput and latency of the Marketplace Trigger (its one version, 2), with Catch Up Missed Orders
 * on (its default) and off, against n8n's built-in Webhook node (typeVersion 2), in real n8n 2.41.1
 * servers with this package loaded
 * (test/e2e/n8n.ts). One n8n is booted per setting, one after the other:
 *
 *   default  n8n's defaults: an expression isolate is acquired for every webhook request of any
 *            start node except n8n's own Webhook node v2+ (`LiveWebhooks.webhookPhaseNeedsIsolate`)
 *   lazy     N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true: an isolate is built only when an expression is
 *            evaluated; webhook-helpers evaluates one for every request to a typeVersion-1 webhook
 *            start node (options.binaryData), which is why the trigger is version 2: it takes none
 *
 * and in each, three workflows are active at once:
 *
 *   W.  Webhook node v2 (POST, respond immediately) -> No Operation   /webhook/<path>
 *   T0. Marketplace Trigger, Catch Up Missed Orders off -> No Operation   /webhook/<webhookId>/webhook
 *   T.  Marketplace Trigger at its defaults (catch-up on) -> No Operation /webhook/<webhookId>/webhook
 *   (both on order.created; T0 - T is what the catch-up's bookkeeping costs a delivery)
 *
 * The same events, signed with the receiving trigger's endpoint secret (Standard Webhooks headers
 * read from the sandbox's control API, a distinct webhook-id each; the Webhook node gets T's
 * signature and checks none), go to the three URLs from a keep-alive load generator at a fixed
 * concurrency, in slices whose order cycles through all six permutations (W T0 T, T0 T W, ...) so
 * drift of the shared machine hits all three alike. None waits for its execution to finish before
 * answering, so after each slice the script also waits until n8n has finished that slice's
 * executions: the end-to-end rate counts that drain, the response rate does not. Ratios are to W in
 * the same n8n. Requests the trigger sends itself (the id-store sync of settle.ts, where the measured
 * code has it) are n8n load that no tally counts; they can overlap the next slice.
 *
 * Before each boot it waits (polls every 30 s, at most 10 minutes) while the 1-minute load average is
 * above --max-load, and records the load before and after each setting (the load after includes this
 * run's own n8n and load generator).
 *
 * Run: .ci/with-node24 npm run build && \
 *      .ci/with-node24 node -r ts-node/register/transpile-only test/bench/trigger.bench.ts [--per-level 600] [--slice 100] [--levels 1,4,16] [--settings default,lazy] [--max-load 1.5] [--env KEY=VALUE,...] [--out file.md]
 *
 * --env adds n8n environment to every setting (e.g. to test a cause); --out writes elsewhere. With
 * BENCH_PACKAGE_ROOT=<checkout> n8n loads that checkout's dist/ instead of this work tree's (see
 * n8nBench.benchPackageRoot). 600 per level in slices of 100 runs each of the six orders once per level.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';

import {
	activate,
	addToTally,
	allExecutions,
	argOf as arg,
	benchPackageRoot,
	bootTable,
	bootBench,
	distVersion,
	endToEndRate as e2e,
	endpointFor,
	eventIdOf,
	fmt,
	keepAliveAgent,
	loadAverage,
	newTally,
	orderCreatedEvent,
	pool,
	post,
	provenanceLines,
	repoRoot,
	runBench,
	responseRate as resp,
	signedDelivery,
	tallyCells,
	waitForExecutions,
	waitForQuietMachine,
	triggerWorkflow,
	webhookNodeWorkflow,
	writeResults,
	type Bench,
	type BootReport,
	type Delivery,
	type Tally,
	SETTINGS,
} from './n8nBench';

const COMMAND =
	'.ci/with-node24 node -r ts-node/register/transpile-only test/bench/trigger.bench.ts';
const RESULTS = join(__dirname, 'results', 'trigger.md');

/** Target: the trigger at its defaults under lazy acquire at least this fraction of W's end-to-end rate at these levels. */
const TARGET = { ratio: 0.9, setting: 'lazy', variant: 't' as const, levels: [1, 4] };

type Variant = 'w' | 'off' | 't';
const VARIANTS: Variant[] = ['w', 'off', 't'];
const LABEL: Record<Variant, string> = {
	w: 'W Webhook node v2',
	off: 'T0 Marketplace Trigger, catch-up off',
	t: 'T Marketplace Trigger (defaults)',
};
/** All six orders of the three, cycled slice by slice: each goes first, second and last equally often. */
const ORDERS: Variant[][] = [
	['w', 'off', 't'],
	['t', 'off', 'w'],
	['off', 't', 'w'],
	['w', 't', 'off'],
	['t', 'w', 'off'],
	['off', 'w', 't'],
];

interface SettingResult extends BootReport {
	name: string;
	/** what n8n loaded at this boot (dist/ build time and hash) */
	dist: ReturnType<typeof distVersion>;
	rows: Array<{ level: number } & Record<Variant, Tally>>;
	checks: Array<{
		variant: Variant;
		accepted: number;
		executions: number;
		notSuccess: number;
		distinct: number | undefined;
		staticBytes?: number;
		hasSeen?: boolean;
	}>;
}

async function measureSetting(
	name: string,
	env: Record<string, string>,
	perLevel: number,
	sliceSize: number,
	levels: number[],
	maxLoad: number,
): Promise<SettingResult> {
	const quiet = await waitForQuietMachine(maxLoad);
	console.log(
		`[bench] setting ${name}: load ${quiet.load} (waited ${(quiet.waitedMs / 1000).toFixed(0)} s${quiet.quiet ? '' : ', gave up waiting'}); env ${JSON.stringify(env)}`,
	);
	const started = Date.now();
	const dist = distVersion();
	console.log(`[bench] ${name}: ${dist.text}`);
	const bench: Bench = await bootBench({ env });
	const { n8n } = bench;
	try {
		const tag = name.replace(/[^a-z0-9]/gi, '').slice(0, 6);
		const wfs = {
			w: webhookNodeWorkflow(`benchW${tag}`.padEnd(16, '0'), `bench-${randomUUID()}`),
			off: triggerWorkflow(
				`benchT0${tag}`.padEnd(16, '0'),
				randomUUID(),
				bench.credentialId,
				true,
				{ catchUpMissedOrders: false },
			),
			t: triggerWorkflow(`benchT${tag}`.padEnd(16, '0'), randomUUID(), bench.credentialId),
		};
		for (const v of VARIANTS) await n8n.createWorkflow(wfs[v]);
		for (const v of VARIANTS) await activate(bench, wfs[v].id);
		const urlOf = (v: Variant) =>
			v === 'w'
				? `${n8n.baseUrl}/webhook/${(wfs.w.nodes[0] as { parameters: { path: string } }).parameters.path}`
				: `${n8n.baseUrl}/webhook/${(wfs[v].nodes[0] as { webhookId: string }).webhookId}/webhook`;
		const urls = { w: urlOf('w'), off: urlOf('off'), t: urlOf('t') };
		const secrets = {
			off: (await endpointFor(bench, urls.off)).secret,
			t: (await endpointFor(bench, urls.t)).secret,
		};
		if (!secrets.off || !secrets.t) throw new Error('the sandbox holds no secret for an endpoint');
		const secretFor = (v: Variant) => (v === 'off' ? secrets.off! : secrets.t!);
		const bootMs = Date.now() - started;
		console.log(
			`[bench] ${name}: n8n ${n8n.baseUrl} up after ${(bootMs / 1000).toFixed(1)} s; W ${urls.w}; T0 ${urls.off}; T ${urls.t}`,
		);

		const expected: Record<Variant, number> = { w: 0, off: 0, t: 0 };
		const sendSlice = async (
			v: Variant,
			events: Array<{ id: string }>,
			concurrency: number,
			tally: Tally,
		) => {
			const deliveries: Delivery[] = events.map((e) => signedDelivery(secretFor(v), e));
			const agent = keepAliveAgent(concurrency);
			const t = performance.now();
			const results = await pool(
				concurrency,
				deliveries.length,
				async (i) => await post(agent, urls[v], deliveries[i]),
			);
			expected[v] += addToTally(tally, results, performance.now() - t);
			agent.destroy();
			tally.drainMs += await waitForExecutions(n8n, wfs[v].id, expected[v]);
		};
		const makeEvents = (count: number) => Array.from({ length: count }, () => orderCreatedEvent());

		// Warm-up (not counted in the table): JIT, SQLite pages, connection set-up, the isolate pool.
		{
			const warm = makeEvents(100);
			for (const v of VARIANTS) await sendSlice(v, warm, 4, newTally());
		}

		const rows: SettingResult['rows'] = [];
		let sliceNo = 0;
		for (const level of levels) {
			const tallies: Record<Variant, Tally> = { w: newTally(), off: newTally(), t: newTally() };
			const slices = Math.ceil(perLevel / sliceSize);
			for (let s = 0; s < slices; s++) {
				const events = makeEvents(Math.min(sliceSize, perLevel - s * sliceSize));
				for (const v of ORDERS[sliceNo++ % ORDERS.length])
					await sendSlice(v, events, level, tallies[v]);
			}
			rows.push({ level, ...tallies });
			const r = (v: Variant) =>
				`${e2e(tallies[v]).toFixed(1)}/s (${(e2e(tallies[v]) / e2e(tallies.w)).toFixed(2)}x)`;
			console.log(
				`[bench] ${name} concurrency ${level}: W ${e2e(tallies.w).toFixed(1)}/s, T0 ${r('off')}, T ${r('t')} (end to end)`,
			);
		}
		const runMs = Date.now() - started;
		const loadAfter = loadAverage();

		// Executions through the public API: every accepted delivery made exactly one execution.
		const checks: SettingResult['checks'] = [];
		for (const v of VARIANTS) {
			const list = await allExecutions(bench.api, wfs[v].id, v !== 'w');
			const check: SettingResult['checks'][number] = {
				variant: v,
				accepted: expected[v],
				executions: list.length,
				notSuccess: list.filter((e) => e.status !== 'success').length,
				distinct: v === 'w' ? undefined : new Set(list.map(eventIdOf).filter(Boolean)).size,
			};
			if (v !== 'w') {
				const staticData = (
					await n8n.rest<{ staticData?: unknown }>('GET', `/workflows/${wfs[v].id}`)
				).staticData;
				check.staticBytes = Buffer.byteLength(JSON.stringify(staticData ?? null));
				check.hasSeen = JSON.stringify(staticData ?? null).includes('"known"');
			}
			checks.push(check);
		}
		return {
			name,
			label: SETTINGS[name]?.label ?? name,
			env,
			loadBefore: quiet.load,
			waitedMs: quiet.waitedMs,
			quiet: quiet.quiet,
			loadAfter,
			dist,
			bootMs,
			runMs,
			rows,
			checks,
		};
	} finally {
		await n8n.stop();
		await bench.sandbox.close();
	}
}

async function main() {
	const perLevel = Number(arg('per-level', '600'));
	const sliceSize = Number(arg('slice', '100'));
	const levels = arg('levels', '1,4,16').split(',').map(Number);
	const settingNames = arg('settings', 'default,lazy').split(',').filter(Boolean);
	const maxLoad = Number(arg('max-load', '1.5'));
	for (const s of settingNames)
		if (!SETTINGS[s])
			throw new Error(`unknown setting ${s} (known: ${Object.keys(SETTINGS).join(', ')})`);
	// --env KEY=VALUE[,KEY=VALUE]: extra n8n environment for every setting (e.g. to test a cause)
	const extraEnv = Object.fromEntries(
		arg('env', '')
			.split(',')
			.filter(Boolean)
			.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
	);
	const out = arg('out', RESULTS);
	const started = Date.now();
	const loadAtStart = loadAverage();

	const results: SettingResult[] = [];
	for (const name of settingNames)
		results.push(
			await measureSetting(
				name,
				{ ...extraEnv, ...SETTINGS[name].env },
				perLevel,
				sliceSize,
				levels,
				maxLoad,
			),
		);
	const loadAtEnd = loadAverage();

	const lines: string[] = [];
	lines.push(
		"# Marketplace Trigger (catch-up on and off) vs n8n's Webhook node in real n8n 2.41.1, default and lazy isolate acquire",
	);
	lines.push('');
	const envArg = Object.keys(extraEnv).length
		? ` --env ${Object.entries(extraEnv)
				.map(([k, v]) => `${k}=${v}`)
				.join(',')}`
		: '';
	const outArg = out === RESULTS ? '' : ` --out ${relative(repoRoot, out)}`;
	lines.push(
		...provenanceLines(
			`${COMMAND} --per-level ${perLevel} --slice ${sliceSize} --levels ${levels.join(',')} --settings ${settingNames.join(',')} --max-load ${maxLoad}${envArg}${outArg}`,
			started,
			results,
			loadAtStart,
			loadAtEnd,
		),
	);
	lines.push('');
	lines.push(
		'One n8n server per setting (SQLite, regular mode, execution pruning off), booted one after the other, each with three workflows',
	);
	lines.push(
		"active: W = n8n's Webhook node v2 (POST, respond immediately), T0 = Marketplace Trigger (typeVersion 2) with Catch Up Missed",
	);
	lines.push(
		'Orders off, T = Marketplace Trigger at its defaults (catch-up on), both on order.created, each -> No Operation. Each delivery is signed',
	);
	lines.push(
		"with the receiving trigger's endpoint secret (Standard Webhooks headers, distinct webhook-id; W gets T's signature and checks none); the same events go to W, T0 and T in",
	);
	lines.push(
		`slices of ${sliceSize} whose order cycles through all six permutations, from a keep-alive load generator at the given concurrency.`,
	);
	lines.push(
		"None of the three waits for its execution to finish before answering, so after each slice the script waits until n8n has finished the slice's executions",
	);
	lines.push(
		'(polling the execution count). "end to end" = accepted / (send time + that drain); "responses" = accepted / send time only.',
	);
	lines.push(
		"Latency = one request's response time at the client. Ratios are to W in the same n8n and the same concurrency. Noisy shared",
	);
	lines.push(
		"2-core machine: compare within a setting and row group only. The load after a setting includes this run's own n8n and load",
	);
	lines.push('generator, which is why the next setting may wait for the machine to settle.');
	lines.push('');
	lines.push(...bootTable(results));
	lines.push('');
	lines.push('## Throughput and latency');
	lines.push('');
	lines.push(
		'| setting | concurrency | node | deliveries | 2xx | other | end to end (/s) | responses (/s) | p50 (ms) | p99 (ms) | / W end to end | / W responses |',
	);
	lines.push('|---|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|');
	for (const r of results) {
		for (const row of r.rows) {
			for (const v of VARIANTS) {
				const t = row[v];
				const ratio = v === 'w' ? '' : `**${(e2e(t) / e2e(row.w)).toFixed(2)}x**`;
				const ratioResp = v === 'w' ? '' : `${(resp(t) / resp(row.w)).toFixed(2)}x`;
				lines.push(
					`| ${r.label} | ${row.level} | ${LABEL[v]} | ${tallyCells(t)} | ${ratio} | ${ratioResp} |`,
				);
			}
		}
	}
	lines.push('');
	lines.push('## Ratios to the Webhook node (end to end), at a glance');
	lines.push('');
	lines.push(`| setting | trigger | ${levels.map((l) => `concurrency ${l}`).join(' | ')} |`);
	lines.push(`|---|---|${levels.map(() => '---:').join('|')}|`);
	for (const r of results) {
		for (const v of ['off', 't'] as const) {
			lines.push(
				`| ${r.label} | ${v === 'off' ? 'catch-up off' : 'defaults'} | ${r.rows.map((row) => `${(e2e(row[v]) / e2e(row.w)).toFixed(2)}x`).join(' | ')} |`,
			);
		}
	}
	lines.push('');
	const targetSetting = results.find((r) => r.name === TARGET.setting);
	const targetRows = targetSetting?.rows.filter((row) => TARGET.levels.includes(row.level)) ?? [];
	const targetRatios = targetRows.map((row) => ({
		level: row.level,
		ratio: e2e(row[TARGET.variant]) / e2e(row.w),
	}));
	const measuredAll = targetRatios.length === TARGET.levels.length;
	const met = measuredAll && targetRatios.every((t) => t.ratio >= TARGET.ratio);
	lines.push(
		`Target: T (the trigger at its defaults) under lazy acquire at least ${TARGET.ratio}x W's end-to-end throughput at concurrency ${TARGET.levels.join(' and ')}. ` +
			(measuredAll
				? `Measured ${targetRatios.map((t) => `${t.ratio.toFixed(2)}x at ${t.level}`).join(', ')}: **${met ? 'met' : 'missed'}**.`
				: '**not measured in this run** (the lazy setting or a target concurrency was left out).'),
	);
	lines.push('');
	lines.push(
		'## Executions (public API, after each setting; warm-up of 100 per workflow included)',
	);
	lines.push('');
	lines.push(
		'| setting | node | accepted (2xx) | executions | not success | distinct event ids in executions | static data after the run |',
	);
	lines.push('|---|---|---:|---:|---:|---:|---|');
	for (const r of results) {
		for (const c of r.checks) {
			const sd =
				c.staticBytes === undefined
					? 'n/a'
					: `${fmt(c.staticBytes)} bytes of JSON, ${c.hasSeen ? 'with' : 'WITHOUT'} the accepted-id store "known"`;
			lines.push(
				`| ${r.label} | ${LABEL[c.variant]} | ${fmt(c.accepted)} | ${fmt(c.executions)} | ${c.notSuccess} | ${c.distinct === undefined ? 'n/a' : fmt(c.distinct)} | ${sd} |`,
			);
		}
	}
	lines.push('');
	lines.push(
		'Why the settings differ (n8n 2.41.1): by default `LiveWebhooks.webhookPhaseNeedsIsolate` acquires an expression isolate (pool of one, ' +
			"about 33 ms of CPU to build) for every webhook request to any start node except n8n's own Webhook node v2+ with static parameters, " +
			'so T0 and T both wait for it and W does not. With `N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true` an isolate is built only when an ' +
			'expression is evaluated; webhook-helpers evaluates `$parameter["options"]["binaryData"]` for every request to a typeVersion-1 ' +
			'webhook start node, which the trigger (version 2) is not: T0 and T take none. Besides that, the trigger verifies each signature and keeps its ' +
			'accepted-id store in the static data; W does neither. See also trigger-isolate-skip-off.md (the skip switched off: both pay the isolate).',
	);
	if (existsSync(join(benchPackageRoot(), 'dist', 'nodes', 'MarketplaceTrigger', 'settle.js'))) {
		lines.push('');
		lines.push(
			'The measured trigger stores its accepted ids through signed sync requests to its own URL (settle.ts: batched, the first at most ' +
				'firstMs after an acceptance (250 ms, 1 s since issue 20), a confirming one about 10 s later). They are n8n work per accepted delivery that no row counts as a ' +
				"delivery, and the later ones can fall into the next slice, which may be another workflow's: that spreads part of T0's and T's " +
				'cost onto the other rows of the same concurrency.',
		);
	}
	lines.push('');
	writeResults(out, lines);
}

runBench(main);

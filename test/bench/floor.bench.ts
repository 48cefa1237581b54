/**
 * The Marketplace Trigger (typeVersion 2) against two references in the same real n8n 2.41.1:
 *
 *   W. n8n's Webhook node v2 (POST, respond immediately) -> No Operation      /webhook/<path>
 *   F. the floor: the cheapest community trigger possible, a typeVersion-2 webhook trigger whose
 *      webhook() only starts the workflow with the body (no verification, no state, no
 *      registration), written by this script into a temp folder as a second community package
 *      (n8nBench.writeFloorPackage) and linked next to ours -> No Operation   /webhook/<webhookId>/webhook
 *   L. the limit for "once" on n8n's API: the floor trigger plus an execute() in the same node (a
 *      second node of the floor package) that records each item's key (the body's `id`) with n8n's
 *      deduplication helper, checkProcessedAndRecord([key], 'node', { mode: 'entries', maxEntries:
 *      2000 }) - one write per run, no expression, no lock, no batching - and outputs only the items
 *      whose key was new -> No Operation                                       /webhook/<webhookId>/webhook
 *      n8n's own idiom for "once", done the cheapest way the API allows: what T's once costs at least.
 *   T. Marketplace Trigger v2 (order.created) -> No Operation                 /webhook/<webhookId>/webhook
 *
 * Protocol: one n8n per setting (n8n's defaults; N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true), booted one
 * after the other; per concurrency level, --per-level deliveries per target in slices of --slice,
 * the order of the targets rotating slice by slice (W F L T, F L T W, L T W F, ...), from a keep-alive
 * load generator. None of them waits for its execution to end before answering, so after each slice the
 * script waits until n8n has finished the slice's executions: "end to end" = accepted / (send time +
 * that drain).
 *
 * Isolates per delivery: n8n serves Prometheus metrics with N8N_METRICS=true and counts every
 * expression isolate (bridge) it hands out as n8n_expression_pool_acquired_total. After the
 * throughput levels, each target in turn gets --isolate-deliveries deliveries at concurrency 1 with
 * nothing else running; the counter's change, read after the executions ended and (for T) a margin
 * later, divided by the deliveries. Goal: T at least GOAL.ratio x F end to end in every setting at
 * GOAL.levels, and T's p99 within P99_GOAL x F's; and beside it T at least LIMIT_GOAL.ratio x L end to
 * end in the same cells, T's p99 within LIMIT_GOAL.p99 x L's.
 *
 * Guarantees, checked after each setting (the trigger as it is now: n8n answers 2xx on receipt and
 * starts an execution for every verified delivery; the trigger's execute() outputs an event only the
 * first time n8n's deduplication store sees its key):
 *   - refused requests (tampered body, stale timestamp, no signature): 401 each, no execution, a log line;
 *   - each event once: every event T accepted has exactly one execution with output (a run);
 *   - copies (a last burst of 10 sent twice while n8n runs; after an n8n restart 1 s later, the newest
 *     History Size - MARK_MARGIN events T accepted, sent again with fresh signatures): each an
 *     execution without output, counted apart from the runs, as is the check n8n runs at the start
 *     (mode trigger, Catch Up Missed Orders); nothing sent again after the restart produces output.
 *   Older events are not sent again: their keys have left the store, so they would run again (the
 *   option's documented limit).
 *
 * Run: .ci/with-node24 npm run build && \
 *      .ci/with-node24 node -r ts-node/register/transpile-only test/bench/floor.bench.ts [--per-level 120] [--slice 40] [--warm-up 40] [--levels 1,4] [--settings default,lazy] [--targets w,f,l,t] [--isolate-deliveries 40] [--max-load 2.5] [--cpu-prof DIR] [--no-guarantees] [--floor-credential] [--history-size N] [--out file.md]
 *
 * --history-size N: T's option History Size (default: the option left at its default, 2,000 keys).
 *
 * --floor-credential: F's and L's nodes carry the same Marketplace credential as T's. n8n 2.41.1 checks the
 * access to every credential a workflow's nodes carry before each execution (WorkflowRunner.run ->
 * CredentialsPermissionChecker.check, a database query; none for a workflow without one), so this F is
 * the cheapest trigger that can call the service, as T must (and L the cheapest such "once").
 *
 * L's guarantees (any run with them): its executions against deliveries accepted, and how many output
 * an item (each delivery has a new id, so every execution should).
 *
 * BENCH_PACKAGE_ROOT=<checkout>: n8n loads that checkout's dist/ (a commit built on its own) instead
 * of this work tree's. --cpu-prof DIR: n8n runs with `--cpu-prof` and writes its CPU profiles under
 * DIR/<setting>/, with measured-window.json: the throughput levels' start and end on the clock V8
 * stamps samples with, and the deliveries accepted then, in all and per level (`levels`; summarise
 * with cpuProfile.ts --window, one level with --level N).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

import { linkCommunityPackage } from '../e2e/n8n';
import {
	activate,
	addToTally,
	allExecutions,
	argOf as arg,
	bootTable,
	bootBench,
	distVersion,
	endToEndRate as e2e,
	endpointFor,
	floorWorkflow,
	FLOOR_ONCE_TYPE,
	fmt,
	keepAliveAgent,
	loadAverage,
	metricCounters,
	newTally,
	orderCreatedEvent,
	percentile,
	pool,
	post,
	provenanceLines,
	repoRoot,
	runBench,
	signedDelivery,
	sleep,
	tallyCells,
	triggerWorkflow,
	waitForExecutions,
	waitForQuietMachine,
	webhookNodeWorkflow,
	writeResults,
	writeFloorPackage,
	type Bench,
	type BootReport,
	type Delivery,
	type Tally,
	SETTINGS,
} from './n8nBench';
import type { Json } from '../json';
import { DEFAULT_HISTORY_SIZE } from '../../nodes/MarketplaceTrigger/once';

const COMMAND = '.ci/with-node24 node -r ts-node/register/transpile-only test/bench/floor.bench.ts';
const RESULTS = join(__dirname, 'results', 'trigger-floor.md');
const ISOLATES = 'n8n_expression_pool_acquired_total';
/** A margin after T's last execution: by then every request of the trigger has ended. */
const SETTLE_TAIL_MS = 12_000;
/** Keys of n8n's deduplication row that are not events' (the hour marks once.ts records beside them). */
const MARK_MARGIN = 10;

/** Goal: T at least this fraction of F's end-to-end rate at these levels, in every setting. */
const GOAL = { ratio: 0.9, levels: [1, 4] };
/** and T's p99 latency at most this many times F's, in the same cells */
const P99_GOAL = 2;
/** Goal beside it: T at least this fraction of L's end-to-end rate, and T's p99 at most this many times L's, in the same cells */
const LIMIT_GOAL = { ratio: 1, p99: 1.5 };

type Target = 'w' | 'f' | 'l' | 't';
const LABEL: Record<Target, string> = {
	w: 'W Webhook node v2',
	f: 'F floor (community, typeVersion 2)',
	l: "L limit for once on n8n's API (floor + execute() with checkProcessedAndRecord)",
	t: 'T Marketplace Trigger v2',
};

const flag = (name: string) => process.argv.includes(`--${name}`);
const p99 = (t: Tally) =>
	percentile(
		[...t.latencies].sort((a, b) => a - b),
		99,
	);

interface Guarantees {
	/** W, F and L: executions against deliveries accepted (L: and how many output an item) */
	executions: Partial<
		Record<
			Target,
			{
				accepted: number;
				executions: number;
				notSuccess: number;
				withOutput?: number;
				/** L: the failed executions' error messages, by message */
				errors?: Record<string, number>;
			}
		>
	>;
	/** T: its executions split into runs (output) and copies (no output), and the checks apart */
	t?: {
		/** distinct events T accepted in the setting, before the restart */
		events: number;
		/** of them: exactly one execution with output, none, more than one */
		once: number;
		never: number;
		more: number;
		/** items output for an event T never accepted */
		unexpected: number;
		/** webhook executions with output (runs) and without (copies) */
		runs: number;
		copies: number;
		/** copies T answered 2xx (the burst's copies while n8n ran, those after the restart) */
		copiesAnswered: number;
		/** executions trigger() started (the check of Catch Up Missed Orders at the restart) */
		checks: { executions: number; withOutput: number; items: number };
		notSuccess: number;
	};
	refusals?: Array<{ kind: 'tampered' | 'stale' | 'unsigned'; status: number }>;
	/** items of a refused event in any execution */
	refusedRan?: number;
	/** n8n log lines "Marketplace Trigger refused a delivery (401)" while they were sent */
	refusedLogged?: number;
	copiesBefore?: { sent: number; answered2xx: number };
	restart?: {
		accepted: number;
		sentAgain: number;
		/** older than the History Size keeps: not sent again (they would run again, as documented) */
		notSentOlder: number;
		answered2xx: number;
		otherAnswers: Record<string, number>;
		/** webhook executions started after the restart with output, and without */
		runsAfter: number;
		copiesAfter: number;
		executionsBefore: number;
		executionsAfter: number;
	};
	staticBytes?: number;
}

interface SettingResult extends BootReport {
	name: string;
	dist: ReturnType<typeof distVersion>;
	rows: Array<{ level: number; tallies: Partial<Record<Target, Tally>> }>;
	isolates: Partial<Record<Target, { deliveries: number; acquired: number }>>;
	guarantees: Guarantees;
}

/** The ids of the items our trigger output in an execution (none: a copy, or a check that caught nothing up). */
function triggerOutputIdsOf(execution: Json): string[] {
	const items: Json[] =
		execution?.data?.resultData?.runData?.['Order Created']?.[0]?.data?.main?.[0] ?? [];
	return items.map((item) => String(item?.json?.id));
}

async function measureSetting(
	name: string,
	env: Record<string, string>,
	opts: {
		perLevel: number;
		sliceSize: number;
		warmUp: number;
		levels: number[];
		targets: Target[];
		isolateDeliveries: number;
		maxLoad: number;
		cpuProf?: string;
		guarantees: boolean;
		floorCredential: boolean;
		historySize?: number;
	},
): Promise<SettingResult> {
	const quiet = await waitForQuietMachine(opts.maxLoad);
	console.log(
		`[bench] setting ${name}: load ${quiet.load} (waited ${(quiet.waitedMs / 1000).toFixed(0)} s${quiet.quiet ? '' : ', gave up waiting'}); env ${JSON.stringify(env)}`,
	);
	const started = Date.now();
	const dist = distVersion();
	// the user folder is made here so the floor package can be linked next to ours before n8n starts
	const userFolder = mkdtempSync(join(tmpdir(), 'n8n-floor-bench-'));
	linkCommunityPackage(userFolder, writeFloorPackage(join(userFolder, 'floor-package')));
	const n8nEnv: Record<string, string> = { ...env, N8N_METRICS: 'true' };
	if (opts.cpuProf) {
		const dir = resolve(opts.cpuProf, name);
		mkdirSync(dir, { recursive: true });
		n8nEnv.NODE_OPTIONS = `--cpu-prof --cpu-prof-dir=${dir}`;
	}
	const bench: Bench = await bootBench({ env: n8nEnv, userFolder });
	const { n8n } = bench;
	try {
		const tag = name.replace(/[^a-z0-9]/gi, '').slice(0, 6);
		const wfs: Record<Target, { id: string; nodes: unknown[] }> = {
			w: webhookNodeWorkflow(`floorW${tag}`.padEnd(16, '0'), `bench-${randomUUID()}`),
			f: floorWorkflow(
				`floorF${tag}`.padEnd(16, '0'),
				randomUUID(),
				opts.floorCredential ? bench.credentialId : undefined,
			),
			l: floorWorkflow(
				`floorL${tag}`.padEnd(16, '0'),
				randomUUID(),
				opts.floorCredential ? bench.credentialId : undefined,
				FLOOR_ONCE_TYPE,
			),
			t: triggerWorkflow(
				`floorT${tag}`.padEnd(16, '0'),
				randomUUID(),
				bench.credentialId,
				true,
				opts.historySize === undefined ? undefined : { historySize: opts.historySize },
			),
		};
		for (const v of opts.targets) await n8n.createWorkflow(wfs[v]);
		for (const v of opts.targets) await activate(bench, wfs[v].id);
		const webhookIdOf = (v: Target) => (wfs[v].nodes[0] as { webhookId: string }).webhookId;
		const urls: Record<Target, string> = {
			w: `${n8n.baseUrl}/webhook/${(wfs.w.nodes[0] as { parameters: { path: string } }).parameters.path}`,
			f: `${n8n.baseUrl}/webhook/${webhookIdOf('f')}/webhook`,
			l: `${n8n.baseUrl}/webhook/${webhookIdOf('l')}/webhook`,
			t: `${n8n.baseUrl}/webhook/${webhookIdOf('t')}/webhook`,
		};
		// every delivery is signed with T's secret (W, F and L check nothing), so all get the same bytes
		const secret = opts.targets.includes('t')
			? (await endpointFor(bench, urls.t)).secret
			: `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
		if (!secret) throw new Error("the sandbox holds no secret for the trigger's endpoint");
		const bootMs = Date.now() - started;
		console.log(
			`[bench] ${name}: n8n ${n8n.baseUrl} up after ${(bootMs / 1000).toFixed(1)} s; ${opts.targets.map((v) => `${v.toUpperCase()} ${urls[v]}`).join('; ')}`,
		);

		const expected: Record<Target, number> = { w: 0, f: 0, l: 0, t: 0 };
		// the events T accepted, each once, in the order they were first accepted
		const acceptedT = new Map<string, { id: string }>();
		const sendSlice = async (
			v: Target,
			events: Array<{ id: string }>,
			concurrency: number,
			tally: Tally,
		) => {
			const deliveries: Delivery[] = events.map((e) => signedDelivery(secret, e));
			const agent = keepAliveAgent(concurrency);
			const t0 = performance.now();
			const results = await pool(
				concurrency,
				deliveries.length,
				async (i) => await post(agent, urls[v], deliveries[i]),
			);
			expected[v] += addToTally(tally, results, performance.now() - t0);
			agent.destroy();
			if (v === 't')
				results.forEach(
					(r, i) =>
						r.status >= 200 &&
						r.status < 300 &&
						!acceptedT.has(events[i].id) &&
						acceptedT.set(events[i].id, events[i]),
				);
			tally.drainMs += await waitForExecutions(n8n, wfs[v].id, expected[v]);
		};
		const makeEvents = (count: number) => Array.from({ length: count }, () => orderCreatedEvent());
		// each target gets its own events (T's ids are checked after the restart; L keeps its own, W and F nothing)
		const eventsFor = (count: number) => {
			const events = {} as Record<Target, Array<{ id: string }>>;
			for (const v of opts.targets) events[v] = makeEvents(count);
			return events;
		};

		// warm-up, not counted: JIT, SQLite pages, connections, the isolate pool, and with --warm-up N
		// the trigger's stores as a running shop's hold them (N deliveries each, in slices, concurrency 4)
		for (let sent = 0; sent < opts.warmUp; sent += opts.sliceSize) {
			const warm = eventsFor(Math.min(opts.sliceSize, opts.warmUp - sent));
			for (const v of opts.targets) await sendSlice(v, warm[v], 4, newTally());
		}

		const rows: SettingResult['rows'] = [];
		// the measured phase on the monotonic clock V8 stamps profile samples with (cpuProfile.ts --window)
		const measuredFromUs = Number(process.hrtime.bigint() / 1000n);
		let sliceNo = 0;
		const levelWindows: Array<{ level: number; fromUs: number; toUs: number; deliveries: number }> =
			[];
		for (const level of opts.levels) {
			const levelFromUs = Number(process.hrtime.bigint() / 1000n);
			const tallies = Object.fromEntries(opts.targets.map((v) => [v, newTally()])) as Record<
				Target,
				Tally
			>;
			const slices = Math.ceil(opts.perLevel / opts.sliceSize);
			for (let s = 0; s < slices; s++) {
				const events = eventsFor(Math.min(opts.sliceSize, opts.perLevel - s * opts.sliceSize));
				const k = sliceNo++ % opts.targets.length;
				for (const v of [...opts.targets.slice(k), ...opts.targets.slice(0, k)])
					await sendSlice(v, events[v], level, tallies[v]);
			}
			rows.push({ level, tallies });
			levelWindows.push({
				level,
				fromUs: levelFromUs,
				toUs: Number(process.hrtime.bigint() / 1000n),
				deliveries: Object.values(tallies).reduce((m, t) => m + t.ok, 0),
			});
			const f = tallies.f ? e2e(tallies.f) : NaN;
			const l = tallies.l ? e2e(tallies.l) : NaN;
			console.log(
				`[bench] ${name} concurrency ${level}: ` +
					opts.targets
						.map(
							(v) =>
								`${v.toUpperCase()} ${e2e(tallies[v]).toFixed(1)}/s${v === 't' && tallies.f ? ` (${(e2e(tallies[v]) / f).toFixed(2)}x F)` : ''}${v === 't' && tallies.l ? ` (${(e2e(tallies[v]) / l).toFixed(2)}x L)` : ''}`,
						)
						.join(', '),
			);
		}
		const runMs = Date.now() - started;
		if (opts.cpuProf) {
			const window = {
				fromUs: measuredFromUs,
				toUs: Number(process.hrtime.bigint() / 1000n),
				deliveries: rows.reduce(
					(n, row) => n + Object.values(row.tallies).reduce((m, t) => m + (t?.ok ?? 0), 0),
					0,
				),
				levels: levelWindows,
			};
			writeFileSync(
				join(resolve(opts.cpuProf, name), 'measured-window.json'),
				JSON.stringify(window),
			);
		}
		const loadAfter = loadAverage();

		// isolates per delivery, one target at a time with nothing else running
		const isolates: SettingResult['isolates'] = {};
		if (opts.isolateDeliveries > 0) {
			await sleep(SETTLE_TAIL_MS);
			for (const v of opts.targets) {
				const before = (await metricCounters(n8n.baseUrl))[ISOLATES] ?? 0;
				await sendSlice(v, makeEvents(opts.isolateDeliveries), 1, newTally());
				if (v === 't') await sleep(SETTLE_TAIL_MS);
				const after = (await metricCounters(n8n.baseUrl))[ISOLATES] ?? 0;
				isolates[v] = { deliveries: opts.isolateDeliveries, acquired: after - before };
				console.log(
					`[bench] ${name}: ${v.toUpperCase()} took ${after - before} isolates for ${opts.isolateDeliveries} deliveries`,
				);
			}
		}

		const guarantees: Guarantees = { executions: {} };
		if (opts.guarantees && opts.targets.includes('t')) {
			const single = keepAliveAgent(1);
			// refused requests: 401 each, and no execution (n8n only logs them)
			const logsBefore = n8n.logs().length;
			const refusedIds: string[] = [];
			const refusals: Guarantees['refusals'] = [];
			for (const kind of ['tampered', 'stale', 'unsigned'] as const) {
				const event = orderCreatedEvent();
				refusedIds.push(event.id);
				const signed = signedDelivery(secret, event, kind === 'stale' ? -600 : 0);
				const delivery =
					kind === 'tampered'
						? { ...signed, body: signed.body.replace('"brandId":1', '"brandId":2') }
						: kind === 'unsigned'
							? {
									...signed,
									headers: Object.fromEntries(
										Object.entries(signed.headers).filter(([h]) => h !== 'webhook-signature'),
									),
								}
							: signed;
				refusals.push({ kind, status: (await post(single, urls.t, delivery)).status });
			}
			single.destroy();
			// the next accepted event runs as usual (and its execution ends after any the refusals could have started)
			await sendSlice('t', makeEvents(1), 1, newTally());
			await sleep(1_000);
			guarantees.refusals = refusals;
			guarantees.refusedLogged = (
				n8n
					.logs()
					.slice(logsBefore)
					.match(/Marketplace Trigger refused a delivery \(401\)/g) ?? []
			).length;
			// a last burst, and copies of it while n8n runs: executions without output
			const burst = makeEvents(10);
			await sendSlice('t', burst, 4, newTally());
			const copiesBefore = newTally();
			await sendSlice('t', burst, 4, copiesBefore);
			guarantees.copiesBefore = { sent: burst.length, answered2xx: copiesBefore.ok };
			// then a restart 1 s later, and the events sent again with fresh signatures: the newest
			// ones the store keeps (History Size keys, less a margin for the hour marks beside them)
			await sleep(1_000);
			const executionsBefore = expected.t;
			const restartedAt = Date.now();
			await n8n.restart();
			await n8n.login();
			const accepted = [...acceptedT.values()];
			const keep = Math.max(0, (opts.historySize ?? DEFAULT_HISTORY_SIZE) - MARK_MARGIN);
			const again = accepted.slice(Math.max(0, accepted.length - keep));
			const redelivered = again.map((e) => signedDelivery(secret, e));
			const agent = keepAliveAgent(4);
			const answers = await pool(
				4,
				redelivered.length,
				async (i) => await post(agent, urls.t, redelivered[i]),
			);
			agent.destroy();
			const otherAnswers: Record<string, number> = {};
			for (const a of answers)
				if (a.status < 200 || a.status >= 300)
					otherAnswers[String(a.status || a.error)] =
						(otherAnswers[String(a.status || a.error)] ?? 0) + 1;
			const answered2xx = answers.length - Object.values(otherAnswers).reduce((n, k) => n + k, 0);
			expected.t += answered2xx;
			// the copies' executions, and the check n8n runs at the start (Catch Up Missed Orders)
			await waitForExecutions(n8n, wfs.t.id, expected.t + 1, 120_000);
			await sleep(2_000);
			const list = await allExecutions(bench.api, wfs.t.id, true);
			const acceptedIds = new Set(accepted.map((e) => e.id));
			const runsOf = new Map<string, number>();
			const split = { runs: 0, copies: 0, runsAfterRestart: 0, copiesAfterRestart: 0 };
			const checks = { executions: 0, withOutput: 0, items: 0 };
			let unexpected = 0;
			let refusedRan = 0;
			for (const e of list) {
				const ids = triggerOutputIdsOf(e);
				if (e.mode === 'trigger') {
					checks.executions++;
					checks.items += ids.length;
					if (ids.length > 0) checks.withOutput++;
					continue;
				}
				const after = Date.parse(String(e.startedAt)) >= restartedAt;
				if (ids.length === 0) {
					split.copies++;
					if (after) split.copiesAfterRestart++;
					continue;
				}
				split.runs++;
				if (after) split.runsAfterRestart++;
				for (const id of ids) {
					runsOf.set(id, (runsOf.get(id) ?? 0) + 1);
					if (!acceptedIds.has(id)) unexpected++;
					if (refusedIds.includes(id)) refusedRan++;
				}
			}
			const counts = accepted.map((e) => runsOf.get(e.id) ?? 0);
			guarantees.refusedRan = refusedRan;
			guarantees.t = {
				events: accepted.length,
				once: counts.filter((n) => n === 1).length,
				never: counts.filter((n) => n === 0).length,
				more: counts.filter((n) => n > 1).length,
				unexpected,
				runs: split.runs,
				copies: split.copies,
				copiesAnswered: copiesBefore.ok + answered2xx,
				checks,
				notSuccess: list.filter((e) => e.status !== 'success').length,
			};
			guarantees.restart = {
				accepted: accepted.length,
				sentAgain: redelivered.length,
				notSentOlder: accepted.length - redelivered.length,
				answered2xx,
				otherAnswers,
				runsAfter: split.runsAfterRestart,
				copiesAfter: split.copiesAfterRestart,
				executionsBefore,
				executionsAfter: list.length,
			};
			const staticData = (await n8n.rest<{ staticData?: unknown }>('GET', `/workflows/${wfs.t.id}`))
				.staticData;
			guarantees.staticBytes = Buffer.byteLength(JSON.stringify(staticData ?? null));
		}
		for (const v of opts.targets) {
			if (v === 't' && guarantees.t) continue;
			const list = await allExecutions(bench.api, wfs[v].id, v === 'l');
			guarantees.executions[v] = {
				accepted: expected[v],
				executions: list.length,
				notSuccess: list.filter((e) => e.status !== 'success').length,
				...(v === 'l'
					? {
							errors: list
								.filter((e) => e.status !== 'success')
								.reduce<Record<string, number>>((m, e) => {
									const message = String(e?.data?.resultData?.error?.message ?? e.status).slice(
										0,
										160,
									);
									m[message] = (m[message] ?? 0) + 1;
									return m;
								}, {}),
							withOutput: list.filter(
								(e) => (e?.data?.resultData?.runData?.Floor?.[0]?.data?.main?.[0] ?? []).length > 0,
							).length,
						}
					: {}),
			};
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
			isolates,
			guarantees,
		};
	} finally {
		await n8n.stop();
		await bench.sandbox.close();
		rmSync(userFolder, { recursive: true, force: true });
	}
}

async function main() {
	const perLevel = Number(arg('per-level', '120'));
	const sliceSize = Number(arg('slice', '40'));
	const warmUp = Number(arg('warm-up', String(sliceSize)));
	const levels = arg('levels', '1,4').split(',').map(Number);
	const settingNames = arg('settings', 'default,lazy').split(',').filter(Boolean);
	const targets = arg('targets', 'w,f,l,t').split(',').filter(Boolean) as Target[];
	const isolateDeliveries = Number(arg('isolate-deliveries', '40'));
	const maxLoad = Number(arg('max-load', '2.5'));
	const cpuProf = process.argv.includes('--cpu-prof') ? arg('cpu-prof', '') : undefined;
	const guarantees = !flag('no-guarantees');
	const floorCredential = flag('floor-credential');
	const historySize = process.argv.includes('--history-size')
		? Number(arg('history-size', ''))
		: undefined;
	const out = resolve(arg('out', RESULTS));
	for (const s of settingNames)
		if (!SETTINGS[s])
			throw new Error(`unknown setting ${s} (known: ${Object.keys(SETTINGS).join(', ')})`);
	for (const v of targets)
		if (!LABEL[v]) throw new Error(`unknown target ${v} (known: w, f, l, t)`);
	const started = Date.now();
	const loadAtStart = loadAverage();

	const results: SettingResult[] = [];
	for (const name of settingNames) {
		results.push(
			await measureSetting(name, SETTINGS[name].env, {
				perLevel,
				sliceSize,
				warmUp,
				levels,
				targets,
				isolateDeliveries,
				maxLoad,
				cpuProf,
				guarantees,
				floorCredential,
				historySize,
			}),
		);
	}
	const loadAtEnd = loadAverage();

	const lines: string[] = [];
	const args =
		`--per-level ${perLevel} --slice ${sliceSize}${warmUp === sliceSize ? '' : ` --warm-up ${warmUp}`} --levels ${levels.join(',')} --settings ${settingNames.join(',')} --targets ${targets.join(',')} ` +
		`--isolate-deliveries ${isolateDeliveries} --max-load ${maxLoad}${cpuProf !== undefined ? ` --cpu-prof ${cpuProf}` : ''}${guarantees ? '' : ' --no-guarantees'}${floorCredential ? ' --floor-credential' : ''}${historySize === undefined ? '' : ` --history-size ${historySize}`}` +
		`${out === RESULTS ? '' : ` --out ${relative(repoRoot, out)}`}`;
	lines.push(
		"# Marketplace Trigger v2 against the floor (the cheapest community trigger) and n8n's Webhook node, real n8n 2.41.1",
	);
	lines.push('');
	lines.push(...provenanceLines(`${COMMAND} ${args}`, started, results, loadAtStart, loadAtEnd));
	lines.push('');
	lines.push(
		`One n8n per setting (SQLite, regular mode, execution pruning off, \`N8N_METRICS=true\`), booted one after the other, with the targets' workflows (${targets.map((v) => v.toUpperCase()).join(', ')})`,
	);
	lines.push(
		"active: W = n8n's Webhook node v2 (POST, respond immediately); F = the floor, a typeVersion-2 community webhook trigger",
	);
	lines.push(
		'whose webhook() only returns the body as its item (no verification, no state, no registration; a second package the script',
	);
	lines.push(
		`writes and links next to ours${floorCredential ? "; its node carries T's Marketplace credential, so n8n checks that credential's access before each of its executions as it does for T's" : ''}); L = the limit for "once" on n8n's API: the`,
	);
	lines.push(
		"same floor trigger plus an `execute()` in the same node that records the run's key (the body's `id`) with n8n's deduplication helper,",
	);
	lines.push(
		"`this.helpers.checkProcessedAndRecord([key], 'node', { mode: 'entries', maxEntries: 2000 })` (one write per run, no expression, no lock,",
	);
	lines.push(
		`no batching), and outputs only an item whose key was new${floorCredential ? " (the same credential as F's and T's)" : ''}; T = Marketplace Trigger typeVersion 2 (order.created). Each -> No Operation.`,
	);
	lines.push(
		"Every delivery is signed with T's endpoint secret (Standard Webhooks headers, distinct webhook-id); W, F and L check nothing. Per concurrency level,",
	);
	lines.push(
		`${perLevel} deliveries per target in slices of ${sliceSize}, the targets' order rotating slice by slice (${targets.join(' ')}, then starting one later), from a`,
	);
	lines.push(
		"keep-alive load generator in this process. After each slice the script waits until n8n has finished the slice's executions;",
	);
	lines.push(
		'"end to end" = accepted / (send time + that drain), "responses" = accepted / send time. Latency = one response at the client.',
	);
	lines.push(
		"Ratios are to F and L (the goals) and to W, in the same n8n and concurrency. Shared 2-core machine (other developers' test runs):",
	);
	lines.push('compare within a setting and concurrency only, and read the load columns.');
	lines.push('');
	lines.push(...bootTable(results));
	lines.push('');
	lines.push('## Throughput and latency');
	lines.push('');
	lines.push(
		'| setting | concurrency | target | deliveries | 2xx | other | end to end (/s) | responses (/s) | p50 (ms) | p99 (ms) | / F end to end | / L end to end | / W end to end |',
	);
	lines.push('|---|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|');
	for (const r of results) {
		for (const row of r.rows) {
			for (const v of targets) {
				const t = row.tallies[v]!;
				const toF =
					v !== 'f' && row.tallies.f
						? `${v === 't' ? '**' : ''}${(e2e(t) / e2e(row.tallies.f)).toFixed(2)}x${v === 't' ? '**' : ''}`
						: '';
				const toL =
					v === 't' && row.tallies.l ? `**${(e2e(t) / e2e(row.tallies.l)).toFixed(2)}x**` : '';
				const toW =
					v !== 'w' && row.tallies.w ? `${(e2e(t) / e2e(row.tallies.w)).toFixed(2)}x` : '';
				lines.push(
					`| ${r.label} | ${row.level} | ${LABEL[v]} | ${tallyCells(t)} | ${toF} | ${toL} | ${toW} |`,
				);
			}
		}
	}
	lines.push('');
	if (targets.includes('t') && targets.includes('f')) {
		lines.push('## At a glance (end to end)');
		lines.push('');
		lines.push(`| setting | ratio | ${levels.map((l) => `concurrency ${l}`).join(' | ')} |`);
		lines.push(`|---|---|${levels.map(() => '---:').join('|')}|`);
		for (const r of results) {
			lines.push(
				`| ${r.label} | T / F | ${r.rows.map((row) => `**${(e2e(row.tallies.t!) / e2e(row.tallies.f!)).toFixed(2)}x**`).join(' | ')} |`,
			);
			lines.push(
				`| ${r.label} | T p99 / F p99 | ${r.rows.map((row) => `${(p99(row.tallies.t!) / p99(row.tallies.f!)).toFixed(2)}x`).join(' | ')} |`,
			);
			if (targets.includes('l')) {
				lines.push(
					`| ${r.label} | T / L | ${r.rows.map((row) => `**${(e2e(row.tallies.t!) / e2e(row.tallies.l!)).toFixed(2)}x**`).join(' | ')} |`,
				);
				lines.push(
					`| ${r.label} | T p99 / L p99 | ${r.rows.map((row) => `${(p99(row.tallies.t!) / p99(row.tallies.l!)).toFixed(2)}x`).join(' | ')} |`,
				);
				lines.push(
					`| ${r.label} | L / F | ${r.rows.map((row) => `${(e2e(row.tallies.l!) / e2e(row.tallies.f!)).toFixed(2)}x`).join(' | ')} |`,
				);
			}
			if (targets.includes('w')) {
				lines.push(
					`| ${r.label} | F / W | ${r.rows.map((row) => `${(e2e(row.tallies.f!) / e2e(row.tallies.w!)).toFixed(2)}x`).join(' | ')} |`,
				);
				lines.push(
					`| ${r.label} | T / W | ${r.rows.map((row) => `${(e2e(row.tallies.t!) / e2e(row.tallies.w!)).toFixed(2)}x`).join(' | ')} |`,
				);
			}
		}
		lines.push('');
		const goalRatios = results.flatMap((r) =>
			r.rows
				.filter((row) => GOAL.levels.includes(row.level))
				.map((row) => ({
					setting: r.label,
					level: row.level,
					ratio: e2e(row.tallies.t!) / e2e(row.tallies.f!),
					p99: p99(row.tallies.t!) / p99(row.tallies.f!),
				})),
		);
		const complete =
			settingNames.includes('default') &&
			settingNames.includes('lazy') &&
			GOAL.levels.every((l) => levels.includes(l));
		const met = goalRatios.every((g) => g.ratio >= GOAL.ratio && g.p99 <= P99_GOAL);
		lines.push(
			`Goal: T at least ${GOAL.ratio.toFixed(2)}x F end to end at concurrency ${GOAL.levels.join(' and ')}, under the defaults and with lazy acquire, and T's p99 within ${P99_GOAL}x F's. ` +
				`Measured ${goalRatios.map((g) => `${g.ratio.toFixed(2)}x, p99 ${g.p99.toFixed(2)}x (${g.setting}, ${g.level})`).join('; ')}: ` +
				(complete
					? `**${met ? 'met' : 'missed'}**.`
					: `${met ? 'met where measured' : '**missed**'} (not every setting and level of the goal was measured).`),
		);
		lines.push('');
		if (targets.includes('l')) {
			const limitRatios = results.flatMap((r) =>
				r.rows
					.filter((row) => GOAL.levels.includes(row.level))
					.map((row) => ({
						setting: r.label,
						level: row.level,
						ratio: e2e(row.tallies.t!) / e2e(row.tallies.l!),
						p99: p99(row.tallies.t!) / p99(row.tallies.l!),
					})),
			);
			const limitMet = limitRatios.every(
				(g) => g.ratio >= LIMIT_GOAL.ratio && g.p99 <= LIMIT_GOAL.p99,
			);
			lines.push(
				`Goal beside it: T at least ${LIMIT_GOAL.ratio.toFixed(2)}x L (the limit for once on n8n's API) end to end in the same cells, and T's p99 within ${LIMIT_GOAL.p99}x L's. ` +
					`Measured ${limitRatios.map((g) => `${g.ratio.toFixed(2)}x, p99 ${g.p99.toFixed(2)}x (${g.setting}, ${g.level})`).join('; ')}: ` +
					(complete
						? `**${limitMet ? 'met' : 'missed'}**.`
						: `${limitMet ? 'met where measured' : '**missed**'} (not every setting and level of the goal was measured).`),
			);
			lines.push('');
		}
	}
	if (isolateDeliveries > 0) {
		lines.push(
			`## Expression isolates per delivery (\`${ISOLATES}\` from /metrics; ${isolateDeliveries} deliveries per target at concurrency 1, nothing else running)`,
		);
		lines.push('');
		lines.push(`| setting | ${targets.map((v) => LABEL[v]).join(' | ')} |`);
		lines.push(`|---|${targets.map(() => '---:').join('|')}|`);
		for (const r of results) {
			lines.push(
				`| ${r.label} | ${targets.map((v) => (r.isolates[v] ? `${(r.isolates[v]!.acquired / r.isolates[v]!.deliveries).toFixed(2)} (${r.isolates[v]!.acquired})` : 'n/a')).join(' | ')} |`,
			);
		}
		lines.push('');
		lines.push(
			`For T the counter is read ${SETTLE_TAIL_MS / 1000} s after its last execution ended. Under the defaults one isolate of each delivery is its execution's.`,
		);
		lines.push('');
	}
	if (guarantees && targets.includes('t')) {
		lines.push('## Guarantees (after each setting)');
		lines.push('');
		lines.push(
			'Each event once: every event T accepted has exactly one execution with output (a run); a copy of an event is an execution',
		);
		lines.push(
			"without output (n8n starts it, the trigger's `execute()` finds the key in n8n's deduplication store and outputs nothing), counted",
		);
		lines.push(
			'apart and never as a run; the check of Catch Up Missed Orders that n8n runs at the restart (mode `trigger`) is counted apart too.',
		);
		lines.push('');
		lines.push(
			'| setting | events T accepted | exactly one run | no run | more than one run | output for an event never accepted | T runs (executions with output) | T copies (executions without output) / copies answered 2xx | checks (with output, items) | not success |',
		);
		lines.push('|---|---:|---:|---:|---:|---:|---:|---|---|---:|');
		for (const r of results) {
			const t = r.guarantees.t;
			if (!t) continue;
			lines.push(
				`| ${r.label} | ${fmt(t.events)} | ${fmt(t.once)} | ${t.never === 0 ? '0' : `**${fmt(t.never)}**`} | ${t.more === 0 ? '0' : `**${fmt(t.more)}**`} | ${t.unexpected === 0 ? '0' : `**${fmt(t.unexpected)}**`} | ${fmt(t.runs)} | ${fmt(t.copies)} / ${fmt(t.copiesAnswered)} | ${t.checks.executions} (${t.checks.withOutput}, ${t.checks.items}) | ${t.notSuccess} |`,
			);
		}
		lines.push('');
		const others = targets.filter((v) => v !== 't');
		if (others.length > 0) {
			lines.push(
				'| setting | target | accepted (2xx, warm-up included) | executions | with output (L: each delivery a new id, so all) | not success |',
			);
			lines.push('|---|---|---:|---:|---:|---:|');
			for (const r of results)
				for (const v of others) {
					const c = r.guarantees.executions[v]!;
					lines.push(
						`| ${r.label} | ${LABEL[v]} | ${fmt(c.accepted)} | ${fmt(c.executions)} | ${c.withOutput === undefined ? '' : c.withOutput === c.executions ? fmt(c.withOutput) : `**${fmt(c.withOutput)}**`} | ${c.notSuccess} |`,
					);
				}
			lines.push('');
		}
		lines.push(
			'| setting | refused requests (tampered, stale, unsigned): answers | executions with a refused event | n8n log lines "refused a delivery (401)" | copies while n8n ran: sent / answered 2xx | after the restart: sent again (older, not sent) | answered 2xx | other answers | runs after the restart | copies after the restart | T executions before / after |',
		);
		lines.push('|---|---|---:|---:|---|---|---:|---|---:|---:|---|');
		for (const r of results) {
			const g = r.guarantees;
			if (!g.restart || !g.refusals || !g.copiesBefore) continue;
			const other =
				Object.entries(g.restart.otherAnswers)
					.map(([k, n]) => `${k}: ${n}`)
					.join(', ') || '0';
			lines.push(
				`| ${r.label} | ${g.refusals.map((x) => `${x.kind} ${x.status}`).join(', ')} | ${g.refusedRan === 0 ? '0' : `**${g.refusedRan}**`} | ${g.refusedLogged} | ${g.copiesBefore.sent} / ${g.copiesBefore.answered2xx} | ${fmt(g.restart.sentAgain)} (${fmt(g.restart.notSentOlder)}) | ${fmt(g.restart.answered2xx)} | ${other} | ${g.restart.runsAfter === 0 ? '0' : `**${fmt(g.restart.runsAfter)}**`} | ${fmt(g.restart.copiesAfter)} | ${fmt(g.restart.executionsBefore)} / ${fmt(g.restart.executionsAfter)} |`,
			);
		}
		lines.push('');
		lines.push(
			`The refused requests: the body changed after signing, a timestamp 600 s old (tolerance 300 s), no \`webhook-signature\`; then one valid event. A last burst of 10 T deliveries was sent twice (the copies while n8n ran), and 1 s later n8n restarted; then the newest ${fmt((historySize ?? DEFAULT_HISTORY_SIZE) - MARK_MARGIN)} events T had accepted were sent again with fresh signatures (History Size, ${fmt(historySize ?? DEFAULT_HISTORY_SIZE)} keys${historySize === undefined ? ' by default' : ' (--history-size)'}, less ${MARK_MARGIN} for the hour marks beside them; an older event's key has left the store, so it would run again, as the option's description says). "Executions after" counts the copies' executions and the check's.`,
		);
		lines.push('');
		const held = results.every((r) => {
			const t = r.guarantees.t;
			const g = r.guarantees;
			return (
				t !== undefined &&
				t.once === t.events &&
				t.unexpected === 0 &&
				t.copies === t.copiesAnswered &&
				t.notSuccess === 0 &&
				(g.refusals ?? []).every((x) => x.status === 401) &&
				g.refusedRan === 0 &&
				g.restart?.runsAfter === 0 &&
				Object.keys(g.restart.otherAnswers).length === 0
			);
		});
		lines.push(
			`Guarantees: ${held ? '**held**' : '**not all held**'} (every accepted event exactly one run; every copy answered 2xx an execution without output; every refused request 401 and no execution; nothing sent again after the restart ran; every execution a success).`,
		);
		const others2 = targets.filter((v) => v !== 't');
		if (others2.length > 0) {
			const counted = results.every((r) =>
				others2.every((v) => {
					const c = r.guarantees.executions[v];
					return (
						c !== undefined &&
						c.executions === c.accepted &&
						c.notSuccess === 0 &&
						(c.withOutput === undefined || c.withOutput === c.executions)
					);
				}),
			);
			lines.push('');
			lines.push(
				`${others2.map((v) => v.toUpperCase()).join(', ')}: ${counted ? 'every accepted delivery one execution, every execution a success' : '**executions differ from the deliveries accepted, or some failed**'}${others2.includes('l') ? (counted ? "; every L execution output its item (each delivery's id was new)" : '') : ''}.`,
			);
			for (const r of results) {
				const errors = r.guarantees.executions.l?.errors ?? {};
				if (Object.keys(errors).length > 0)
					lines.push(
						'',
						`L's failed executions (${r.label}): ${Object.entries(errors)
							.map(([m, n]) => `${n} x \`${m}\``)
							.join('; ')}.`,
					);
			}
		}
		lines.push('');
	}
	writeResults(out, lines);
}

runBench(main);

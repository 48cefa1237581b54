/**
 * Shared plumbing of the real-n8n benchmark scripts (trigger.bench.ts, soak.ts, outage.ts): the
 * sandbox and one n8n 2.41.1 (test/e2e/n8n.ts) with this package, the sandbox's demo key as a
 * credential, workflow builders, Standard Webhooks signing, a keep-alive load generator and
 * execution counting. Not a test; nothing here asserts.
 */
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { Agent, request } from 'node:http';
import { cpus, loadavg, totalmem } from 'node:os';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

import { startSandbox, type SandboxHandle } from '../sandbox';
import { startN8n, type N8nHandle, type PublicApi, type StartN8nOptions } from '../e2e/n8n';
import type { Json } from '../json';

export const repoRoot = resolve(__dirname, '..', '..');
export const PKG = 'n8n-nodes-marketplace-management';
export const TRIGGER_TYPE = `${PKG}.marketplaceTrigger`;
export const sleep = async (ms: number) => await new Promise((r) => setTimeout(r, ms));

export interface Bench {
	sandbox: SandboxHandle;
	n8n: N8nHandle;
	api: PublicApi;
	credentialId: string;
}

/**
 * Environment for the benchmark servers: no pruning of executions (n8n keeps at most 10,000 by
 * default and prunes in the background, which would make counts wrong). The log level stays info:
 * start-up is detected by the info line "Editor is now accessible via".
 */
export const BENCH_ENV: Record<string, string> = {
	EXECUTIONS_DATA_PRUNE: 'false',
};

/**
 * The package n8n loads: this work tree, or the checkout named by BENCH_PACKAGE_ROOT (a clone of a
 * commit built on its own, so a run measures that commit even while someone edits and rebuilds this
 * work tree; it uses this tree's node_modules through a symlink).
 */
export function benchPackageRoot(): string {
	return process.env.BENCH_PACKAGE_ROOT ? resolve(process.env.BENCH_PACKAGE_ROOT) : repoRoot;
}

/** The n8n settings the throughput benches measure, each in its own n8n: defaults, and lazy isolate acquisition. */
export const SETTINGS: Record<string, { label: string; env: Record<string, string> }> = {
	default: { label: 'default', env: {} },
	lazy: { label: 'lazy acquire', env: { N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE: 'true' } },
};

export async function bootBench(opts: Partial<StartN8nOptions> = {}): Promise<Bench> {
	const sandbox = await startSandbox({ port: 0, host: '127.0.0.1', allowHttpLoopback: true });
	const n8n = await startN8n({
		packageRoot: benchPackageRoot(),
		...opts,
		env: { ...BENCH_ENV, ...(opts.env ?? {}) },
	});
	await n8n.setupOwner();
	await n8n.login();
	const credentialId = await n8n.createCredential({
		name: 'Marketplace sandbox (bench)',
		type: 'marketplaceApi',
		data: { baseUrl: sandbox.baseUrl, apiKey: sandbox.demoApiKey },
	});
	const api = await n8n.publicApi();
	return { sandbox, n8n, api, credentialId };
}

/**
 * Our trigger (order.created) followed by a No Operation node. The trigger has one version, 2; its
 * options are left at their defaults (Catch Up Missed Orders on) unless `options` are given.
 */
export function triggerWorkflow(
	id: string,
	webhookId: string,
	credentialId: string,
	withNoOp = true,
	options?: Record<string, unknown>,
) {
	const nodes: unknown[] = [
		{
			id: `${id}-trigger`,
			name: 'Order Created',
			type: TRIGGER_TYPE,
			typeVersion: 2,
			position: [0, 0],
			webhookId,
			credentials: { marketplaceApi: { id: credentialId, name: 'Marketplace sandbox (bench)' } },
			parameters: { eventTypes: ['order.created'], ...(options ? { options } : {}) },
		},
	];
	if (withNoOp)
		nodes.push({
			id: `${id}-noop`,
			name: 'Done',
			type: 'n8n-nodes-base.noOp',
			typeVersion: 1,
			position: [260, 0],
			parameters: {},
		});
	return {
		id,
		name: `bench: marketplace trigger ${id}`,
		nodes,
		connections: withNoOp
			? { 'Order Created': { main: [[{ node: 'Done', type: 'main', index: 0 }]] } }
			: {},
		settings: { executionOrder: 'v1' },
	};
}

/** n8n's built-in Webhook node (POST, respond immediately) followed by the same No Operation node. */
export function webhookNodeWorkflow(id: string, path: string, withNoOp = true) {
	const nodes: unknown[] = [
		{
			id: `${id}-webhook`,
			name: 'Webhook',
			type: 'n8n-nodes-base.webhook',
			typeVersion: 2,
			position: [0, 0],
			webhookId: randomUUID(),
			parameters: { httpMethod: 'POST', path, responseMode: 'onReceived', options: {} },
		},
	];
	if (withNoOp)
		nodes.push({
			id: `${id}-noop`,
			name: 'Done',
			type: 'n8n-nodes-base.noOp',
			typeVersion: 1,
			position: [260, 0],
			parameters: {},
		});
	return {
		id,
		name: `bench: webhook node ${id}`,
		nodes,
		connections: withNoOp
			? { Webhook: { main: [[{ node: 'Done', type: 'main', index: 0 }]] } }
			: {},
		settings: { executionOrder: 'v1' },
	};
}

export async function activate(bench: Bench, workflowId: string): Promise<void> {
	await bench.api.activateWorkflow(workflowId);
	await bench.n8n.waitForActivation(workflowId);
}

/** The endpoint the trigger registered at the sandbox for this production URL (with its secret). */
export async function endpointFor(bench: Bench, url: string) {
	const found = (await bench.sandbox.control.endpoints()).find((e) => e.url === url);
	if (!found) throw new Error(`no endpoint registered for ${url}`);
	return found;
}

// ---- Standard Webhooks signing, the sandbox's own scheme ----

export interface Delivery {
	id: string;
	body: string;
	headers: Record<string, string>;
}

export function signature(secret: string, id: string, timestamp: number, body: string): string {
	const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
	return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** Order ids of hand-made events: one order per order.created event, as the service sends them. */
let nextOrderId = 1_000_001;

export function orderCreatedEvent(id = `evt_${randomUUID()}`, orderId = nextOrderId++) {
	return {
		id,
		type: 'order.created',
		createdAt: new Date().toISOString(),
		data: { brandId: 1, orderId },
	};
}

/** A signed delivery of `event`, timestamped `nowSeconds + offsetSeconds`. */
export function signedDelivery(secret: string, event: { id: string }, offsetSeconds = 0): Delivery {
	const body = JSON.stringify(event);
	const timestamp = Math.floor(Date.now() / 1000) + offsetSeconds;
	return {
		id: event.id,
		body,
		headers: {
			'content-type': 'application/json',
			'user-agent': 'MarketplaceManagement-Webhooks/1',
			'webhook-id': event.id,
			'webhook-timestamp': String(timestamp),
			'webhook-signature': signature(secret, event.id, timestamp, body),
		},
	};
}

// ---- load generator ----

export interface PostResult {
	status: number;
	ms: number;
	error?: string;
}

export function keepAliveAgent(maxSockets: number): Agent {
	return new Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
}

/** One POST over the agent; resolves with the status (0 on a network error) and the latency. */
export function post(
	agent: Agent,
	url: string,
	delivery: { body: string; headers: Record<string, string> },
): Promise<PostResult> {
	const started = performance.now();
	const u = new URL(url);
	return new Promise((resolvePost) => {
		const req = request(
			{
				agent,
				host: u.hostname,
				port: u.port,
				path: u.pathname,
				method: 'POST',
				headers: { ...delivery.headers, 'content-length': Buffer.byteLength(delivery.body) },
			},
			(res) => {
				res.resume();
				res.on('end', () =>
					resolvePost({ status: res.statusCode ?? 0, ms: performance.now() - started }),
				);
			},
		);
		req.on('error', (e) =>
			resolvePost({ status: 0, ms: performance.now() - started, error: e.message }),
		);
		req.end(delivery.body);
	});
}

/** Runs `tasks` with at most `concurrency` at a time, in order of start. */
export async function pool<T>(
	concurrency: number,
	count: number,
	task: (i: number) => Promise<T>,
): Promise<T[]> {
	const results = new Array<T>(count);
	let next = 0;
	const worker = async () => {
		while (next < count) {
			const i = next++;
			results[i] = await task(i);
		}
	};
	await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
	return results;
}

export function percentile(sorted: number[], p: number): number {
	if (sorted.length === 0) return NaN;
	const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
	return sorted[i];
}

// ---- executions ----

/** Number of executions of a workflow n8n has stored (internal REST, which answers a count). */
export async function executionCount(
	n8n: N8nHandle,
	workflowId: string,
	status?: string[],
): Promise<number> {
	const filter = JSON.stringify(status ? { workflowId, status } : { workflowId });
	const r = await n8n.rest<{ count: number; estimated?: boolean }>(
		'GET',
		`/executions?filter=${encodeURIComponent(filter)}&limit=1`,
	);
	return r.count;
}

/** Polls until the workflow has `expected` finished executions and none running; returns the wait. */
export async function waitForExecutions(
	n8n: N8nHandle,
	workflowId: string,
	expected: number,
	timeoutMs = 600_000,
): Promise<number> {
	const started = Date.now();
	let last = -1;
	let lastChange = Date.now();
	while (true) {
		const done = await executionCount(n8n, workflowId, ['success', 'error', 'crashed', 'canceled']);
		if (done >= expected) return Date.now() - started;
		if (done !== last) {
			last = done;
			lastChange = Date.now();
		}
		// no progress for 30 s: give up (a lost execution would otherwise wait the whole timeout)
		if (Date.now() - lastChange > 30_000 || Date.now() - started > timeoutMs)
			return Date.now() - started;
		await sleep(50);
	}
}

/** Every execution of a workflow through the public API (paged, 250 at a time), optionally with data. */
export async function allExecutions(
	api: PublicApi,
	workflowId: string,
	includeData = false,
): Promise<Json[]> {
	const all: Json[] = [];
	let cursor: string | undefined;
	do {
		const q = new URLSearchParams({ workflowId, limit: '250', includeData: String(includeData) });
		if (cursor) q.set('cursor', cursor);
		const page = await api.request<{ data: Json[]; nextCursor?: string | null }>(
			'GET',
			`/executions?${q.toString()}`,
		);
		all.push(...page.data);
		cursor = page.nextCursor ?? undefined;
	} while (cursor);
	return all;
}

/** The event id our trigger emitted in an execution (output of the node "Order Created"). */
export function eventIdOf(execution: Json): string | undefined {
	return execution?.data?.resultData?.runData?.['Order Created']?.[0]?.data?.main?.[0]?.[0]?.json
		?.id;
}

// ---- reporting ----

export function codeVersion(): string {
	try {
		const root = benchPackageRoot();
		const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root })
			.toString()
			.trim();
		const dirty = execFileSync('git', ['status', '--porcelain', '--', 'nodes', 'credentials'], {
			cwd: root,
		})
			.toString()
			.trim();
		const where =
			root === repoRoot
				? ''
				: ` (a separate checkout built on its own, BENCH_PACKAGE_ROOT=${root})`;
		return `commit ${head}${where}${dirty ? ' with uncommitted changes under nodes/ or credentials/' : ' (no uncommitted changes under nodes/ or credentials/)'}`;
	} catch {
		return 'unknown commit';
	}
}

function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
	let entries;
	try {
		entries = readdirSync(dir, { withFileTypes: true });
	} catch {
		return [];
	}
	return entries
		.flatMap((e) =>
			e.isDirectory()
				? filesUnder(join(dir, e.name), keep)
				: keep(e.name)
					? [join(dir, e.name)]
					: [],
		)
		.sort();
}

/**
 * What n8n actually loads: when dist/ (nodes and credentials) was built, a short hash of its .js
 * files, and which source files under nodes/ or credentials/ changed after that build (so are not
 * in what was measured). codeVersion() describes the work tree; this describes dist/.
 */
export function distVersion(): {
	builtAt: string;
	hash: string;
	newerSources: string[];
	text: string;
} {
	const root = benchPackageRoot();
	const built = ['nodes', 'credentials'].flatMap((d) =>
		filesUnder(join(root, 'dist', d), (n) => n.endsWith('.js')),
	);
	if (built.length === 0)
		return {
			builtAt: 'never',
			hash: 'none',
			newerSources: [],
			text: `${relative(repoRoot, join(root, 'dist')) || 'dist'}/ holds no built nodes`,
		};
	const hash = createHash('sha256');
	let builtMs = 0;
	for (const f of built) {
		hash.update(relative(root, f)).update(readFileSync(f));
		builtMs = Math.max(builtMs, statSync(f).mtimeMs);
	}
	const short = hash.digest('hex').slice(0, 12);
	const newerSources = ['nodes', 'credentials']
		.flatMap((d) => filesUnder(join(root, d), (n) => n.endsWith('.ts') || n.endsWith('.json')))
		.filter((f) => statSync(f).mtimeMs > builtMs)
		.map((f) => relative(root, f));
	const builtAt = new Date(builtMs).toISOString();
	const text =
		`${root === repoRoot ? 'dist/' : `${join(root, 'dist')}/`} built ${builtAt} (sha256 of its .js files ${short}); ` +
		(newerSources.length
			? `source files changed after that build, so not in what was measured: ${newerSources.join(', ')}`
			: 'no source file under nodes/ or credentials/ changed after that build');
	return { builtAt, hash: short, newerSources, text };
}

/** The 1/5/15-minute load averages, as `uptime` prints them. */
export function loadAverage(): string {
	return loadavg()
		.map((l) => l.toFixed(2))
		.join(', ');
}

/** CPU model and count, memory, Node version and platform, for a results file's header. */
export function machineFacts(): string {
	const c = cpus();
	return `${c.length} x ${c[0]?.model.trim() ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Node ${process.version}, ${process.platform}/${process.arch}`;
}

/**
 * Waits (polling every `pollMs`, at most `maxWaitMs`) until the 1-minute load average is at most
 * `maxLoad`, so a run does not start on top of someone else's heavy job. Returns the load averages
 * it started under, how long it waited and whether the limit was reached (false: it gave up waiting).
 */
export async function waitForQuietMachine(
	maxLoad = 1.5,
	maxWaitMs = 600_000,
	pollMs = 30_000,
): Promise<{ load: string; waitedMs: number; quiet: boolean }> {
	const started = Date.now();
	while (loadavg()[0] > maxLoad && Date.now() - started < maxWaitMs) {
		console.log(
			`[bench] 1-minute load ${loadavg()[0].toFixed(2)} > ${maxLoad}: waiting ${pollMs / 1000} s`,
		);
		await sleep(pollMs);
	}
	return { load: loadAverage(), waitedMs: Date.now() - started, quiet: loadavg()[0] <= maxLoad };
}

export const fmt = (n: number, digits = 0) =>
	Number.isFinite(n)
		? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
		: 'n/a';

export function shuffle<T>(items: T[], seed: number): T[] {
	// mulberry32: a reproducible order for a given seed
	let a = seed >>> 0;
	const rand = () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
	const out = [...items];
	for (let i = out.length - 1; i > 0; i--) {
		const j = Math.floor(rand() * (i + 1));
		[out[i], out[j]] = [out[j], out[i]];
	}
	return out;
}

// ---- the floor: the cheapest community webhook trigger ----

/** npm name and node type of the floor package written by writeFloorPackage. */
export const FLOOR_PKG = 'n8n-nodes-bench-floor';
export const FLOOR_TYPE = `${FLOOR_PKG}.benchFloorTrigger`;
/**
 * The limit for "once" on n8n's API (floor.bench.ts target L): the floor trigger plus an execute()
 * that records each item's key (the body's `id`) with n8n's deduplication helper and outputs only
 * the items whose key was new.
 */
export const FLOOR_ONCE_TYPE = `${FLOOR_PKG}.benchFloorOnceTrigger`;
/** The row the limit keeps (mode 'entries'), as the Marketplace Trigger's History Size by default. */
export const FLOOR_ONCE_MAX_ENTRIES = 2_000;

/**
 * Writes the cheapest community trigger possible into `dir` (a package.json with an `n8n` section
 * and plain-JS node files, no dependencies): a typeVersion-2 webhook trigger whose webhook()
 * only starts the workflow with the body. No verification, no state, no registration
 * (no webhookMethods), so n8n does for it only what it does for any community webhook start node.
 * Beside it, the same trigger with an execute() (FLOOR_ONCE_TYPE): n8n's own idiom for "once" in the
 * cheapest way its API allows: one checkProcessedAndRecord call per run with the run's keys (the
 * bodies' `id`; mode 'entries', FLOOR_ONCE_MAX_ENTRIES), no expression, no lock, no batching across
 * runs; it outputs only the items whose key was new.
 * Link `dir` into the user folder (linkCommunityPackage) before n8n starts. Returns `dir`.
 */
export function writeFloorPackage(dir: string): string {
	mkdirSync(join(dir, 'nodes'), { recursive: true });
	writeFileSync(
		join(dir, 'package.json'),
		JSON.stringify(
			{
				name: FLOOR_PKG,
				version: '0.0.1',
				private: true,
				keywords: ['n8n-community-node-package'],
				n8n: {
					n8nNodesApiVersion: 1,
					nodes: ['nodes/BenchFloorTrigger.node.js', 'nodes/BenchFloorOnceTrigger.node.js'],
				},
			},
			null,
			'\t',
		),
	);
	writeFileSync(
		join(dir, 'nodes', 'BenchFloorTrigger.node.js'),
		`'use strict';
class BenchFloorTrigger {
	constructor() {
		this.description = {
			displayName: 'Bench Floor Trigger',
			name: 'benchFloorTrigger',
			group: ['trigger'],
			version: 2,
			description: 'Starts the workflow with the request body; nothing else',
			defaults: { name: 'Bench Floor Trigger' },
			inputs: [],
			outputs: ['main'],
			webhooks: [{ name: 'default', httpMethod: 'POST', responseMode: 'onReceived', path: 'webhook' }],
			// only used when its workflow sets one (floorWorkflow with a credential id)
			credentials: [{ name: 'marketplaceApi', required: false }],
			properties: [],
		};
	}
	async webhook() {
		return { workflowData: [[{ json: this.getBodyData() }]] };
	}
}
module.exports = { BenchFloorTrigger };
`,
	);
	writeFileSync(
		join(dir, 'nodes', 'BenchFloorOnceTrigger.node.js'),
		`'use strict';
const { BenchFloorTrigger } = require('./BenchFloorTrigger.node.js');
class BenchFloorOnceTrigger extends BenchFloorTrigger {
	constructor() {
		super();
		this.description = {
			...this.description,
			displayName: 'Bench Floor Once Trigger',
			name: 'benchFloorOnceTrigger',
			description: "Starts the workflow with the request body; outputs it only the first time n8n's deduplication store sees its id",
			defaults: { name: 'Bench Floor Once Trigger' },
		};
	}
	async execute() {
		const items = this.getInputData();
		const keys = items.map((item) => String(item.json.id));
		const result = await this.helpers.checkProcessedAndRecord(keys, 'node', {
			mode: 'entries',
			maxEntries: ${FLOOR_ONCE_MAX_ENTRIES},
		});
		const fresh = new Set(result.new.map(String));
		return [items.filter((item, i) => fresh.delete(keys[i]))];
	}
}
module.exports = { BenchFloorOnceTrigger };
`,
	);
	return dir;
}

/**
 * The floor trigger (typeVersion 2; with `type` FLOOR_ONCE_TYPE the limit's) followed by the same No Operation node as the other workflows;
 * with `credentialId`, its node carries that Marketplace credential, as any trigger that calls the
 * service must (n8n then checks the credential's access before every execution).
 */
export function floorWorkflow(
	id: string,
	webhookId: string,
	credentialId?: string,
	type: typeof FLOOR_TYPE | typeof FLOOR_ONCE_TYPE = FLOOR_TYPE,
) {
	return {
		id,
		name: `bench: ${type === FLOOR_TYPE ? 'floor' : 'floor once'} trigger ${id}`,
		nodes: [
			{
				id: `${id}-trigger`,
				name: 'Floor',
				type,
				typeVersion: 2,
				position: [0, 0],
				webhookId,
				...(credentialId
					? {
							credentials: {
								marketplaceApi: { id: credentialId, name: 'Marketplace sandbox (bench)' },
							},
						}
					: {}),
				parameters: {},
			},
			{
				id: `${id}-noop`,
				name: 'Done',
				type: 'n8n-nodes-base.noOp',
				typeVersion: 1,
				position: [260, 0],
				parameters: {},
			},
		],
		connections: { Floor: { main: [[{ node: 'Done', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	};
}

/**
 * Counters of n8n's Prometheus endpoint (`/metrics`, served with N8N_METRICS=true), by metric name
 * (labels summed). n8n 2.41.1 counts the expression isolates (bridges) it hands out as
 * `n8n_expression_pool_acquired_total` whatever the engine settings.
 */
export async function metricCounters(baseUrl: string): Promise<Record<string, number>> {
	const text = await (await fetch(`${baseUrl}/metrics`)).text();
	const out: Record<string, number> = {};
	for (const line of text.split('\n')) {
		const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{[^}]*\})? ([0-9.eE+-]+)$/.exec(line);
		if (m) out[m[1]] = (out[m[1]] ?? 0) + Number(m[2]);
	}
	return out;
}

// ---- tallies and results files of the throughput benches ----

/** `--name value` from the command line, or `fallback`. */
export function argOf(name: string, fallback: string): string {
	const i = process.argv.indexOf(`--${name}`);
	return i >= 0 ? process.argv[i + 1] : fallback;
}

/** What one target's deliveries at one concurrency came to. */
export interface Tally {
	sent: number;
	ok: number;
	/** answers other than 2xx, by status (or network error) */
	other: Record<string, number>;
	latencies: number[];
	sendMs: number;
	/** waiting, after each slice, until n8n had finished the slice's executions */
	drainMs: number;
}
export const newTally = (): Tally => ({
	sent: 0,
	ok: 0,
	other: {},
	latencies: [],
	sendMs: 0,
	drainMs: 0,
});
/** accepted / (send time + drain) */
export const endToEndRate = (t: Tally) => t.ok / ((t.sendMs + t.drainMs) / 1000);
/** accepted / send time */
export const responseRate = (t: Tally) => t.ok / (t.sendMs / 1000);

/** Adds a slice's answers to `tally`; returns how many were 2xx. */
export function addToTally(tally: Tally, results: PostResult[], sendMs: number): number {
	tally.sendMs += sendMs;
	let ok = 0;
	for (const r of results) {
		tally.sent++;
		tally.latencies.push(r.ms);
		if (r.status >= 200 && r.status < 300) ok++;
		else
			tally.other[String(r.status || r.error)] =
				(tally.other[String(r.status || r.error)] ?? 0) + 1;
	}
	tally.ok += ok;
	return ok;
}

/** The cells deliveries | 2xx | other | end to end | responses | p50 | p99 of a tally. */
export function tallyCells(t: Tally): string {
	const sorted = [...t.latencies].sort((a, b) => a - b);
	const other =
		Object.entries(t.other)
			.map(([k, n]) => `${k}: ${n}`)
			.join(', ') || '0';
	return `${fmt(t.sent)} | ${fmt(t.ok)} | ${other} | ${fmt(endToEndRate(t), 1)} | ${fmt(responseRate(t), 1)} | ${fmt(percentile(sorted, 50), 1)} | ${fmt(percentile(sorted, 99), 1)}`;
}

/** How one n8n boot of a bench went: the machine's load around it and how long it took. */
export interface BootReport {
	label: string;
	env: Record<string, string>;
	loadBefore: string;
	waitedMs: number;
	quiet: boolean;
	loadAfter: string;
	bootMs: number;
	runMs: number;
}

/** The table of a results file that says, per n8n boot, its environment, the load and the times. */
export function bootTable(reports: BootReport[]): string[] {
	const lines = [
		'| setting | n8n environment | load before | load after measuring | boot + setup | measured |',
		'|---|---|---|---|---:|---:|',
	];
	for (const r of reports) {
		const env =
			Object.entries(r.env)
				.map(([k, v]) => `\`${k}=${v}\``)
				.join(', ') || '(defaults)';
		const waited =
			r.waitedMs >= 1000
				? ` (waited ${(r.waitedMs / 1000).toFixed(0)} s${r.quiet ? '' : ', still above the limit'})`
				: '';
		lines.push(
			`| ${r.label} | ${env} | ${r.loadBefore}${waited} | ${r.loadAfter} | ${(r.bootMs / 1000).toFixed(1)} s | ${(r.runMs / 1000).toFixed(0)} s |`,
		);
	}
	return lines;
}

/**
 * The lines under a results file's title: the command that made it (`command` with its arguments),
 * when, the machine, the code measured, what n8n loaded at each boot, the load at start and end.
 */
export function provenanceLines(
	command: string,
	startedMs: number,
	boots: Array<{ label: string; dist: ReturnType<typeof distVersion> }>,
	loadAtStart: string,
	loadAtEnd: string,
): string[] {
	const root = process.env.BENCH_PACKAGE_ROOT;
	const hashes = new Set(boots.map((b) => b.dist.hash));
	return [
		`Generated by \`${root ? `BENCH_PACKAGE_ROOT=${root} ` : ''}${command}\` (after \`.ci/with-node24 npm run build\`${root ? ' in that checkout' : ''}) on ${new Date().toISOString()}.`,
		`Machine: ${machineFacts()}. Code measured: ${codeVersion()}. Whole run ${((Date.now() - startedMs) / 1000).toFixed(0)} s.`,
		hashes.size === 1
			? `What n8n loaded, the same at every boot: ${boots[0].dist.text}.`
			: `**What n8n loaded differed between boots**: ${boots.map((b) => `${b.label}: ${b.dist.text}`).join('; ')}.`,
		`Load average (1, 5, 15 min): ${loadAtStart} at the start, ${loadAtEnd} at the end; per setting below.`,
	];
}

/** Prints a results file and writes it to `out`. */
export function writeResults(out: string, lines: string[]): void {
	const text = lines.join('\n');
	console.log(text);
	mkdirSync(join(out, '..'), { recursive: true });
	writeFileSync(out, text);
	console.log(`[bench] wrote ${out}`);
}

/** Runs a bench's main and exits (n8n's helpers may leave handles open); 1 on an error. */
export function runBench(main: () => Promise<void>): void {
	main().then(
		() => process.exit(0),
		(e) => {
			console.error(e);
			process.exit(1);
		},
	);
}

/**
 * Request-efficiency and memory benchmark of the Marketplace action node: the real node in n8n-core's
 * WorkflowExecute (test/engine/harness) against a fresh sandbox per scenario, over loopback HTTP.
 * Requests are counted from the sandbox's own request log, never from the client.
 *
 * Run: .ci/with-node24 node -r ts-node/register/transpile-only test/bench/requests.bench.ts
 *
 * Scenarios
 * 1. Product > Get Many, Return All over N = 10,000 products in scope: ceil(N/100) requests expected.
 * 2. Fulfillment > Mark Packed of 1,000 input items (one Created order id each) with batch sizes
 *    100, 50 and 7: ceil(1000/batch) requests expected, every order packed.
 * 3. Return All of 30,000 products under a scaled quota (q = 120 per w = 6 s): no 429, and the wall
 *    time against the quota floor (defined in the printed output).
 * 4. Peak memory of Return All over 50,000 (and 10,000) products, in a child process started with
 *    --expose-gc so the figures are that run's own (the sandbox stays in this process).
 *
 * 5. Three concurrent Return Alls of 10,000 products on one credential under q = 120 per w = 6 s, 85% of
 *    the first window already spent by another client with the same key: no 429, and the wall time
 *    against the quota floor.
 *
 * Scenarios 1 and 2 use the service's quota (120 per 60 s); 4 uses a quota high enough (1,000,000) that
 * pacing never waits, so only memory is measured. Products are generated for brand 1 so that the
 * demo key's scope (brands 1-5, 320 seeded products) holds exactly N.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { MarketplaceApi } from '../../credentials/MarketplaceApi.credentials';
import { runNode, type RunNodeResult } from '../engine/harness';
import { startSandbox, type SandboxHandle, type SandboxOptions } from '../sandbox';
import type { LoggedRequest } from '../sandbox/requestLog';
import { spendQuota } from '../sandbox/testkit';

// Required with its extension: plain `require` resolution would pick Marketplace.node.json (the
// codex file beside it) before the .ts source that ts-node compiles.
const { Marketplace } =
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	require('../../nodes/Marketplace/Marketplace.node.ts') as typeof import('../../nodes/Marketplace/Marketplace.node');

const COMMAND =
	'.ci/with-node24 node -r ts-node/register/transpile-only test/bench/requests.bench.ts';
const RESULTS = path.join(__dirname, 'results', 'requests.md');
const PRODUCTS_PATH = '/v1/products';
const PACKED_PATH = '/v1/fulfillment/orders/packed';
const SCOPE = new Set([1, 2, 3, 4, 5]);

async function runMarketplace(
	sandbox: { baseUrl: string; apiKey: string },
	parameters: INodeParameters,
	inputItems?: INodeExecutionData[],
): Promise<RunNodeResult & { ms: number; items: INodeExecutionData[] }> {
	const started = performance.now();
	const result = await runNode({
		node: new Marketplace(),
		credentialTypes: [new MarketplaceApi()],
		credentials: { marketplaceApi: { baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey } },
		parameters,
		inputItems,
	});
	const ms = performance.now() - started;
	return { ...result, ms, items: result.outputs?.[0] ?? [] };
}

/** Makes the demo key's scope hold exactly `total` products (seed + generated for brand 1). */
async function productsInScope(sandbox: SandboxHandle, total: number): Promise<void> {
	const seeded = ((await sandbox.control.state('products')) as IDataObject[]).filter((p) =>
		SCOPE.has(p.brandId as number),
	).length;
	if (total > seeded) await sandbox.control.generateProducts({ count: total - seeded, brandId: 1 });
	const now = ((await sandbox.control.state('products')) as IDataObject[]).filter((p) =>
		SCOPE.has(p.brandId as number),
	).length;
	if (now !== total) throw new Error(`expected ${total} products in scope, have ${now}`);
}

async function withSandbox<T>(
	options: SandboxOptions,
	fn: (sandbox: SandboxHandle) => Promise<T>,
): Promise<T> {
	const sandbox = await startSandbox({ port: 0, ...options });
	try {
		return await fn(sandbox);
	} finally {
		await sandbox.close();
	}
}

const on = (log: LoggedRequest[], p: string) => log.filter((r) => r.path === p);
const count429 = (log: LoggedRequest[]) => log.filter((r) => r.status === 429).length;
const seconds = (ms: number) => (ms / 1000).toFixed(2);
const int = (n: number) => n.toLocaleString('en-US');
const check = (ok: boolean) => (ok ? 'yes' : '**NO**');

function median(values: number[]): number {
	const sorted = [...values].sort((a, b) => a - b);
	const mid = sorted.length >> 1;
	return sorted.length === 0
		? NaN
		: sorted.length % 2
			? sorted[mid]
			: (sorted[mid - 1] + sorted[mid]) / 2;
}

const returnAll: INodeParameters = { resource: 'product', operation: 'getAll', returnAll: true };

// ---------------------------------------------------------------- scenario 1

async function scenarioReturnAll(n: number): Promise<string[]> {
	return await withSandbox({}, async (sandbox) => {
		await productsInScope(sandbox, n);
		await sandbox.control.clearRequests();
		const r = await runMarketplace(
			{ baseUrl: sandbox.baseUrl, apiKey: sandbox.demoApiKey },
			returnAll,
		);
		if (r.error) throw new Error(`return all failed: ${r.error.message}`);
		const log = await sandbox.control.requests();
		const requests = on(log, PRODUCTS_PATH).length;
		const expected = Math.ceil(n / 100);
		const ids = new Set(r.items.map((i) => i.json.id));
		return [
			'## 1. Product > Get Many, Return All',
			'',
			"Sandbox quota 120 per 60 s (the service's). Requests counted from the sandbox log (path /v1/products).",
			'',
			'| products in scope | requests | expected ceil(N/100) | met | output items | distinct ids | 429s | wall time (s) |',
			'|---:|---:|---:|:-:|---:|---:|---:|---:|',
			`| ${int(n)} | ${requests} | ${expected} | ${check(requests === expected && r.items.length === n && ids.size === n)} | ${int(r.items.length)} | ${int(ids.size)} | ${count429(log)} | ${seconds(r.ms)} |`,
			'',
		];
	});
}

// ---------------------------------------------------------------- scenario 2

async function scenarioMarkPacked(orders: number, batchSizes: number[]): Promise<string[]> {
	const rows: string[] = [];
	for (const batchSize of batchSizes) {
		rows.push(
			await withSandbox({}, async (sandbox) => {
				const { firstId, lastId } = await sandbox.control.generateOrders({
					count: orders,
					brandId: 1,
					status: 'Created',
				});
				const ids = Array.from({ length: lastId - firstId + 1 }, (_, i) => firstId + i);
				await sandbox.control.clearRequests();
				const r = await runMarketplace(
					{ baseUrl: sandbox.baseUrl, apiKey: sandbox.demoApiKey },
					{
						resource: 'fulfillment',
						operation: 'markPacked',
						orderIds: '={{ $json.orderId }}',
						options: { batchSize },
					},
					ids.map((orderId) => ({ json: { orderId } })),
				);
				if (r.error) throw new Error(`mark packed failed: ${r.error.message}`);
				const log = await sandbox.control.requests();
				const sent = on(log, PACKED_PATH);
				const requests = sent.length;
				const expected = Math.ceil(orders / batchSize);
				const failed = r.items.filter((i) => i.json.success !== true).length;
				const stored = (await sandbox.control.state('orders')) as IDataObject[];
				const packed = stored.filter(
					(o) => (o.id as number) >= firstId && (o.id as number) <= lastId && o.status === 'Packed',
				).length;
				const biggest = Math.max(
					...sent.map((s) => (JSON.parse(s.body) as { orderIds: number[] }).orderIds.length),
				);
				const ok =
					requests === expected && r.items.length === orders && failed === 0 && packed === orders;
				return `| ${batchSize} | ${int(orders)} | ${requests} | ${expected} | ${check(ok)} | ${biggest} | ${int(r.items.length)} | ${failed} | ${int(packed)} | ${count429(log)} | ${seconds(r.ms)} |`;
			}),
		);
	}
	return [
		'## 2. Fulfillment > Mark Packed, one Created order id per input item',
		'',
		"Fresh sandbox per batch size, quota 120 per 60 s (the service's): 143 requests (batch 7) exceed one window, so that run waits for the",
		'next window (the Pacer), which is its wall time. "orders packed" is read back from the sandbox state.',
		'',
		'| batch size | input items | requests | expected ceil(1000/batch) | met | largest batch sent | output items | failed items | orders packed | 429s | wall time (s) |',
		'|---:|---:|---:|---:|:-:|---:|---:|---:|---:|---:|---:|',
		...rows,
		'',
	];
}

// ---------------------------------------------------------------- scenario 3

async function scenarioQuota(n: number, quota: number, windowSeconds: number): Promise<string[]> {
	return await withSandbox({ quota, windowSeconds }, async (sandbox) => {
		await productsInScope(sandbox, n);
		await sandbox.control.clearRequests();
		const r = await runMarketplace(
			{ baseUrl: sandbox.baseUrl, apiKey: sandbox.demoApiKey },
			returnAll,
		);
		const endMs = Date.now();
		if (r.error) throw new Error(`return all failed: ${r.error.message}`);
		const log = on(await sandbox.control.requests(), PRODUCTS_PATH);
		const requests = log.length;
		const rejected = count429(log);
		const at = log.map((e) => Date.parse(e.at));
		const firstMs = at[0];
		const { windows, lastWindowRequests, perRequestMs, simpleFloorMs, floorMs } = quotaFloor(
			at,
			quota,
			windowSeconds,
		);
		const measuredMs = endMs - firstMs;
		// When did each window's first request arrive, relative to the first request (the sandbox
		// opens a window at the first request after the previous one ended)?
		const windowStarts: string[] = [];
		for (let w = 0; w < windows; w++) {
			const i = w * quota;
			windowStarts.push(`${((at[i] - firstMs) / 1000).toFixed(3)} s`);
		}
		const ratio = measuredMs / floorMs;
		const ratioSimple = measuredMs / simpleFloorMs;
		return [
			`## 3. Return All of ${int(n)} products under a scaled quota (q = ${quota} per w = ${windowSeconds} s)`,
			'',
			`Floor: with R requests, q per window of w s, the earliest finish after the first request is`,
			`**F = (ceil(R/q) - 1) × w + L × m** — the first request opens window 1; window k (k ≥ 2) cannot open before (k-1)·w;`,
			`the last window's L = R - (ceil(R/q) - 1)·q requests then take at least L × m, where m is the median gap`,
			`between consecutive requests inside a window (this client's own time per request, measured in this run).`,
			`The simpler **F0 = (ceil(R/q) - 1) × w** is also shown. Measured: first request's arrival at the sandbox`,
			`(its log) to the node's end (same process, same clock). Target: measured ≤ 1.1 × F.`,
			'',
			'| R requests | expected ceil(N/100) | output items | 429s | windows | L | m (ms) | F0 (s) | F (s) | measured (s) | measured / F | measured / F0 | ≤ 1.1 F | node wall time (s) |',
			'|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:-:|---:|',
			`| ${requests} | ${Math.ceil(n / 100)} | ${int(r.items.length)} | ${rejected} | ${windows} | ${lastWindowRequests} | ${perRequestMs.toFixed(1)} | ${seconds(simpleFloorMs)} | ${seconds(floorMs)} | ${seconds(measuredMs)} | ${ratio.toFixed(3)} | ${ratioSimple.toFixed(3)} | ${check(ratio <= 1.1 && rejected === 0)} | ${seconds(r.ms)} |`,
			'',
			`First request of each window, after the first request: ${windowStarts.join(', ')}.`,
			'',
		];
	});
}

/**
 * The earliest finish that a quota of q per w s allows R requests, arriving at the times `at`:
 * F = (ceil(R/q) - 1) × w + L × m (see the text scenario 3 prints).
 */
function quotaFloor(at: number[], quota: number, windowSeconds: number) {
	const requests = at.length;
	const windows = Math.ceil(requests / quota);
	const lastWindowRequests = requests - (windows - 1) * quota;
	// Gaps between consecutive requests inside one window (no pacing wait between them): the time
	// this client needs per request, response handling included.
	const gaps: number[] = [];
	for (let i = 1; i < at.length; i++) if (i % quota !== 0) gaps.push(at[i] - at[i - 1]);
	const perRequestMs = median(gaps);
	const simpleFloorMs = (windows - 1) * windowSeconds * 1000;
	return {
		windows,
		lastWindowRequests,
		perRequestMs,
		simpleFloorMs,
		floorMs: simpleFloorMs + lastWindowRequests * perRequestMs,
	};
}

// ---------------------------------------------------------------- scenario 5

/**
 * `runs` executions of Return All at once on one credential (so one pacer), after another client
 * has spent `spent` of the first window's `quota` requests with the same key.
 */
async function scenarioShared(
	n: number,
	runs: number,
	quota: number,
	windowSeconds: number,
	spent: number,
): Promise<string[]> {
	return await withSandbox({ quota, windowSeconds }, async (sandbox) => {
		await productsInScope(sandbox, n);
		await sandbox.control.clearRequests();
		const other = await spendQuota(sandbox, spent);
		if (other.some((status) => status !== 200))
			throw new Error(`the other client's requests were refused: ${other.join(',')}`);
		const results = await Promise.all(
			Array.from(
				{ length: runs },
				async () =>
					await runMarketplace({ baseUrl: sandbox.baseUrl, apiKey: sandbox.demoApiKey }, returnAll),
			),
		);
		const endMs = Date.now();
		const failed = results.find((r) => r.error);
		if (failed) throw new Error(`return all failed: ${failed.error!.message}`);
		const log = await sandbox.control.requests();
		const ours = on(log, PRODUCTS_PATH);
		const at = log.map((e) => Date.parse(e.at)).sort((a, b) => a - b);
		const { windows, lastWindowRequests, perRequestMs, simpleFloorMs, floorMs } = quotaFloor(
			at,
			quota,
			windowSeconds,
		);
		const measuredMs = endMs - at[0];
		const rejected = count429(log);
		const ratio = measuredMs / floorMs;
		const items = results.map((r) => int(r.items.length)).join(' / ');
		return [
			`## 5. ${runs} concurrent Return Alls of ${int(n)} products on one credential, ${Math.round((100 * spent) / quota)}% of the first window spent by another client (q = ${quota} per w = ${windowSeconds} s)`,
			'',
			`Another client first sends ${spent} requests (GET /v1/brands) with the same key; then ${runs} executions of the node run`,
			'at once in this process, sharing the credential and so its pacer. R counts every request the sandbox saw, the other',
			"client's included; F, F0, L and m as in scenario 3, measured from the other client's first request to the end of the",
			'last execution. Target: zero 429 and measured ≤ 1.1 × F.',
			'',
			'| R requests (ours + other) | output items per run | 429s | windows | L | m (ms) | F0 (s) | F (s) | measured (s) | measured / F | ≤ 1.1 F, zero 429 |',
			'|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:-:|',
			`| ${at.length} (${ours.length} + ${spent}) | ${items} | ${rejected} | ${windows} | ${lastWindowRequests} | ${perRequestMs.toFixed(1)} | ${seconds(simpleFloorMs)} | ${seconds(floorMs)} | ${seconds(measuredMs)} | ${ratio.toFixed(3)} | ${check(ratio <= 1.1 && rejected === 0)} |`,
			'',
		];
	});
}

// ---------------------------------------------------------------- scenario 4 (parent side)

interface MemoryReport {
	items: number;
	ms: number;
	baselineRss: number;
	baselineHeapUsed: number;
	peakRss: number;
	peakHeapUsed: number;
	samples: number;
	afterGcHeapUsed: number;
	error?: string;
}

function runMemoryChild(baseUrl: string, apiKey: string): Promise<MemoryReport> {
	return new Promise((resolve, reject) => {
		const child = spawn(
			process.execPath,
			[
				'--expose-gc',
				'-r',
				'ts-node/register/transpile-only',
				__filename,
				'--memory-child',
				baseUrl,
				apiKey,
			],
			{
				stdio: ['ignore', 'pipe', 'inherit'],
				env: { ...process.env, TS_NODE_TRANSPILE_ONLY: 'true' },
			},
		);
		let out = '';
		child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
		child.on('error', reject);
		child.on('exit', (code) => {
			const line = out.split('\n').find((l) => l.startsWith('MEMORY '));
			if (code !== 0 || !line) return reject(new Error(`memory child exited ${code}: ${out}`));
			resolve(JSON.parse(line.slice('MEMORY '.length)) as MemoryReport);
		});
	});
}

async function scenarioMemory(sizes: number[]): Promise<string[]> {
	const rows: string[] = [];
	for (const n of sizes) {
		rows.push(
			await withSandbox({ quota: 1_000_000, windowSeconds: 60 }, async (sandbox) => {
				await productsInScope(sandbox, n);
				await sandbox.control.clearRequests();
				const m = await runMemoryChild(sandbox.baseUrl, sandbox.demoApiKey);
				if (m.error) throw new Error(`memory run failed: ${m.error}`);
				const requests = on(await sandbox.control.requests(), PRODUCTS_PATH).length;
				const mb = (b: number) => (b / 1024 / 1024).toFixed(1);
				const retainedPerItem = (m.afterGcHeapUsed - m.baselineHeapUsed) / m.items;
				return `| ${int(n)} | ${int(m.items)} | ${requests} | ${mb(m.baselineRss)} | ${mb(m.peakRss)} | ${mb(m.peakRss - m.baselineRss)} | ${mb(m.baselineHeapUsed)} | ${mb(m.peakHeapUsed)} | ${mb(m.afterGcHeapUsed)} | ${Math.round(retainedPerItem)} | ${m.samples} | ${seconds(m.ms)} |`;
			}),
		);
	}
	return [
		'## 4. Peak memory of Return All (child process, `node --expose-gc`)',
		'',
		'The sandbox runs in the parent; the child loads n8n-core and the node, runs `gc()` and takes the baseline, then runs',
		'the workflow while sampling `process.memoryUsage()` every 5 ms (and once at the end). Quota 1,000,000 per 60 s so pacing',
		'never waits. "heapUsed after gc" is measured after the run with its result (all output items, as n8n keeps them in',
		'runData) still referenced; "retained/item" = (heapUsed after gc - baseline heapUsed) / items. MB = 2^20 bytes.',
		'',
		'| products | output items | requests | baseline RSS (MB) | peak RSS (MB) | RSS growth (MB) | baseline heapUsed (MB) | peak heapUsed (MB) | heapUsed after gc, result held (MB) | retained/item (B) | samples | wall time (s) |',
		'|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
		...rows,
		'',
	];
}

// ---------------------------------------------------------------- scenario 4 (child side)

async function memoryChild(baseUrl: string, apiKey: string): Promise<void> {
	const gc = (globalThis as { gc?: () => void }).gc;
	if (!gc) throw new Error('run the memory child with --expose-gc');
	// Load everything the run needs before the baseline (the engine's DI container included).
	const { ensureEngine } = await import('../engine/harness');
	ensureEngine();
	gc();
	gc();
	const base = process.memoryUsage();
	let peakRss = base.rss;
	let peakHeapUsed = base.heapUsed;
	let samples = 0;
	const sample = () => {
		const now = process.memoryUsage();
		samples++;
		if (now.rss > peakRss) peakRss = now.rss;
		if (now.heapUsed > peakHeapUsed) peakHeapUsed = now.heapUsed;
	};
	const timer = setInterval(sample, 5);
	let report: MemoryReport;
	try {
		const r = await runMarketplace({ baseUrl, apiKey }, returnAll);
		sample();
		clearInterval(timer);
		gc();
		const afterGcHeapUsed = process.memoryUsage().heapUsed;
		report = {
			items: r.items.length,
			ms: r.ms,
			baselineRss: base.rss,
			baselineHeapUsed: base.heapUsed,
			peakRss,
			peakHeapUsed,
			samples,
			afterGcHeapUsed,
			error: r.error?.message,
		};
		// keep the result alive until after the measurement above
		if (r.items.length < 0) console.log(r);
	} finally {
		clearInterval(timer);
	}
	process.stdout.write(`MEMORY ${JSON.stringify(report)}\n`);
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
	const childAt = process.argv.indexOf('--memory-child');
	if (childAt !== -1) {
		await memoryChild(process.argv[childAt + 1], process.argv[childAt + 2]);
		return;
	}
	const started = new Date();
	const sections: string[] = [];
	const log = (lines: string[]) => {
		console.log(lines.join('\n'));
		sections.push(...lines);
	};
	log(await scenarioReturnAll(10_000));
	log(await scenarioMarkPacked(1_000, [100, 50, 7]));
	log(await scenarioQuota(30_000, 120, 6));
	log(await scenarioMemory([10_000, 50_000]));
	log(await scenarioShared(10_000, 3, 120, 6, 102));

	const git = (...args: string[]) => {
		try {
			return execFileSync('git', args, { encoding: 'utf8' }).trim();
		} catch {
			return '?';
		}
	};
	const dirty = git('status', '--porcelain', '--', 'nodes', 'credentials')
		.split('\n')
		.filter((l) => l.trim() !== '');
	const header = [
		'# Request efficiency and memory of the Marketplace action node',
		'',
		`Generated by \`${COMMAND}\` on ${started.toISOString()} (Node ${process.version}, ${process.platform}/${process.arch}).`,
		"The real node in n8n-core's WorkflowExecute (test/engine/harness) against a fresh sandbox per scenario (test/sandbox)",
		"over loopback HTTP; request counts and 429s come from the sandbox's request log. One run on a noisy 2-core machine:",
		'compare figures within this file only.',
		`Code measured: commit ${git('rev-parse', '--short', 'HEAD')}${dirty.length ? ` plus uncommitted changes in the work tree: ${dirty.map((l) => `\`${l.trim().replace(/^\S+\s+/, '')}\``).join(', ')}` : ' (no uncommitted changes under nodes/ or credentials/)'}.`,
		'',
	];
	mkdirSync(path.dirname(RESULTS), { recursive: true });
	writeFileSync(RESULTS, [...header, ...sections].join('\n'));
	console.log(`written ${path.relative(process.cwd(), RESULTS)}`);
}

main().then(
	() => process.exit(0),
	(error: unknown) => {
		console.error(error);
		process.exit(1);
	},
);

/**
 * The Marketplace Trigger in n8n 2.41.1's queue mode: main (production webhooks off), one worker,
 * two `n8n webhook` processors behind one URL (a round-robin reverse proxy, test/e2e/reverseProxy.ts,
 * that forwards only the service's deliveries, chunked, with X-Forwarded-* headers, and drops n8n's
 * own requests to that URL, as a load balancer n8n cannot reach from inside does), PostgreSQL and
 * Redis, all on loopback and started here. The sandbox delivers to the proxy; the tests also post
 * signed deliveries to one processor or the other directly.
 *
 *   .ci/queue-services && .ci/with-node24 npm run build && .ci/with-node24 npx jest -c test/queue/jest.config.js
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import {
	allExecutions,
	codeVersion,
	eventIdOf,
	orderCreatedEvent,
	pool,
	signedDelivery,
	triggerWorkflow,
	type Delivery,
} from '../bench/n8nBench';
import { nodeOutput, ordersWhileDown, sleep, Timings, waitFor, type MissedOrder } from '../e2e/kit';
import { freePort, startN8n, type N8nHandle, type PublicApi } from '../e2e/n8n';
import { fromService, startReverseProxy, type ReverseProxy } from '../e2e/reverseProxy';
import { startSandbox, type SandboxHandle } from '../sandbox';
import { USER_AGENT } from '../sandbox/sender';
import { startPostgres, startRedis, type Service } from './services';
import type { Json } from '../json';

const repoRoot = resolve(__dirname, '..', '..');
const WORKFLOW_ID = 'queueModeTrigger1';
const WEBHOOK_ID = '2b7c9d40-6e1f-4a3b-8c5d-9e0f1a2b3c4d';
// RECORD_RESULTS=1 writes the measurement into the repository's results, otherwise into tmp/
const RESULTS =
	process.env.RECORD_RESULTS === '1'
		? join(repoRoot, 'test', 'bench', 'results', 'queue-mode.md')
		: join(repoRoot, 'tmp', 'queue-mode.md');
const timings = new Timings();

let pg: Service;
let redis: Service;
let proxy: ReverseProxy;
let sandbox: SandboxHandle;
let main: N8nHandle;
let worker: N8nHandle;
const processors: N8nHandle[] = [];
let api: PublicApi;
let userFolder: string;
let secret: string;
let productionUrl: string;

const processorPorts: number[] = [];
const urlAt = (i: number) => `http://127.0.0.1:${processorPorts[i]}/webhook/${WEBHOOK_ID}/webhook`;

async function send(url: string, delivery: Delivery): Promise<{ status: number; body: Json }> {
	const res = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
	const text = await res.text();
	let body: unknown = text;
	try {
		body = JSON.parse(text);
	} catch {}
	return { status: res.status, body };
}

/** Event ids of the workflow's executions (finished ones), with how often each ran. */
async function runsById(): Promise<Map<string, number>> {
	const counts = new Map<string, number>();
	for (const e of await allExecutions(api, WORKFLOW_ID, true)) {
		const id = eventIdOf(e);
		if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
	}
	return counts;
}

/** Waits until every id has run at least once and nothing new came for `quietMs`; returns the counts. */
async function settledRuns(ids: string[], quietMs = 2500): Promise<Map<string, number>> {
	await waitFor(
		`executions of ${ids.length} events`,
		async () => {
			const runs = await runsById();
			return ids.every((id) => runs.has(id)) ? true : undefined;
		},
		60_000,
		300,
	);
	await sleep(quietMs);
	return await runsById();
}

const twice = (runs: Map<string, number>, ids: string[]) =>
	ids.filter((id) => (runs.get(id) ?? 0) > 1);

beforeAll(async () => {
	await timings.time('PostgreSQL + Redis', async () => {
		[pg, redis] = await Promise.all([startPostgres(), startRedis()]);
	});
	sandbox = await startSandbox({ port: 0, host: '127.0.0.1', allowHttpLoopback: true });
	processorPorts.push(await freePort(), await freePort());
	proxy = await startReverseProxy({
		targets: () => processorPorts.map((port) => ({ port })),
		accept: fromService(USER_AGENT),
	});
	productionUrl = `http://127.0.0.1:${proxy.port}/webhook/${WEBHOOK_ID}/webhook`;
	userFolder = mkdtempSync(join(tmpdir(), 'n8n-queue-'));
	const env = {
		DB_TYPE: 'postgresdb',
		DB_POSTGRESDB_HOST: '127.0.0.1',
		DB_POSTGRESDB_PORT: String(pg.port),
		DB_POSTGRESDB_USER: 'n8n',
		DB_POSTGRESDB_DATABASE: 'n8n',
		DB_POSTGRESDB_PASSWORD: '',
		EXECUTIONS_MODE: 'queue',
		QUEUE_BULL_REDIS_HOST: '127.0.0.1',
		QUEUE_BULL_REDIS_PORT: String(redis.port),
		// every process builds the trigger's URL from this, so they all register and serve the same one
		N8N_WEBHOOK_URL: `http://127.0.0.1:${proxy.port}/`,
		N8N_LOG_LEVEL: 'info',
	};
	await timings.time('n8n main (migrations on PostgreSQL)', async () => {
		main = await startN8n({
			packageRoot: repoRoot,
			userFolder,
			env: { ...env, N8N_DISABLE_PRODUCTION_MAIN_PROCESS: 'true' },
		});
	});
	await timings.time('n8n worker + 2 webhook processors', async () => {
		const started = await Promise.all([
			startN8n({ packageRoot: repoRoot, userFolder, command: 'worker', env }),
			startN8n({
				packageRoot: repoRoot,
				userFolder,
				command: 'webhook',
				port: processorPorts[0],
				env,
			}),
			startN8n({
				packageRoot: repoRoot,
				userFolder,
				command: 'webhook',
				port: processorPorts[1],
				env,
			}),
		]);
		worker = started[0];
		processors.push(started[1], started[2]);
	});
	await main.setupOwner();
	await main.login();
	const credentialId = await main.createCredential({
		name: 'Marketplace sandbox (bench)',
		type: 'marketplaceApi',
		data: { baseUrl: sandbox.baseUrl, apiKey: sandbox.demoApiKey },
	});
	api = await main.publicApi();
	const workflow = triggerWorkflow(WORKFLOW_ID, WEBHOOK_ID, credentialId);
	await main.createWorkflow({ ...workflow, name: 'queue mode: order arrives' });
}, 300_000);

afterAll(async () => {
	const logDir = join(repoRoot, 'tmp');
	mkdirSync(logDir, { recursive: true });
	const named: Array<[string, N8nHandle | undefined]> = [
		['main', main],
		['worker', worker],
		['webhook-1', processors[0]],
		['webhook-2', processors[1]],
	];
	for (const [name, handle] of named)
		if (handle) writeFileSync(join(logDir, `queue-${name}.log`), handle.logs());
	await Promise.all([...processors, worker, main].filter(Boolean).map(async (h) => await h.stop()));
	await Promise.all([proxy?.stop(), sandbox?.close(), pg?.stop(), redis?.stop()]);
	if (userFolder) rmSync(userFolder, { recursive: true, force: true });
	console.log(`[queue] timings:\n${timings.report()}`);
}, 120_000);

test('activation through main registers exactly one endpoint for the shared URL', async () => {
	await timings.time('activate + publication', async () => {
		await api.activateWorkflow(WORKFLOW_ID);
		await main.waitForActivation(WORKFLOW_ID);
	});
	const endpoints = await sandbox.control.endpoints();
	expect(endpoints.map((e) => [e.url, e.status, e.eventTypes])).toEqual([
		[productionUrl, 'Enabled', ['order.created']],
	]);
	secret = endpoints[0].secret as string;
});

test('events delivered by the service through the proxy run once each, on the worker', async () => {
	const made = [];
	for (let i = 0; i < 4; i++)
		made.push((await sandbox.control.createOrder({ brandId: 1 })).event.id as string);
	const runs = await settledRuns(made);
	expect(made.map((id) => runs.get(id))).toEqual([1, 1, 1, 1]);
	// both processors received deliveries, and they ran on the worker (main runs no production webhooks)
	expect(new Set(proxy.forwarded)).toEqual(new Set(processorPorts));
	const executions = await allExecutions(api, WORKFLOW_ID, false);
	expect(executions.every((e) => e.status === 'success' && e.mode === 'webhook')).toBe(true);
	expect(worker.logs()).toMatch(/Worker started execution|started execution/i);
	const deliveries = (await sandbox.control.deliveries()).filter((d) =>
		made.includes(d.eventId as string),
	);
	expect(deliveries.map((d) => d.status)).toEqual([
		'Delivered',
		'Delivered',
		'Delivered',
		'Delivered',
	]);
});

test('an event accepted at processor 1 and sent again to processor 2 later starts nothing new', async () => {
	const event = orderCreatedEvent();
	expect(await send(urlAt(0), signedDelivery(secret, event))).toEqual({
		status: 200,
		body: { received: true, id: event.id },
	});
	await sleep(3000);
	expect(await send(urlAt(1), signedDelivery(secret, event))).toEqual({
		status: 200,
		body: { received: true, ignored: 'duplicate', id: event.id },
	});
	const runs = await settledRuns([event.id]);
	expect(runs.get(event.id)).toBe(1);
});

test('40 events alternating between the processors (4 at a time), then each sent again to the other one: 40 runs', async () => {
	const events = Array.from({ length: 40 }, () => orderCreatedEvent());
	const first = await pool(
		4,
		events.length,
		async (i) => await send(urlAt(i % 2), signedDelivery(secret, events[i])),
	);
	expect(first.map((r) => r.status)).toEqual(events.map(() => 200));
	// a late copy comes at the service's first retry gap (1 minute) at the earliest; 3 s is the bound claimed
	await sleep(3000);
	const again = await pool(
		4,
		events.length,
		async (i) => await send(urlAt((i + 1) % 2), signedDelivery(secret, events[i])),
	);
	expect(again.map((r) => r.body.ignored)).toEqual(events.map(() => 'duplicate'));
	const runs = await settledRuns(events.map((e) => e.id));
	expect(
		twice(
			runs,
			events.map((e) => e.id),
		),
	).toEqual([]);
});

test('a processor restart loses no ids: five accepted, silence, restart, sent again to both processors', async () => {
	const events = Array.from({ length: 5 }, () => orderCreatedEvent());
	const answers = await Promise.all(
		events.map(async (e) => await send(urlAt(0), signedDelivery(secret, e))),
	);
	expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
	// each accepted delivery's key is saved by n8n before its run starts (once.ts resultSavedThenRun)
	await settledRuns(
		events.map((e) => e.id),
		1500,
	);
	await timings.time('webhook processor 1 restart', async () => await processors[0].restart());
	const replays = await Promise.all(
		events.flatMap((e) => [0, 1].map(async (i) => await send(urlAt(i), signedDelivery(secret, e)))),
	);
	expect(replays.map((r) => r.body.ignored)).toEqual(replays.map(() => 'duplicate'));
	const runs = await settledRuns(events.map((e) => e.id));
	expect(
		twice(
			runs,
			events.map((e) => e.id),
		),
	).toEqual([]);
});

/** Stops every handle, runs `during` while all are down, then starts them again (in parallel). */
async function whileAllStopped(handles: N8nHandle[], during: () => Promise<void>): Promise<void> {
	let stopped = 0;
	let release: () => void = () => {};
	const allDown = new Promise<void>((resolve) => (release = resolve));
	let failure: unknown;
	await Promise.all(
		handles.map(
			async (h) =>
				await h.restart(async () => {
					if (++stopped < handles.length) return await allDown;
					try {
						await during();
					} catch (error) {
						failure = error;
					} finally {
						release();
					}
				}),
		),
	);
	if (failure) throw failure;
}

test("both webhook processors down while three orders are created: each runs once, brought by the service's retry a minute later or by a catch-up check first; later orders run alone", async () => {
	const itemsOf = (execution: Json) =>
		nodeOutput(execution as { data?: Json }, 'Order Created') as Array<{
			id: string;
			caughtUp?: boolean;
			data: { orderId: number };
		}>;
	const executions = async () => await allExecutions(api, WORKFLOW_ID, true);
	const ranOf = async (orderIds: number[]) =>
		(await executions()).flatMap((e) =>
			itemsOf(e)
				.filter((i) => orderIds.includes(i.data.orderId))
				.map((i) => ({ orderId: i.data.orderId, caughtUp: i.caughtUp === true })),
		);
	let missed: MissedOrder[] = [];
	await timings.time(
		'both webhook processors down (3 orders), then up',
		async () =>
			await whileAllStopped(processors, async () => {
				const down = await ordersWhileDown(sandbox, 1, 3);
				missed = down.missed;
				// the load balancer answers 502 for each first attempt: nothing behind it
				expect(down.firstAttempts.map((a) => a.statusCode)).toEqual(missed.map(() => 502));
			}),
	);
	const ids = missed.map((m) => m.orderId);
	// the service's retries (1 minute after their first attempts), through the load balancer to either processor
	await sandbox.control.advanceClock(61);
	const ran = await waitFor(
		'each missed order to run',
		async () => {
			const runs = await ranOf(ids);
			return ids.every((id) => runs.some((r) => r.orderId === id)) ? runs : undefined;
		},
		60_000,
		500,
	);
	await sleep(2_500);
	expect((await ranOf(ids)).map((r) => r.orderId).sort((x, y) => x - y)).toEqual(
		[...ids].sort((x, y) => x - y),
	);
	console.log(
		`[queue] processors down: ${ran.filter((r) => r.caughtUp).length} of ${ids.length} missed orders brought by a catch-up check, the rest by the service's retry`,
	);
	const retries = (await sandbox.control.deliveries()).filter((d) =>
		missed.some((m) => m.eventId === d.eventId),
	);
	expect(retries.map((d) => [d.status, d.attempts, d.responseStatusCode])).toEqual(
		missed.map(() => ['Delivered', 2, 200]),
	);
	// two more orders, one at each processor: each runs alone
	const runsBefore = (await executions()).length;
	const more: string[] = [];
	for (let i = 0; i < 2; i++)
		more.push((await sandbox.control.createOrder({ brandId: 1 })).event.id as string);
	await settledRuns(more);
	expect((await executions()).length).toBe(runsBefore + 2);
});

test('the same event at both processors at once: measured by offset between the two copies', async () => {
	const offsets = [0, 20, 50, 100, 250, 1000];
	const perOffset = 10;
	const rows: Array<{ offset: number; twice: number }> = [];
	for (const offset of offsets) {
		const events = Array.from({ length: perOffset }, () => orderCreatedEvent());
		for (const event of events) {
			const a = send(urlAt(0), signedDelivery(secret, event));
			await sleep(offset);
			const b = send(urlAt(1), signedDelivery(secret, event));
			const answers = await Promise.all([a, b]);
			expect(answers.map((x) => x.status)).toEqual([200, 200]);
		}
		const runs = await settledRuns(
			events.map((e) => e.id),
			1500,
		);
		rows.push({
			offset,
			twice: twice(
				runs,
				events.map((e) => e.id),
			).length,
		});
	}
	mkdirSync(join(RESULTS, '..'), { recursive: true });
	writeFileSync(
		RESULTS,
		`# One event at two webhook processors at once (n8n queue mode)

Generated by \`.ci/queue-services && .ci/with-node24 npm run build && RECORD_RESULTS=1 .ci/with-node24 npx jest -c test/queue/jest.config.js\`
(test "the same event at both processors at once") on ${new Date().toISOString()}; ${cpus().length} cores, load average
${loadavg()
	.map((l) => l.toFixed(2))
	.join(' / ')} at the end. Code measured: ${codeVersion()}.

n8n 2.41.1 in queue mode: main, one worker, two \`n8n webhook\` processors, PostgreSQL and Redis on loopback. For each
offset, ${perOffset} distinct events, each posted (signed) to processor 1 and, that many milliseconds later, to processor 2;
"ran twice" counts events with two executions.

| offset between the copies | events | ran twice |
|---:|---:|---:|
${rows.map((r) => `| ${r.offset} ms | ${perOffset} | ${r.twice} |`).join('\n')}

Each processor checks the ids in the workflow's static data, which n8n loads per request and saves, with the id of
each accepted delivery, before that delivery's run starts; the run then checks and records the id in n8n's deduplication
store (run.ts). Neither is an atomic check-and-set across processes (n8n gives a node none), so a copy that reaches the
other processor before either shows the first can run again. Within one processor, concurrent copies wait for each other
and run once. The load average includes whatever else ran on the machine.
`,
	);
	console.log(`[queue] simultaneous copies: ${JSON.stringify(rows)}`);
	expect(rows[rows.length - 1].twice).toBe(0);
}, 600_000);

test('orders created while the workflow was unpublished: the first check after publishing again, answered at a webhook processor, runs each once on the worker; their events sent to both processors start nothing', async () => {
	const caughtUpIds = async () =>
		(await allExecutions(api, WORKFLOW_ID, true)).flatMap((e) =>
			(
				nodeOutput(e as { data?: Json }, 'Order Created') as Array<{
					caughtUp?: boolean;
					data: { orderId: number };
				}>
			)
				.filter((i) => i.caughtUp === true)
				.map((i) => i.data.orderId),
		);
	const caughtBefore = await caughtUpIds();
	await api.deactivateWorkflow(WORKFLOW_ID);
	await waitFor(
		'the endpoint to be deleted',
		async () => ((await sandbox.control.endpoints()).length === 0 ? true : undefined),
		30_000,
	);
	const made = [
		await sandbox.control.createOrder({ brandId: 1 }),
		await sandbox.control.createOrder({ brandId: 1 }),
	];
	const ids = made.map((m) => m.order.id as number);
	const publishedAt = Date.now();
	await api.activateWorkflow(WORKFLOW_ID);
	await main.waitForActivation(WORKFLOW_ID);
	secret = (await sandbox.control.endpoints())[0].secret as string;
	// trigger()'s first check comes 20-40 s after the start
	await waitFor(
		'the orders caught up',
		async () => {
			const caught = await caughtUpIds();
			return ids.every((id) => caught.includes(id)) ? true : undefined;
		},
		90_000,
		500,
	);
	console.log(
		`[queue] published again -> the orders made meanwhile ran ${((Date.now() - publishedAt) / 1000).toFixed(1)} s later, with no delivery`,
	);
	const copies = await Promise.all(
		made.flatMap((m) =>
			[0, 1].map(
				async (i) => await send(urlAt(i), signedDelivery(secret, m.event as { id: string })),
			),
		),
	);
	expect(copies.map((c) => c.status)).toEqual(copies.map(() => 200));
	await sleep(2_500);
	const caught = (await caughtUpIds()).filter((id) => !caughtBefore.includes(id));
	expect(caught.sort((x, y) => x - y)).toEqual([...ids].sort((x, y) => x - y));
	const runsOf = (await allExecutions(api, WORKFLOW_ID, true)).flatMap((e) =>
		(nodeOutput(e as { data?: Json }, 'Order Created') as Array<{ data: { orderId: number } }>).map(
			(i) => i.data.orderId,
		),
	);
	for (const id of ids) expect(runsOf.filter((r) => r === id)).toEqual([id]);
}, 180_000);

test("no request of n8n's own went to the shared public URL (the proxy would have dropped it)", () => {
	expect(proxy.dropped).toEqual([]);
	const logs = processors.map((p) => p.logs()).join('\n');
	expect(logs).not.toMatch(/could not (confirm|save)/);
});

test('deactivation through main deletes the endpoint; afterwards nothing of the workflow runs in any process', async () => {
	await api.deactivateWorkflow(WORKFLOW_ID);
	await waitFor(
		'the endpoint to be deleted',
		async () => ((await sandbox.control.endpoints()).length === 0 ? true : undefined),
		30_000,
	);
	// longer than trigger()'s cron wake (20 s) and its first check (20 s after a start): no process
	// (main, worker, either webhook processor) sends the service anything for it any more
	const since = (await sandbox.control.requests()).at(-1)?.seq ?? 0;
	await sleep(45_000);
	expect(await sandbox.control.requests(since)).toEqual([]);
}, 120_000);

// Not the trigger: what n8n 2.41.1 does with static data a run changes on a queue-mode worker. The
// worker reloads a workflow's static data only for resumed executions (job-processor.js), so a new run
// starts from none, and its save at the end replaces the whole column. Nothing of this package writes
// static data from inside an execution; this pins why none may (the trigger's endpoint id and secret
// live in that column).
test('n8n internals: a run on a queue-mode worker starts with no static data, and its save replaces what was saved', async () => {
	const id = 'queueStaticProbe1';
	const path = `static-probe-${Date.now()}`;
	await main.createWorkflow({
		id,
		name: 'queue mode: static data written by runs',
		nodes: [
			{
				id: `${id}-hook`,
				name: 'Webhook',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: `${id}-hook`,
				parameters: { httpMethod: 'POST', path, responseMode: 'onReceived' },
			},
			{
				id: `${id}-code`,
				name: 'Record',
				type: 'n8n-nodes-base.code',
				typeVersion: 2,
				position: [240, 0],
				parameters: {
					jsCode:
						"const data = $getWorkflowStaticData('global');\ndata['run' + $input.first().json.body.n] = true;\nreturn [{ json: { keys: Object.keys(data).sort() } }];",
				},
			},
		],
		connections: { Webhook: { main: [[{ node: 'Record', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	});
	await api.activateWorkflow(id);
	await main.waitForActivation(id);
	const staticDataKeys = async () =>
		Object.keys(((await main.rest<Json>('GET', `/workflows/${id}`)).staticData ?? {}).global ?? {})
			.filter((k) => !k.startsWith('__'))
			.sort();
	for (const n of [1, 2]) {
		await waitFor(`the probe webhook to answer (run ${n})`, async () => {
			const res = await fetch(`http://127.0.0.1:${processorPorts[0]}/webhook/${path}`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify({ n }),
			});
			return res.ok ? true : undefined;
		});
		await waitFor(`run ${n}'s static data to be saved`, async () =>
			(await staticDataKeys()).includes(`run${n}`) ? true : undefined,
		);
	}
	const runs = (await allExecutions(api, id, true)).sort((a, b) => Number(a.id) - Number(b.id));
	const seenByRun = runs.map((e) => nodeOutput(e, 'Record')[0]?.keys);
	const saved = await staticDataKeys();
	console.log(
		`[queue] static data written by two worker runs: run 1 saw ${JSON.stringify(seenByRun[0])}, run 2 saw ${JSON.stringify(seenByRun[1])}; saved ${JSON.stringify(saved)}`,
	);
	await api.deactivateWorkflow(id);
	expect(seenByRun).toEqual([['run1'], ['run2']]);
	expect(saved).toEqual(['run2']);
});

/**
 * trigger()'s catch-up check (catchUp.ts) in a real n8n 2.41.1: missed orders run once although no
 * further delivery comes. One n8n, two trigger workflows on the same key:
 * - "defaults": the trigger's defaults (Catch Up Missed Orders on, the watch every 5 minutes);
 * - "every 5 minutes": the same with Watch Every set to 5 by hand.
 *
 * 1. n8n down (O1): n8n stopped while three orders are created (their first attempts: connection
 *    refused), started, and nothing delivered after: in each workflow each order runs once, caught up
 *    by the check trigger() emits at the start, within 90 s of the start; the service's retries are
 *    answered 200 and start executions with no output, no run.
 * 2. Every delivery to "every 5 minutes" dropped while n8n runs (its endpoint's address refuses every
 *    attempt): two orders run once each there within six minutes of their creation, caught up by the
 *    check the watch returns when n8n polls it and it reads the service's record of the failed
 *    deliveries (every 5 minutes, real time: n8n's Poll Times cannot be moved); "defaults" runs them
 *    from their deliveries; the retries, once delivered, start no run.
 *
 * Executions with no output (copies, checks that found nothing) are counted apart and printed.
 *
 *   .ci/with-node24 npm run build && .ci/with-node24 npx jest -c test/e2e/jest.config.js test/e2e/selfCatchUp.test.ts
 */
import { allExecutions, bootBench, triggerWorkflow } from '../bench/n8nBench';
import type { Json } from '../json';
import type { SandboxHandle } from '../sandbox';
import {
	describeEmpty,
	nodeOutput,
	ordersWhileDown,
	sleep,
	splitRuns,
	stopKeepingLog,
	Timings,
	waitFor,
	type MissedOrder,
} from './kit';
import type { N8nHandle, PublicApi } from './n8n';

const BRAND = 3;
const NODE = 'Order Created';
const DEFAULTS = { id: 'selfCatchUpDown1', webhookId: '7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d' };
const EVERY5 = { id: 'selfCatchUpDrop1', webhookId: '8b7c6d5e-4f3a-4b2c-8d9e-0f1a2b3c4d5e' };
type Wf = typeof DEFAULTS;

let sandbox: SandboxHandle;
let n8n: N8nHandle;
let api: PublicApi;
const timings = new Timings();

const url = (wf: Wf) => `${n8n.baseUrl}/webhook/${wf.webhookId}/webhook`;
const endpointId = async (wf: Wf) =>
	(await sandbox.control.endpoints()).find(
		(e) => e.url === url(wf) || e.url.startsWith(`http://127.0.0.1:1/${wf.id}`),
	)!.id;

type Item = Record<string, Json> & { id: string; data: { orderId: number }; caughtUp?: boolean };
const itemsOf = (execution: Json) =>
	nodeOutput(execution as { data?: Json }, NODE) as unknown as Item[];
const split = async (wf: Wf) => splitRuns(await allExecutions(api, wf.id, true), NODE);
/** Every order id that ran in `wf` (one entry per run of it) with its execution's mode and end (Unix ms). */
const ordersRun = async (wf: Wf) =>
	(await split(wf)).runs.flatMap((e) =>
		itemsOf(e).map((i) => ({
			orderId: i.data.orderId,
			caughtUp: i.caughtUp === true,
			mode: String(e.mode),
			at: Date.parse(String(e.stoppedAt)),
		})),
	);

/** Waits until every order of `ids` ran in `wf`; returns every order run there. */
async function ranAll(wf: Wf, ids: number[], timeoutMs: number, everyMs = 500) {
	return await waitFor(
		`orders ${ids.join(', ')} run in ${wf.id}`,
		async () => {
			const ran = await ordersRun(wf);
			return ids.every((id) => ran.some((r) => r.orderId === id)) ? ran : undefined;
		},
		timeoutMs,
		everyMs,
	);
}

/** Each of `ids` ran exactly once in `wf` over the whole file. */
async function eachOnce(wf: Wf, ids: number[]): Promise<void> {
	const ran = (await ordersRun(wf)).map((r) => r.orderId);
	expect(ids.map((id) => [id, ran.filter((o) => o === id).length])).toEqual(
		ids.map((id) => [id, 1]),
	);
	expect(new Set(ran).size).toBe(ran.length);
}

/**
 * The service's retries of `missed` to each of `wfs` (the sandbox's clock moved `seconds` once, past
 * their next attempt): each answered 200; they start executions with no output (counted), and no run.
 */
async function retriesStartNoRun(wfs: Wf[], missed: number[], seconds: number): Promise<void> {
	// copies: executions with no output started by a delivery (a check of the watch may add its own meanwhile)
	const copies = async (wf: Wf) => {
		const { runs, empty } = await split(wf);
		return { runs: runs.length, copies: empty.filter((e) => e.mode === 'webhook').length };
	};
	const before = await Promise.all(wfs.map(copies));
	await sandbox.control.advanceClock(seconds);
	for (const [i, wf] of wfs.entries()) {
		const retried = (await sandbox.control.deliveries(await endpointId(wf))).filter((d) =>
			missed.includes(Number((d.event.data as { orderId?: number }).orderId)),
		);
		expect(retried.map((d) => d.responseStatusCode)).toEqual(missed.map(() => 200));
		await waitFor(
			`${missed.length} executions with no output for the retries to ${wf.id}`,
			async () =>
				(await copies(wf)).copies >= before[i].copies + missed.length ? true : undefined,
			30_000,
		);
	}
	await sleep(1500);
	for (const [i, wf] of wfs.entries()) {
		expect(await copies(wf)).toEqual({
			runs: before[i].runs,
			copies: before[i].copies + missed.length,
		});
		console.log(
			`[e2e self catch-up] ${wf.id}: ${missed.length} retries answered 200, ${missed.length} executions with no output, no run`,
		);
	}
}

beforeAll(async () => {
	let credentialId: string;
	({ sandbox, n8n, api, credentialId } = await timings.time('sandbox, n8n boot, owner', () =>
		bootBench({ readyTimeoutMs: 300_000 }),
	));
	for (const [wf, options] of [
		[DEFAULTS, undefined],
		[EVERY5, { watchEvery: 5 }],
	] as const) {
		await n8n.createWorkflow({
			...triggerWorkflow(wf.id, wf.webhookId, credentialId, true, options),
			name: `self catch-up ${wf.id}`,
		});
		await api.activateWorkflow(wf.id);
		await n8n.waitForActivation(wf.id);
	}
}, 420_000);

afterAll(async () => {
	for (const wf of [DEFAULTS, EVERY5]) {
		const empty = await split(wf).then(
			(s) => describeEmpty(s.empty),
			(e: Error) => e.message,
		);
		console.log(`[e2e self catch-up] ${wf.id}: executions with no output over the file: ${empty}`);
	}
	await stopKeepingLog(n8n, sandbox, 'e2e-self-catch-up.log');
	console.log(`[e2e self catch-up] timings:\n${timings.report()}`);
}, 120_000);

test('n8n down while orders come, started, no further delivery: each runs once in each workflow within 90 s of the start; the retries start no run', async () => {
	const live = (await sandbox.control.createOrder({ brandId: BRAND })).order.id as number;
	for (const wf of [DEFAULTS, EVERY5]) await ranAll(wf, [live], 60_000, 300);
	let missed: MissedOrder[] = [];
	let startedAt = 0;
	await timings.time('n8n restart, three orders created while it is down', () =>
		n8n.restart(async () => {
			missed = (await ordersWhileDown(sandbox, BRAND, 3)).missed;
			startedAt = Date.now();
		}),
	);
	const readyAt = Date.now();
	await n8n.login();
	const ids = missed.map((m) => m.orderId);
	for (const wf of [DEFAULTS, EVERY5]) {
		const ran = (await ranAll(wf, ids, 90_000)).filter((r) => ids.includes(r.orderId));
		// caught up by a check (an execution trigger() started), in the order they were made
		expect(ran.map((r) => [r.orderId, r.caughtUp, r.mode])).toEqual(
			ids.map((id) => [id, true, 'trigger']),
		);
		for (const r of ran) expect(r.at - startedAt).toBeLessThanOrEqual(90_000);
		timings.add(`${wf.id}: n8n started -> the missed orders' run ended`, ran[0].at - startedAt);
		console.log(
			`[e2e self catch-up] ${wf.id}: the missed orders ran ${((ran[0].at - startedAt) / 1000).toFixed(1)} s after n8n's start command, ${((ran[0].at - readyAt) / 1000).toFixed(1)} s after it was ready, with no delivery`,
		);
	}
	await retriesStartNoRun([DEFAULTS, EVERY5], ids, 61);
	for (const wf of [DEFAULTS, EVERY5]) await eachOnce(wf, [live, ...ids]);
}, 300_000);

test('every delivery to one workflow dropped while n8n runs: the watch (every 5 minutes, the default) runs each order once there within six minutes; the retries start no run', async () => {
	const id = await endpointId(EVERY5);
	const since = (await sandbox.control.requests()).at(-1)?.seq ?? 0;
	await sandbox.control.setEndpointUrl(id, `http://127.0.0.1:1/${EVERY5.id}/proxy-drops-it`);
	const created: Array<{ orderId: number; at: number }> = [];
	for (let i = 0; i < 2; i++) {
		const { order } = await sandbox.control.createOrder({ brandId: BRAND });
		created.push({ orderId: order.id as number, at: Date.parse(String(order.createdAt)) });
	}
	const ids = created.map((c) => c.orderId);
	// the workflow whose deliveries arrive runs them from their events
	const delivered = (await ranAll(DEFAULTS, ids, 60_000, 300)).filter((r) =>
		ids.includes(r.orderId),
	);
	expect(delivered.map((r) => [r.orderId, r.caughtUp, r.mode])).toEqual(
		ids.map((o) => [o, false, 'webhook']),
	);
	const waitStarted = Date.now();
	const ran = (await ranAll(EVERY5, ids, 6.5 * 60_000, 2_000)).filter((r) =>
		ids.includes(r.orderId),
	);
	timings.add('dropped: orders created -> caught up by the watch', Date.now() - waitStarted);
	expect(ran.map((r) => [r.orderId, r.caughtUp, r.mode])).toEqual(
		ids.map((o) => [o, true, 'trigger']),
	);
	for (const c of created)
		expect(ran.find((r) => r.orderId === c.orderId)!.at - c.at).toBeLessThanOrEqual(6 * 60_000);
	// the order list is read by the watch's checks only: in a minute divisible by 5 (n8n's Poll Times
	// pick the second at random)
	const reads = (await sandbox.control.requests(since))
		.filter((r) => r.method === 'GET' && r.path === '/v1/orders')
		.map((r) => new Date(r.at));
	expect(reads.length).toBeGreaterThan(0);
	for (const read of reads) expect(read.getMinutes() % 5).toBe(0);
	console.log(
		`[e2e self catch-up] dropped deliveries: orders ran ${created.map((c) => `${((ran.find((r) => r.orderId === c.orderId)!.at - c.at) / 1000).toFixed(0)} s`).join(', ')} after their creation; ${reads.length} order-list read(s) at ${reads.map((r) => r.toISOString().slice(11, 19)).join(', ')}`,
	);
	await sandbox.control.setEndpointUrl(id, url(EVERY5));
	// their next attempt comes at most 30 minutes after the last
	await retriesStartNoRun([EVERY5], ids, 31 * 60);
	for (const wf of [DEFAULTS, EVERY5]) await eachOnce(wf, ids);
}, 600_000);

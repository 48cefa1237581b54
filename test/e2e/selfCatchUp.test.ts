/**
 * trigger()'s catch-up check (catchUpCheck.ts) in a real n8n 2.41.1: missed orders run although
 * no further delivery comes.
 *
 * 1. n8n down (n8n's defaults: its publication service runs the activation hook at its start only
 *    because the node has a trigger method): n8n stopped while three orders are created (their first
 *    attempts: connection refused), started, and nothing delivered after: each runs once within 45 s
 *    of the start; the service's retries start nothing. Without the trigger method this fails.
 * 2. Every delivery dropped while n8n runs (n8n's defaults): two orders created, the endpoint's
 *    address refusing every attempt: each runs once within six minutes of its creation, with the
 *    order list read at most once a minute meanwhile; the retries, once delivered, start nothing.
 *
 *   .ci/with-node24 npm run build && .ci/with-node24 npx jest -c test/e2e/jest.config.js test/e2e/selfCatchUp.test.ts
 */
import { allExecutions, bootBench, triggerWorkflow } from '../bench/n8nBench';
import type { Json } from '../json';
import type { SandboxHandle } from '../sandbox';
import {
	nodeOutput,
	ordersWhileDown,
	sleep,
	stopKeepingLog,
	waitFor,
	type MissedOrder,
} from './kit';
import type { N8nHandle, PublicApi } from './n8n';

const BRAND = 3;

let sandbox: SandboxHandle;
let n8n: N8nHandle;
let api: PublicApi;
let wf: { id: string; webhookId: string };
const url = () => `${n8n.baseUrl}/webhook/${wf.webhookId}/webhook`;
const endpointId = async () =>
	(await sandbox.control.endpoints()).find(
		(e) => e.url === url() || e.url.startsWith('http://127.0.0.1:1/'),
	)!.id;

type Item = Record<string, Json> & { id: string; data: { orderId: number }; caughtUp?: boolean };
const itemsOf = (execution: Json) =>
	nodeOutput(execution as { data?: Json }, 'Order Created') as unknown as Item[];
const executions = async () => await allExecutions(api, wf.id, true);
/** Each caught-up order id with when its run finished (Unix ms). */
const caughtUpRuns = async () =>
	(await executions()).flatMap((e) =>
		itemsOf(e)
			.filter((i) => i.caughtUp === true)
			.map((i) => ({ orderId: i.data.orderId, at: Date.parse(String(e.stoppedAt)) })),
	);

/** Waits until every order of `ids` ran caught up; returns every caught-up run. */
async function caughtUpAll(ids: number[], timeoutMs: number, everyMs: number) {
	return await waitFor(
		`orders ${ids.join(', ')} caught up`,
		async () => {
			const caught = await caughtUpRuns();
			return ids.every((id) => caught.some((c) => c.orderId === id)) ? caught : undefined;
		},
		timeoutMs,
		everyMs,
	);
}

async function boot(id: string, webhookId: string, env: Record<string, string>): Promise<void> {
	let credentialId: string;
	({ sandbox, n8n, api, credentialId } = await bootBench({ readyTimeoutMs: 300_000, env }));
	wf = { id, webhookId };
	await n8n.createWorkflow({
		...triggerWorkflow(id, webhookId, credentialId, true),
		name: `self catch-up ${id}`,
	});
	await api.activateWorkflow(id);
	await n8n.waitForActivation(id);
}

const shutDown = async (log: string) => await stopKeepingLog(n8n, sandbox, log);

/** One order delivered and run (the trigger is live). */
async function liveOrder(): Promise<number> {
	const { order, event } = await sandbox.control.createOrder({ brandId: BRAND });
	await waitFor(
		`the execution of ${String(event.id)}`,
		async () => (await executions()).find((e) => itemsOf(e).some((i) => i.id === event.id)),
		60_000,
		300,
	);
	return order.id as number;
}

/** The service's retries of `missed` (the sandbox's clock moved `seconds`, past their next attempt): each answered 200, and no run. */
async function retriesStartNothing(missed: number[], seconds: number): Promise<void> {
	const runs = (await executions()).length;
	const id = await endpointId();
	await sandbox.control.advanceClock(seconds);
	const retried = (await sandbox.control.deliveries(id)).filter((d) =>
		missed.includes(Number((d.event.data as { orderId?: number }).orderId)),
	);
	expect(retried.map((d) => d.responseStatusCode)).toEqual(missed.map(() => 200));
	await sleep(3000);
	expect((await executions()).length).toBe(runs);
}

describe('n8n down while orders come, started, no further delivery (n8n runs the activation hook at its start)', () => {
	beforeAll(
		async () => await boot('selfCatchUpDown1', '7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d', {}),
		420_000,
	);
	afterAll(async () => await shutDown('e2e-self-catch-up-down.log'), 120_000);

	test('each missed order runs once within 45 s of the start; the retries start nothing', async () => {
		await liveOrder();
		// the accepted ids saved (within a second of an acceptance) before n8n stops
		await sleep(3000);
		let missed: MissedOrder[] = [];
		await n8n.restart(async () => {
			missed = (await ordersWhileDown(sandbox, BRAND, 3)).missed;
		});
		const backAt = Date.now();
		await n8n.login();
		const ids = missed.map((m) => m.orderId);
		const runs = await caughtUpAll(ids, 60_000, 500);
		expect(runs.map((r) => r.orderId)).toEqual(ids);
		for (const run of runs) expect(run.at - backAt).toBeLessThanOrEqual(45_000);
		console.log(
			`[e2e] n8n back -> the missed orders' run finished ${((runs[0].at - backAt) / 1000).toFixed(1)} s later, with no delivery`,
		);
		await retriesStartNothing(ids, 61);
		expect((await caughtUpRuns()).map((r) => r.orderId)).toEqual(ids);
	});
});

describe("every delivery dropped while n8n runs (n8n's defaults)", () => {
	beforeAll(
		async () => await boot('selfCatchUpDrop1', '8b7c6d5e-4f3a-4b2c-8d9e-0f1a2b3c4d5e', {}),
		420_000,
	);
	afterAll(async () => await shutDown('e2e-self-catch-up-dropped.log'), 120_000);

	test('two orders whose deliveries never arrive: each runs once within six minutes, reads a minute apart or more; the retries start nothing', async () => {
		await liveOrder();
		const id = await endpointId();
		const since = (await sandbox.control.requests()).at(-1)?.seq ?? 0;
		await sandbox.control.setEndpointUrl(id, 'http://127.0.0.1:1/proxy-drops-it');
		const created: Array<{ orderId: number; at: number }> = [];
		for (let i = 0; i < 2; i++) {
			if (i > 0) await sleep(30_000);
			const { order } = await sandbox.control.createOrder({ brandId: BRAND });
			created.push({ orderId: order.id as number, at: Date.parse(String(order.createdAt)) });
		}
		const ids = created.map((c) => c.orderId);
		const runs = await caughtUpAll(ids, 7 * 60_000, 2_000);
		expect(runs.map((r) => r.orderId).sort()).toEqual([...ids].sort());
		for (const c of created)
			expect(runs.find((r) => r.orderId === c.orderId)!.at - c.at).toBeLessThanOrEqual(6 * 60_000);
		const reads = (await sandbox.control.requests(since))
			.filter((r) => r.method === 'GET' && r.path === '/v1/orders')
			.map((r) => Date.parse(r.at));
		for (let i = 1; i < reads.length; i++)
			expect(reads[i] - reads[i - 1]).toBeGreaterThanOrEqual(59_000);
		console.log(
			`[e2e] dropped deliveries: orders ran ${created.map((c) => `${((runs.find((r) => r.orderId === c.orderId)!.at - c.at) / 1000).toFixed(0)} s`).join(', ')} after their creation; ${reads.length} order-list reads`,
		);
		await sandbox.control.setEndpointUrl(id, url());
		// their next attempt comes at most 30 minutes after the last
		await retriesStartNothing(ids, 31 * 60);
	}, 600_000);
});

/**
 * "Catch Up Missed Orders" in a real n8n 2.41.1 over a disabled endpoint, each missed order once: the
 * sandbox disables the trigger's endpoint (5 days of failing deliveries on its clock), orders are
 * created meanwhile, the endpoint works again; trigger()'s first check (20-40 s after the start)
 * brings the missed orders, each once, with the notice. Twice: the endpoint re-enabled by activation
 * (n8n runs checkExists at every start: 2.x's publication service because the node has a trigger
 * method, 1.x and 2.0 for every active workflow), and the workflow turned off and on (the Disabled
 * endpoint deleted, a new one made). The option set explicitly. n8n down for minutes is
 * selfCatchUp.test.ts.
 *
 *   .ci/with-node24 npm run build && .ci/with-node24 npx jest -c test/e2e/jest.config.js test/e2e/catchUp.test.ts
 */
import { allExecutions, bootBench, triggerWorkflow } from '../bench/n8nBench';
import type { SandboxHandle } from '../sandbox';
import { nodeOutput, sleep, stopKeepingLog, waitFor } from './kit';
import type { N8nHandle, PublicApi } from './n8n';
import type { Json } from '../json';

const DAY_S = 24 * 3600;
const BRAND = 2;

/** The n8n, sandbox and workflow of the describe block running. */
let sandbox: SandboxHandle;
let n8n: N8nHandle;
let api: PublicApi;
let wf: { id: string; webhookId: string };
const url = () => `${n8n.baseUrl}/webhook/${wf.webhookId}/webhook`;
const endpoint = async () =>
	(await sandbox.control.endpoints()).find(
		(e) => e.url === url() || e.url.startsWith('http://127.0.0.1:1/'),
	)!;

type Item = Record<string, Json> & {
	data: { orderId: number };
	caughtUp?: boolean;
	notice?: Record<string, Json>;
};
const itemsOf = (execution: Json) =>
	nodeOutput(execution as { data?: Json }, 'Order Created') as unknown as Item[];
const executions = async () => await allExecutions(api, wf.id, true);
/** The order ids of every item of every execution of the workflow. */
const orderIdsRun = async () =>
	(await executions()).flatMap((e) => itemsOf(e).map((i) => i.data.orderId));

/** The items of the execution that caught up `missed` (trigger()'s first check comes 20-40 s after the start). */
async function caughtUpRun(missed: number[]): Promise<Item[]> {
	return await waitFor(
		`orders ${missed.join(', ')} caught up`,
		async () =>
			(await executions())
				.map(itemsOf)
				.find((items) => items.some((i) => i.caughtUp === true && missed.includes(i.data.orderId))),
		90_000,
		500,
	);
}

/** Boots n8n (with `env`) and the sandbox, and activates a trigger workflow with `options` (none: the defaults). */
async function boot(
	id: string,
	webhookId: string,
	name: string,
	env: Record<string, string>,
	options?: Record<string, unknown>,
): Promise<void> {
	let credentialId: string;
	({ sandbox, n8n, api, credentialId } = await bootBench({ readyTimeoutMs: 300_000, env }));
	wf = { id, webhookId };
	await n8n.createWorkflow({
		...triggerWorkflow(id, webhookId, credentialId, true, options),
		name,
	});
	await api.activateWorkflow(id);
	await n8n.waitForActivation(id);
}

const shutDown = async (log: string) => await stopKeepingLog(n8n, sandbox, log);

/** One new order's event; resolves with the execution that carries it and its items. */
async function nextEvent(): Promise<{
	orderId: number;
	eventCreatedAt: string;
	createdAtMs: number;
	execution: Json;
	items: Item[];
}> {
	const createdAtMs = Date.now();
	const { order, event } = await sandbox.control.createOrder({ brandId: BRAND });
	const execution = await waitFor(
		`the execution of ${String(event.id)}`,
		async () => (await executions()).find((e) => itemsOf(e).some((i) => i.id === event.id)),
		60_000,
		300,
	).catch(async (error: Error) => {
		// what the service saw, for the failure message
		const delivery = (await sandbox.control.deliveries()).find((d) => d.eventId === event.id);
		throw new Error(`${error.message}; delivery: ${JSON.stringify(delivery)}`);
	});
	return {
		orderId: order.id as number,
		eventCreatedAt: String(event.createdAt),
		createdAtMs,
		execution,
		items: itemsOf(execution),
	};
}

describe('a disabled endpoint (n8n runs checkExists at every start; the option set explicitly)', () => {
	/** The endpoint's deliveries fail for over 5 days (one order meanwhile); the service disables it; two more orders. */
	async function outage(): Promise<number[]> {
		const { id } = await endpoint();
		await sandbox.control.setEndpointUrl(id, 'http://127.0.0.1:1/unreachable');
		await sandbox.control.advanceClock(5 * DAY_S + 60);
		const missed = [(await sandbox.control.createOrder({ brandId: BRAND })).order.id as number];
		await sandbox.control.advanceClock(2 * DAY_S);
		expect(await endpoint()).toMatchObject({
			status: 'Disabled',
			disabledReason: 'FailingDeliveries',
		});
		for (let i = 0; i < 2; i++)
			missed.push((await sandbox.control.createOrder({ brandId: BRAND })).order.id as number);
		await sandbox.control.setEndpointUrl(id, url());
		return missed;
	}

	beforeAll(async () => {
		await boot(
			'catchUpOrders001',
			'0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0',
			'catch-up: order arrives',
			{},
			{ catchUpMissedOrders: true },
		);
	}, 420_000);

	afterAll(async () => await shutDown('e2e-catch-up.log'), 120_000);

	test('re-enabled by activation at start-up: the first check brings the missed orders once, with the notice; a restart brings nothing again', async () => {
		const before = await nextEvent();
		expect(before.items).toHaveLength(1);
		const missed = await outage();
		const backAt = Date.now();
		await n8n.restart();
		await n8n.login();
		const items = await caughtUpRun(missed);
		console.log(
			`[e2e] n8n started -> the check's run with the missed orders found ${((Date.now() - backAt) / 1000).toFixed(1)} s later`,
		);
		expect(items.map((i) => [i.data.orderId, i.caughtUp === true])).toEqual(
			missed.map((id) => [id, true]),
		);
		expect(items.every((i) => i.notice?.caughtUpOrders === 3)).toBe(true);
		expect(items[0]).toMatchObject({
			type: 'order.created',
			id: `caught_up_order.created_${missed[0]}`,
			data: { brandId: BRAND },
			notice: { disabledReason: 'FailingDeliveries' },
		});
		const next = await nextEvent();
		expect(next.items.map((i) => i.data.orderId)).toEqual([next.orderId]);
		expect(next.items[0].notice).toBeUndefined();
		await n8n.restart();
		await n8n.login();
		// past the first check after this start
		await sleep(45_000);
		const after = await nextEvent();
		expect(after.items.map((i) => i.data.orderId)).toEqual([after.orderId]);
		const orderIds = await orderIdsRun();
		expect(new Set(orderIds).size).toBe(orderIds.length);
	});

	test("turned off and on over the Disabled endpoint: the new endpoint's first check brings the missed orders once", async () => {
		const missed = await outage();
		await api.deactivateWorkflow(wf.id);
		await waitFor(
			'the Disabled endpoint deleted',
			async () => ((await sandbox.control.endpoints()).length === 0 ? true : undefined),
			30_000,
		);
		await api.activateWorkflow(wf.id);
		await n8n.waitForActivation(wf.id);
		const items = await caughtUpRun(missed);
		expect(items.map((i) => [i.data.orderId, i.caughtUp === true])).toEqual(
			missed.map((id) => [id, true]),
		);
		// over the whole block no order ran twice
		const orderIds = await orderIdsRun();
		expect(new Set(orderIds).size).toBe(orderIds.length);
	});
});

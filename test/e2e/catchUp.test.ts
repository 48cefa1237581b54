/**
 * "Catch Up Missed Orders" in a real n8n 2.41.1, each missed order once:
 *
 * 1. A disabled endpoint: the sandbox disables the trigger's endpoint (5 days of failing deliveries
 *    on its clock), orders are created meanwhile, the endpoint works again, one new event is
 *    delivered: its run brings the missed orders, each once. Twice: the endpoint re-enabled by
 *    activation (n8n runs checkExists at every start: 2.x's publication service because the node
 *    has a trigger method, 1.x and 2.0 for every active workflow), and the workflow turned off and
 *    on (the Disabled endpoint deleted, a new one made). The option set explicitly.
 * 2. n8n down (n8n's defaults, the option left at its default, on): n8n stopped while the sandbox
 *    creates orders (their first attempts: connection refused), started; the next order's run brings
 *    each missed order once, within seconds; the service's retries of those orders start nothing;
 *    a restart with every event redelivered runs nothing again.
 *
 *   .ci/with-node24 npm run build && .ci/with-node24 npx jest -c test/e2e/jest.config.js test/e2e/catchUp.test.ts
 */
import { allExecutions, bootBench, triggerWorkflow } from '../bench/n8nBench';
import type { SandboxHandle } from '../sandbox';
import {
	nodeOutput,
	ordersWhileDown,
	pastInFlightMargin,
	sleep,
	waitFor,
	type MissedOrder,
	stopKeepingLog,
} from './kit';
import type { N8nHandle, PublicApi } from './n8n';
import type { Json } from '../json';

const DAY_S = 24 * 3600;
const BRAND = 2;
/** The trigger's in-flight margin (catchUp.ts IN_FLIGHT_MS): a catch-up window ends this long before the event that brings it. */
const IN_FLIGHT_MS = 15_000;

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
		const created: Array<{ createdAt: string }> = [];
		for (let i = 0; i < 2; i++) {
			const { order } = await sandbox.control.createOrder({ brandId: BRAND });
			missed.push(order.id as number);
			created.push({ createdAt: String(order.createdAt) });
		}
		await pastInFlightMargin(sandbox, created);
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

	test('re-enabled by activation at start-up: the next event brings the missed orders once; a restart brings nothing again', async () => {
		const before = await nextEvent();
		expect(before.items).toHaveLength(1);
		const missed = await outage();
		await n8n.restart();
		await n8n.login();
		await waitFor(
			'the endpoint re-enabled',
			async () => ((await endpoint()).status === 'Enabled' ? true : undefined),
			60_000,
		);
		// n8n's publication service re-activates after it serves webhooks: an event before that
		// activation is saved would run without the notice, which a later event then carries
		await waitFor(
			'the notice saved with the record',
			async () =>
				JSON.stringify((await n8n.rest<Json>('GET', `/workflows/${wf.id}`)).staticData).includes(
					'"missedEvents"',
				)
					? true
					: undefined,
			60_000,
		);
		const first = await nextEvent();
		expect(first.items.map((i) => [i.data.orderId, i.caughtUp === true])).toEqual([
			...missed.map((id) => [id, true]),
			[first.orderId, false],
		]);
		expect(first.items.every((i) => i.notice?.caughtUpOrders === 3)).toBe(true);
		expect(first.items[0]).toMatchObject({
			type: 'order.created',
			id: `caught_up_order.created_${missed[0]}`,
			data: { brandId: BRAND },
		});
		await n8n.restart();
		await n8n.login();
		const after = await nextEvent();
		expect(after.items.map((i) => i.data.orderId)).toEqual([after.orderId]);
	});

	test("turned off and on over the Disabled endpoint: the new endpoint's first event brings the missed orders once", async () => {
		const missed = await outage();
		await api.deactivateWorkflow(wf.id);
		await waitFor(
			'the Disabled endpoint deleted',
			async () => ((await sandbox.control.endpoints()).length === 0 ? true : undefined),
			30_000,
		);
		await api.activateWorkflow(wf.id);
		await n8n.waitForActivation(wf.id);
		const first = await nextEvent();
		expect(first.items.map((i) => [i.data.orderId, i.caughtUp === true])).toEqual([
			...missed.map((id) => [id, true]),
			[first.orderId, false],
		]);
		// over the whole block no order ran twice
		const orderIds = await orderIdsRun();
		expect(new Set(orderIds).size).toBe(orderIds.length);
	});
});

describe("n8n down while orders come (n8n's defaults; the option left at its default)", () => {
	beforeAll(async () => {
		await boot(
			'catchUpNDown0001',
			'5e4d3c2b-1a09-4f8e-9d7c-6b5a4f3e2d1c',
			'catch-up: n8n down',
			{},
		);
		// nothing set: Catch Up Missed Orders is on by default
		const saved = await n8n.rest<{
			nodes: Array<{ name: string; parameters: Record<string, unknown> }>;
		}>('GET', `/workflows/${wf.id}`);
		expect(saved.nodes.find((n) => n.name === 'Order Created')?.parameters.options ?? {}).toEqual(
			{},
		);
	}, 420_000);

	afterAll(async () => await shutDown('e2e-catch-up-down.log'), 120_000);

	test("n8n stopped while three orders are created: the next order's run brings each once, within seconds; the retries and a restart with every event redelivered start nothing", async () => {
		const before = await nextEvent();
		expect(before.items.map((i) => i.data.orderId)).toEqual([before.orderId]);
		// the runs ended (each accepted id is saved by n8n before its run starts) before n8n stops
		await sleep(3000);

		let missed: MissedOrder[] = [];
		const stoppedAt = Date.now();
		await n8n.restart(async () => {
			const down = await ordersWhileDown(sandbox, BRAND, 3);
			missed = down.missed;
			// each first attempt met a closed port
			expect(down.firstAttempts.map((a) => [a.statusCode, a.error])).toEqual(
				missed.map(() => [null, 'ECONNREFUSED']),
			);
		});
		const backAt = Date.now();
		await n8n.login();
		// the missed orders older than the in-flight margin on the service's clock before the next order comes
		await pastInFlightMargin(sandbox, missed);

		const first = await nextEvent();
		const finishedAt = Date.parse(String(first.execution.stoppedAt));
		expect(first.items.map((i) => [i.data.orderId, i.caughtUp === true])).toEqual([
			...missed.map((m) => [m.orderId, true]),
			[first.orderId, false],
		]);
		for (const [i, m] of missed.entries()) {
			expect(first.items[i]).toMatchObject({
				id: `caught_up_order.created_${m.orderId}`,
				type: 'order.created',
				createdAt: m.createdAt,
				data: { brandId: BRAND, orderId: m.orderId },
			});
		}
		const window = first.items[0].catchUpWindow as { from: string; to: string };
		expect(Date.parse(window.to)).toBe(Date.parse(first.eventCreatedAt) - IN_FLIGHT_MS);
		expect(Date.parse(window.from)).toBeLessThanOrEqual(Date.parse(missed[0].createdAt));
		console.log(
			`[e2e] n8n down ${((backAt - stoppedAt) / 1000).toFixed(1)} s (stop, 3 orders, start); ` +
				`n8n back -> the run with the caught-up orders finished ${((finishedAt - backAt) / 1000).toFixed(1)} s ` +
				`(of which waiting for the ${IN_FLIGHT_MS / 1000} s margin before the next order ${((first.createdAtMs - backAt) / 1000).toFixed(1)} s); ` +
				`next order created -> that run finished ${((finishedAt - first.createdAtMs) / 1000).toFixed(2)} s`,
		);

		// the service's retries of the missed orders (1 minute after their first attempts): 2xx, nothing runs
		const runsBefore = (await executions()).length;
		const retried = (await sandbox.control.advanceClock(61)).attempts;
		const retries = (await sandbox.control.deliveries()).filter((d) =>
			missed.some((m) => m.eventId === d.eventId),
		);
		expect(
			retried
				.filter((a) => retries.some((d) => d.id === a.deliveryId))
				.map((a) => a.attempt.statusCode),
		).toEqual(missed.map(() => 200));
		expect(retries.map((d) => [d.status, d.attempts])).toEqual(missed.map(() => ['Delivered', 2]));
		await sleep(3000);
		expect((await executions()).length).toBe(runsBefore);

		// a restart, then every event of the endpoint sent again: nothing runs
		await n8n.restart();
		await n8n.login();
		const { id: endpointId } = await endpoint();
		const originals = (await sandbox.control.deliveries(endpointId)).filter(
			(d) => d.kind !== 'redelivery',
		);
		const again: Awaited<ReturnType<typeof sandbox.control.redeliver>>[] = [];
		for (const d of originals) again.push(await sandbox.control.redeliver(d.id));
		expect(again.map((d) => [d.eventType, d.responseStatusCode])).toEqual(
			originals.map((d) => [d.eventType, 200]),
		);
		await sleep(3000);
		expect((await executions()).length).toBe(runsBefore);
		const orderIds = await orderIdsRun();
		const byNumber = (x: number, y: number) => x - y;
		expect(orderIds.sort(byNumber)).toEqual(
			[before.orderId, ...missed.map((m) => m.orderId), first.orderId].sort(byNumber),
		);
		console.log(
			`[e2e] after the restart ${again.length} events sent again (${originals.map((d) => d.eventType).join(', ')}): all 200, no run`,
		);
	});
});

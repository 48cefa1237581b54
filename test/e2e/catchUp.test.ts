/**
 * "Catch Up Missed Orders" in a real n8n 2.41.1 over a disabled endpoint, each missed order once: the
 * trigger's endpoint fails its deliveries, then is Disabled (through the service's API: moving the
 * sandbox's clock the 5 days after which it disables an endpoint itself would put the orders days
 * ahead of n8n's clock, past the end of a check's window), orders are created meanwhile, the endpoint
 * works again; the check trigger() emits when the workflow starts
 * brings the missed orders in one execution, each once, and n8n's log says the endpoint was Disabled
 * and what is not recovered. Twice: the endpoint re-enabled at n8n's start (n8n runs checkExists at
 * every start: 2.x's publication service because the node has a trigger method, 1.x and 2.0 for every
 * active workflow), and the workflow turned off and on (the Disabled endpoint deleted, a new one made).
 * The option set explicitly. An order made before the first publish is never run. Executions with no
 * output (the checks that found nothing) are counted apart. n8n down for minutes is selfCatchUp.test.ts.
 *
 *   .ci/with-node24 npm run build && .ci/with-node24 npx jest -c test/e2e/jest.config.js test/e2e/catchUp.test.ts
 */
import { allExecutions, bootBench, triggerWorkflow } from '../bench/n8nBench';
import type { SandboxHandle } from '../sandbox';
import { describeEmpty, nodeOutput, splitRuns, stopKeepingLog, Timings, waitFor } from './kit';
import type { N8nHandle, PublicApi } from './n8n';
import type { Json } from '../json';

const BRAND = 2;
const NODE = 'Order Created';
const DISABLED_LOG =
	/webhook endpoint \d+ was Disabled by the service .* is enabled again\. Events of that time are not resent: the trigger's check brings the orders created meanwhile/;

/** The n8n, sandbox and workflow of the describe block running. */
let sandbox: SandboxHandle;
let n8n: N8nHandle;
let api: PublicApi;
let wf: { id: string; webhookId: string };
const timings = new Timings();
const url = () => `${n8n.baseUrl}/webhook/${wf.webhookId}/webhook`;
const endpoint = async () =>
	(await sandbox.control.endpoints()).find(
		(e) => e.url === url() || e.url.startsWith('http://127.0.0.1:1/'),
	)!;

type Item = Record<string, Json> & { data: { orderId: number }; caughtUp?: boolean };
/** A run's order items (an item of its own carries the disabled period's notice where no order ran with it). */
const itemsOf = (execution: Json) =>
	(nodeOutput(execution as { data?: Json }, NODE) as unknown as Item[]).filter(
		(item) => item.data !== undefined,
	);
/** The notices the workflow's items carried over the block. */
const noticesRun = async () =>
	(await split()).runs.flatMap((e) =>
		(nodeOutput(e as { data?: Json }, NODE) as Array<Record<string, Json>>)
			.map((item) => item.notice)
			.filter((notice) => notice !== undefined),
	);
const split = async () => splitRuns(await allExecutions(api, wf.id, true), NODE);
/** The order ids of every item of every run of the workflow. */
const orderIdsRun = async () =>
	(await split()).runs.flatMap((e) => itemsOf(e).map((i) => i.data.orderId));

/** The run that caught up `missed` (an execution trigger() started) and its items. */
async function caughtUpRun(missed: number[]): Promise<{ execution: Json; items: Item[] }> {
	return await waitFor(
		`orders ${missed.join(', ')} caught up`,
		async () => {
			const execution = (await split()).runs.find((e) =>
				itemsOf(e).some((i) => i.caughtUp === true && missed.includes(i.data.orderId)),
			);
			return execution ? { execution, items: itemsOf(execution) } : undefined;
		},
		90_000,
		500,
	);
}

/** An order made before the first publish of the block's workflow: never its to run. */
let beforePublish: number;

/** Boots n8n (with `env`) and the sandbox, and activates a trigger workflow with `options` (none: the defaults). */
async function boot(
	id: string,
	webhookId: string,
	name: string,
	env: Record<string, string>,
	options?: Record<string, unknown>,
): Promise<void> {
	let credentialId: string;
	({ sandbox, n8n, api, credentialId } = await timings.time('sandbox, n8n boot, owner', () =>
		bootBench({ readyTimeoutMs: 300_000, env }),
	));
	wf = { id, webhookId };
	await n8n.createWorkflow({
		...triggerWorkflow(id, webhookId, credentialId, true, options),
		name,
	});
	beforePublish = (await sandbox.control.createOrder({ brandId: BRAND })).order.id as number;
	await api.activateWorkflow(id);
	await n8n.waitForActivation(id);
	// the first start reads nothing and emits no check: it starts the record
	await new Promise((r) => setTimeout(r, 2000));
	expect(await allExecutions(api, id)).toEqual([]);
}

const shutDown = async (log: string) => {
	const empty = await split().then(
		(s) => describeEmpty(s.empty),
		(e: Error) => e.message,
	);
	console.log(`[e2e catch-up] executions with no output over the block: ${empty}`);
	await stopKeepingLog(n8n, sandbox, log);
};

/** Restarts n8n; resolves when it is ready, with the time its start command was given. */
async function restart(): Promise<number> {
	let startedAt = 0;
	await timings.time('n8n restart', () =>
		n8n.restart(async () => {
			startedAt = Date.now();
		}),
	);
	await n8n.login();
	return startedAt;
}

/** One new order's event; resolves with the execution that carries it and its items. */
async function nextEvent(): Promise<{ orderId: number; execution: Json; items: Item[] }> {
	const { order, event } = await sandbox.control.createOrder({ brandId: BRAND });
	const execution = await waitFor(
		`the execution of ${String(event.id)}`,
		async () => (await split()).runs.find((e) => itemsOf(e).some((i) => i.id === event.id)),
		60_000,
		300,
	).catch(async (error: Error) => {
		// what the service saw, for the failure message
		const delivery = (await sandbox.control.deliveries()).find((d) => d.eventId === event.id);
		throw new Error(`${error.message}; delivery: ${JSON.stringify(delivery)}`);
	});
	return { orderId: order.id as number, execution, items: itemsOf(execution) };
}

afterAll(() => console.log(`[e2e catch-up] timings:\n${timings.report()}`));

describe('a disabled endpoint (n8n runs checkExists at every start; the option set explicitly)', () => {
	/**
	 * An outage at the service's side: the endpoint's deliveries fail (one order meanwhile, its first
	 * attempt refused), the endpoint is Disabled (as the service does after 5 days of failing
	 * deliveries; its pending deliveries fail), two more orders (none delivered); then the address works
	 * again. The sandbox's clock is not moved: the orders' createdAt must be on n8n's clock, as in a real
	 * outage (a check reads up to its own now).
	 */
	async function outage(): Promise<number[]> {
		const { id } = await endpoint();
		await sandbox.control.setEndpointUrl(id, 'http://127.0.0.1:1/unreachable');
		const first = await sandbox.control.createOrder({ brandId: BRAND });
		await waitFor('the first attempt refused', async () =>
			(await sandbox.control.deliveries(id)).find(
				(d) => d.eventId === first.event.id && d.attemptLog.length > 0,
			),
		);
		const res = await fetch(`${sandbox.baseUrl}/v1/webhook-endpoints/${id}`, {
			method: 'PATCH',
			headers: {
				authorization: `Bearer ${sandbox.demoApiKey}`,
				'content-type': 'application/json',
				'idempotency-key': `catch-up-${Date.now()}-${Math.random()}`,
			},
			body: JSON.stringify({ status: 'Disabled' }),
		});
		expect(res.status).toBe(200);
		expect(await endpoint()).toMatchObject({ status: 'Disabled' });
		const missed = [first.order.id as number];
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

	test("re-enabled at n8n's start: the start's check brings the missed orders once, in one execution; the log says what is not recovered; a restart brings nothing again", async () => {
		const before = await nextEvent();
		expect(before.items.map((i) => i.data.orderId)).toEqual([before.orderId]);
		const missed = await outage();
		const logFrom = n8n.logs().length;
		const startedAt = await restart();
		const { execution, items } = await caughtUpRun(missed);
		const ms = Date.parse(String((execution as { stoppedAt: string }).stoppedAt)) - startedAt;
		timings.add("n8n started -> the check's run with the missed orders ended", ms);
		console.log(
			`[e2e catch-up] n8n started -> the check's run with the missed orders ended ${(ms / 1000).toFixed(1)} s later`,
		);
		expect(ms).toBeLessThanOrEqual(90_000);
		expect((execution as { mode: string }).mode).toBe('trigger');
		// (the order made before the first publication is the last test's, which says whether it ran)
		const caught = items.filter((i) => i.data.orderId !== beforePublish);
		expect(caught.map((i) => [i.data.orderId, i.caughtUp === true])).toEqual(
			missed.map((id) => [id, true]),
		);
		expect(caught[0]).toMatchObject({
			type: 'order.created',
			id: `caught_up_order.created_${missed[0]}`,
			data: { brandId: BRAND, orderId: missed[0] },
		});
		expect(n8n.logs().slice(logFrom)).toMatch(DISABLED_LOG);
		const next = await nextEvent();
		expect(next.items.map((i) => i.data.orderId)).toEqual([next.orderId]);
		const idsOf = async () => {
			const { runs, empty } = await split();
			return [...runs, ...empty] as Array<Json & { id: string; mode: string }>;
		};
		const before2 = new Set((await idsOf()).map((e) => e.id));
		await restart();
		// the check of this start: no order (an execution with no output, or the notice's item where
		// n8n ran the activation's hooks after the first start's check)
		const check = await waitFor('the check of the second start', async () => {
			const fresh = (await idsOf()).filter((e) => !before2.has(e.id) && e.mode === 'trigger');
			return fresh.length > 0 ? fresh : undefined;
		});
		expect(check.flatMap((e) => itemsOf(e))).toEqual([]);
		// the workflow was told of the disabled period once
		expect(await noticesRun()).toEqual([
			expect.stringMatching(/had disabled this trigger's webhook endpoint/),
		]);
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
		const { items } = await caughtUpRun(missed);
		expect(
			items
				.filter((i) => i.data.orderId !== beforePublish)
				.map((i) => [i.data.orderId, i.caughtUp === true]),
		).toEqual(missed.map((id) => [id, true]));
		// over the whole block no order ran twice
		const orderIds = await orderIdsRun();
		expect(new Set(orderIds).size).toBe(orderIds.length);
	});

	test('an order made just before the first publish is never run (the first check starts the record)', async () => {
		const orderIds = await orderIdsRun();
		expect(orderIds.filter((id) => id === beforePublish)).toEqual([]);
	});
});

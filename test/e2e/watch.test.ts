/**
 * The watch (watch.ts) in a real n8n 2.41.1: n8n polls the trigger at its Poll Times (here Watch Every
 * 1 minute, to keep the file short) and the trigger mends what the service's record of its endpoint
 * shows, with nothing sent by hand. One n8n, three trigger workflows on the same key (every order
 * reaches all three):
 * - "steady": nothing goes wrong for it over the whole file; it must start no execution but its
 *   events' runs (all well costs nothing);
 * - "rotated": its signing secret is rotated elsewhere (the API, as Webhook Endpoint > Rotate Secret
 *   does) and the service's 24 hours of two signatures pass: the next delivery is refused (401); the
 *   watch takes a new secret, the order runs once (caught up), the service's retry verifies and runs
 *   nothing;
 * - "disabled": its endpoint is disabled at the service: enabled again by the watch, the order created
 *   meanwhile runs once, and the first item after it carries the notice, once.
 *
 *   .ci/with-node24 npm run build && .ci/with-node24 npx jest -c test/e2e/jest.config.js test/e2e/watch.test.ts
 */
import { allExecutions, bootBench, triggerWorkflow } from '../bench/n8nBench';
import type { Json } from '../json';
import type { SandboxHandle } from '../sandbox';
import { nodeOutput, splitRuns, stopKeepingLog, Timings, waitFor } from './kit';
import type { N8nHandle, PublicApi } from './n8n';

const BRAND = 2;
const NODE = 'Order Created';
const STEADY = { id: 'watchSteady1', webhookId: '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f' };
const ROTATED = { id: 'watchRotated1', webhookId: '2d3e4f5a-6b7c-4d8e-9f0a-1b2c3d4e5f6a' };
const DISABLED = { id: 'watchDisabled1', webhookId: '3e4f5a6b-7c8d-4e9f-8a1b-2c3d4e5f6a7b' };
type Wf = typeof STEADY;

let sandbox: SandboxHandle;
let n8n: N8nHandle;
let api: PublicApi;
const timings = new Timings();
const created: number[] = [];

const url = (wf: Wf) => `${n8n.baseUrl}/webhook/${wf.webhookId}/webhook`;
const endpointOf = async (wf: Wf) =>
	(await sandbox.control.endpoints()).find((e) => e.url === url(wf))!;

type Item = Record<string, Json> & { data: { orderId: number }; caughtUp?: boolean };
/** Every item that ran in `wf`, with its execution's mode. */
const itemsRun = async (wf: Wf) =>
	(await splitRuns(await allExecutions(api, wf.id, true), NODE)).runs.flatMap((e) =>
		(nodeOutput(e as { data?: Json }, NODE) as unknown as Item[]).map((item) => ({
			item,
			mode: String(e.mode),
		})),
	);

/** Calls the service's API with the key the workflows use, as another workflow would. */
async function callService(method: string, path: string, body?: Json) {
	const response = await fetch(`${sandbox.baseUrl}${path}`, {
		method,
		headers: {
			authorization: `Bearer ${sandbox.demoApiKey}`,
			'content-type': 'application/json',
			'idempotency-key': `e2e-watch-${Date.now()}-${Math.random()}`,
		},
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	expect(response.status).toBeLessThan(300);
}

async function createOrder(): Promise<number> {
	const id = (await sandbox.control.createOrder({ brandId: BRAND })).order.id as number;
	created.push(id);
	return id;
}

beforeAll(async () => {
	let credentialId: string;
	({ sandbox, n8n, api, credentialId } = await timings.time('sandbox, n8n boot, owner', () =>
		bootBench({ readyTimeoutMs: 300_000 }),
	));
	for (const wf of [STEADY, ROTATED, DISABLED]) {
		await n8n.createWorkflow({
			...triggerWorkflow(wf.id, wf.webhookId, credentialId, true, { watchEvery: 1 }),
			name: `watch ${wf.id}`,
		});
		await api.activateWorkflow(wf.id);
		await n8n.waitForActivation(wf.id);
	}
}, 420_000);

afterAll(async () => {
	await stopKeepingLog(n8n, sandbox, 'e2e-watch.log');
	console.log(`[e2e watch] timings:\n${timings.report()}`);
}, 120_000);

test('a secret rotated elsewhere: the refused delivery is mended by the watch with nothing sent by hand; the order runs once; the retry verifies and runs nothing', async () => {
	const endpoint = await endpointOf(ROTATED);
	await callService('POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`);
	// the service's 24 hours of two signatures pass
	await sandbox.control.advanceClock(24 * 3600 + 60);
	const order = await createOrder();
	const refused = await waitFor(
		'the delivery to "rotated" refused',
		async () =>
			(await sandbox.control.deliveries(endpoint.id)).find(
				(d) =>
					(d.event.data as { orderId?: number }).orderId === order && d.responseStatusCode === 401,
			),
		30_000,
	);
	const refusedAt = Date.now();
	const ran = await waitFor(
		'the order to run in "rotated"',
		async () => (await itemsRun(ROTATED)).find((r) => r.item.data.orderId === order),
		3 * 60_000,
		2_000,
	);
	timings.add('rotated: first refused delivery -> order run', Date.now() - refusedAt);
	expect([ran.item.caughtUp, ran.mode]).toEqual([true, 'trigger']);
	const rotations = (await sandbox.control.requests()).filter(
		(r) => r.route === 'rotateWebhookEndpointSecret' && r.path.includes(`/${endpoint.id}/`),
	);
	expect(rotations).toHaveLength(2);
	// the service's retry (a minute after) is signed with the secret the watch took: 200, no run
	await sandbox.control.advanceClock(61);
	await waitFor(
		'the retry to "rotated" answered 200',
		async () =>
			(await sandbox.control.deliveries(endpoint.id)).find(
				(d) => d.id === refused.id && d.responseStatusCode === 200,
			),
		30_000,
	);
	expect((await itemsRun(ROTATED)).filter((r) => r.item.data.orderId === order)).toHaveLength(1);
}, 300_000);

test('an endpoint disabled at the service: enabled again by the watch, the order of that time runs once, and the first item after it carries the notice, once', async () => {
	const endpoint = await endpointOf(DISABLED);
	await callService('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { status: 'Disabled' });
	const order = await createOrder();
	const started = Date.now();
	const ran = await waitFor(
		'the order to run in "disabled"',
		async () => (await itemsRun(DISABLED)).find((r) => r.item.data.orderId === order),
		3 * 60_000,
		2_000,
	);
	timings.add('disabled: order created -> run with the notice', Date.now() - started);
	expect((await endpointOf(DISABLED)).status).toBe('Enabled');
	expect(ran.item.caughtUp).toBe(true);
	expect(String(ran.item.notice)).toMatch(/had disabled this trigger's webhook endpoint .* until /);
	const next = await createOrder();
	const after = await waitFor(
		'the next order to run in "disabled"',
		async () => (await itemsRun(DISABLED)).find((r) => r.item.data.orderId === next),
		60_000,
	);
	expect(after.item.notice).toBeUndefined();
	expect((await itemsRun(DISABLED)).filter((r) => r.item.notice !== undefined)).toHaveLength(1);
}, 300_000);

test('all well for "steady" over the whole file: its every order ran once, from its delivery, and nothing else started an execution (its publication neither)', async () => {
	await waitFor(
		'every order of the file to run in "steady"',
		async () => {
			const ran = (await itemsRun(STEADY)).map((r) => r.item.data.orderId);
			return created.every((id) => ran.includes(id)) ? true : undefined;
		},
		60_000,
	);
	const executions = await allExecutions(api, STEADY.id, true);
	const items = await itemsRun(STEADY);
	const byOrder = (a: [number, string], b: [number, string]) => a[0] - b[0];
	expect(items.map((r): [number, string] => [r.item.data.orderId, r.mode]).sort(byOrder)).toEqual(
		created.map((id): [number, string] => [id, 'webhook']).sort(byOrder),
	);
	expect(executions.map((e) => e.mode)).toEqual(created.map(() => 'webhook'));
	console.log(
		`[e2e watch] steady: ${executions.length} executions for ${created.length} orders, none from the watch`,
	);
}, 120_000);

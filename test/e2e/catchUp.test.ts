/**
 * "Catch Up Missed Orders" in a real n8n 2.41.1: the sandbox disables the trigger's endpoint
 * (5 days of failing deliveries on its clock), orders are created meanwhile, the endpoint works
 * again, one new event is delivered: its run brings the missed orders, each once. Twice: the
 * endpoint re-enabled by activation (n8n started with N8N_USE_WORKFLOW_PUBLICATION_SERVICE=false,
 * which runs checkExists at every start, as n8n 1.x and 2.0 always do), and the workflow turned off
 * and on (the Disabled endpoint deleted, a new one made).
 *
 *   .ci/with-node24 npm run build && .ci/with-node24 npx jest -c test/e2e/jest.config.js test/e2e/catchUp.test.ts
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { allExecutions, bootBench, triggerWorkflow } from '../bench/n8nBench';
import type { SandboxHandle } from '../sandbox';
import { nodeOutput, waitFor } from './kit';
import type { N8nHandle, PublicApi } from './n8n';
import type { Json } from '../json';

const repoRoot = resolve(__dirname, '..', '..');
const WF = 'catchUpOrders001';
const WEBHOOK_ID = '0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0';
const DAY_S = 24 * 3600;
const BRAND = 2;

let sandbox: SandboxHandle;
let n8n: N8nHandle;
let api: PublicApi;
const url = () => `${n8n.baseUrl}/webhook/${WEBHOOK_ID}/webhook`;
const endpoint = async () => (await sandbox.control.endpoints()).find((e) => e.url === url() || e.url.startsWith('http://127.0.0.1:1/'))!;

type Item = Record<string, Json> & { data: { orderId: number }; caughtUp?: boolean; notice?: Record<string, Json> };
const itemsOf = (execution: Json) => nodeOutput(execution as { data?: Json }, 'Order Created') as unknown as Item[];
const executions = async () => await allExecutions(api, WF, true);

/** The endpoint's deliveries fail for over 5 days (one order meanwhile); the service disables it; two more orders. */
async function outage(): Promise<number[]> {
	const { id } = await endpoint();
	await sandbox.control.setEndpointUrl(id, 'http://127.0.0.1:1/unreachable');
	await sandbox.control.advanceClock(5 * DAY_S + 60);
	const missed = [(await sandbox.control.createOrder({ brandId: BRAND })).order.id as number];
	await sandbox.control.advanceClock(2 * DAY_S);
	expect(await endpoint()).toMatchObject({ status: 'Disabled', disabledReason: 'FailingDeliveries' });
	for (let i = 0; i < 2; i++) missed.push((await sandbox.control.createOrder({ brandId: BRAND })).order.id as number);
	await sandbox.control.setEndpointUrl(id, url());
	return missed;
}

/** One new order's event; resolves with the items of its execution. */
async function nextEvent(): Promise<{ orderId: number; items: Item[] }> {
	const { order, event } = await sandbox.control.createOrder({ brandId: BRAND });
	const execution = await waitFor(`the execution of ${String(event.id)}`, async () => (await executions()).find((e) => itemsOf(e).some((i) => i.id === event.id)), 60_000, 300).catch(
		async (error: Error) => {
			// what the service saw, for the failure message
			const delivery = (await sandbox.control.deliveries()).find((d) => d.eventId === event.id);
			throw new Error(`${error.message}; delivery: ${JSON.stringify(delivery)}`);
		},
	);
	return { orderId: order.id as number, items: itemsOf(execution) };
}

beforeAll(async () => {
	let credentialId: string;
	({ sandbox, n8n, api, credentialId } = await bootBench({ readyTimeoutMs: 300_000, env: { N8N_USE_WORKFLOW_PUBLICATION_SERVICE: 'false' } }));
	const workflow = triggerWorkflow(WF, WEBHOOK_ID, credentialId, true, { catchUpMissedOrders: true });
	await n8n.createWorkflow({ ...workflow, name: 'catch-up: order arrives' });
	await api.activateWorkflow(WF);
	await n8n.waitForActivation(WF);
}, 420_000);

afterAll(async () => {
	if (n8n) {
		mkdirSync(join(repoRoot, 'tmp'), { recursive: true });
		writeFileSync(join(repoRoot, 'tmp', 'e2e-catch-up.log'), n8n.logs());
	}
	await n8n?.stop();
	await sandbox?.close();
}, 120_000);

test('re-enabled by activation at start-up: the next event brings the missed orders once; a restart brings nothing again', async () => {
	const before = await nextEvent();
	expect(before.items).toHaveLength(1);
	const missed = await outage();
	await n8n.restart();
	await n8n.login();
	await waitFor('the endpoint re-enabled', async () => ((await endpoint()).status === 'Enabled' ? true : undefined), 60_000);
	const first = await nextEvent();
	expect(first.items.map((i) => [i.data.orderId, i.caughtUp === true])).toEqual([...missed.map((id) => [id, true]), [first.orderId, false]]);
	expect(first.items.every((i) => i.notice?.caughtUpOrders === 3)).toBe(true);
	expect(first.items[0]).toMatchObject({ type: 'order.created', id: `caught_up_order.created_${missed[0]}`, data: { brandId: BRAND } });
	await n8n.restart();
	await n8n.login();
	const after = await nextEvent();
	expect(after.items.map((i) => i.data.orderId)).toEqual([after.orderId]);
});

test('turned off and on over the Disabled endpoint: the new endpoint\'s first event brings the missed orders once', async () => {
	const missed = await outage();
	await api.deactivateWorkflow(WF);
	await waitFor('the Disabled endpoint deleted', async () => ((await sandbox.control.endpoints()).length === 0 ? true : undefined), 30_000);
	await api.activateWorkflow(WF);
	await n8n.waitForActivation(WF);
	const first = await nextEvent();
	expect(first.items.map((i) => [i.data.orderId, i.caughtUp === true])).toEqual([...missed.map((id) => [id, true]), [first.orderId, false]]);
	// over the whole file no order ran twice
	const orderIds = (await executions()).flatMap((e) => itemsOf(e).map((i) => i.data.orderId));
	expect(new Set(orderIds).size).toBe(orderIds.length);
});

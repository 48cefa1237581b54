/**
 * End-to-end: the Marketplace Polling Trigger under n8n's durable poll scheduler, in a real n8n
 * 2.41.1 (N8N_SCHEDULER_ENABLED, N8N_SCHEDULER_POLL_TRIGGERS_ENABLED and
 * N8N_POLLER_DURABLE_CURSORS_ENABLED true; all three are off by default). The same promises as on
 * n8n's default scheduler (marketplace.test.ts): every new order and every status change once, from
 * the activation on, across a failed poll and a restart; the status change of an order made minutes
 * before the activation too.
 *
 *   .ci/with-node24 npm run build && .ci/with-node24 npx jest -c test/e2e/jest.config.js test/e2e/durablePolling.test.ts
 */
import { resolve } from 'node:path';

import { startSandbox, type SandboxHandle } from '../sandbox';
import { call } from '../sandbox/testkit';
import { DEMO_CREDENTIAL } from './dev';
import { executionsOf, nodeOutput, stopKeepingLog, Timings, waitFor } from './kit';
import { startN8n, type N8nHandle, type PublicApi } from './n8n';
import type { Json } from '../json';

const repoRoot = resolve(__dirname, '..', '..');
const POLLING_TYPE = 'n8n-nodes-marketplace-management.marketplacePollingTrigger';
const CRED_REF = { marketplaceApi: { id: DEMO_CREDENTIAL.id, name: DEMO_CREDENTIAL.name } };
const DURABLE = {
	N8N_SCHEDULER_ENABLED: 'true',
	N8N_SCHEDULER_POLL_TRIGGERS_ENABLED: 'true',
	N8N_POLLER_DURABLE_CURSORS_ENABLED: 'true',
};
const NEW_ORDERS = { id: 'e2eDurableNew001', node: 'New Orders' };
const STATUS = { id: 'e2eDurableStat01', node: 'Status Changes' };
const CHANGES = { id: 'e2eDurableChng01', node: 'Order Changes' };

const timings = new Timings();
let sandbox: SandboxHandle;
let n8n: N8nHandle;
let api: PublicApi;

/** A workflow of one Polling Trigger that polls every minute at the given second. */
function pollingWorkflow(
	wf: { id: string; node: string },
	second: number,
	parameters: Record<string, unknown>,
) {
	return {
		id: wf.id,
		name: `e2e durable scheduler: ${wf.node}`,
		nodes: [
			{
				id: `${wf.id}-poll`,
				name: wf.node,
				type: POLLING_TYPE,
				typeVersion: 1,
				position: [0, 0],
				credentials: CRED_REF,
				parameters: {
					...parameters,
					pollTimes: { item: [{ mode: 'custom', cronExpression: `${second} * * * * *` }] },
				},
			},
		],
		connections: {},
		settings: { executionOrder: 'v1' },
	};
}

/** Every item the active poller reported for a workflow, oldest run first. */
async function reported(wf: { id: string; node: string }): Promise<Json[]> {
	const runs = (await executionsOf(api, wf.id)).filter((e) => e.mode === 'trigger');
	return runs.flatMap((e) => nodeOutput(e, wf.node));
}

/** Waits (up to two poll intervals) until the workflow reported every id, and returns all it reported. */
async function waitForReported(wf: { id: string; node: string }, ids: number[]): Promise<Json[]> {
	return await waitFor(
		`${wf.node} to report ${ids.join(', ')}`,
		async () => {
			const items = await reported(wf);
			return ids.every((id) => items.some((o) => o.id === id)) ? items : undefined;
		},
		150_000,
		1_000,
	);
}

const countOf = (items: Json[], id: number) => items.filter((o) => o.id === id).length;

beforeAll(async () => {
	sandbox = await timings.time('sandbox start', () =>
		startSandbox({ port: 0, host: '127.0.0.1', allowHttpLoopback: true }),
	);
	n8n = await timings.time('n8n boot with the durable scheduler', () =>
		startN8n({ packageRoot: repoRoot, env: DURABLE }),
	);
	await n8n.setupOwner();
	await n8n.login();
	await n8n.importCredential([
		{ ...DEMO_CREDENTIAL, data: { baseUrl: sandbox.baseUrl, apiKey: sandbox.demoApiKey } },
	]);
	api = await n8n.publicApi();
});

afterAll(async () => {
	console.log(`[e2e durable polling] timings:\n${timings.report()}`);
	await stopKeepingLog(n8n, sandbox, 'e2e-durable-polling-n8n.log');
});

describe("Marketplace Polling Trigger under n8n's durable poll scheduler", () => {
	const orders = { beforeActivation: 0, afterActivation: 0, changed: 0, duringFault: 0 };
	/** Orders made minutes before Order Changes is activated: first, as the sandbox's clock only moves forward. */
	const old = { packed: 0, cancelled: 0, made: 0 };

	beforeAll(async () => {
		old.packed = (await sandbox.control.createOrder({ brandId: 1 })).order.id;
		old.cancelled = (await sandbox.control.createOrder({ brandId: 1 })).order.id;
	});

	test('orders made after the activation but before the first scheduled poll are reported once; older ones never', async () => {
		orders.beforeActivation = (await sandbox.control.createOrder({ brandId: 1 })).order.id;
		// the first scheduled poll about 20 s after the activation
		const second = Math.floor((Date.now() + 25_000) / 1000) % 60;
		await n8n.createWorkflow(
			pollingWorkflow(NEW_ORDERS, second, {
				events: ['created'],
				requestOptions: { maxAttempts: 1 },
			}),
		);
		await n8n.createWorkflow(
			pollingWorkflow(STATUS, second, { events: ['statusChanged'], lookbackDays: 1 }),
		);
		await timings.time('activate two polling workflows', async () => {
			for (const wf of [NEW_ORDERS, STATUS]) {
				await api.activateWorkflow(wf.id);
				await n8n.waitForActivation(wf.id);
			}
		});
		orders.afterActivation = (await sandbox.control.createOrder({ brandId: 2 })).order.id;
		orders.changed = (await sandbox.control.createOrder({ brandId: 3 })).order.id;
		await sandbox.control.cancelOrder(orders.changed);

		const items = await timings.time('first scheduled poll reports', () =>
			waitForReported(NEW_ORDERS, [orders.afterActivation, orders.changed]),
		);
		expect(countOf(items, orders.afterActivation)).toBe(1);
		expect(countOf(items, orders.changed)).toBe(1);
		expect(countOf(items, orders.beforeActivation)).toBe(0);
		// the durable path is the one that ran: n8n keeps the node's cursor out of the workflow's static data
		const staticData = (await n8n.rest<Json>('GET', `/workflows/${NEW_ORDERS.id}`)).staticData;
		expect(JSON.stringify(staticData ?? {})).not.toContain('orderWatch');
		expect(JSON.stringify(staticData ?? {})).toContain('marketplacePollingFirstState');
	});

	test('a status change made before the first scheduled poll is reported once', async () => {
		const items = await waitForReported(STATUS, [orders.changed]);
		const changes = items.filter((o) => o.id === orders.changed);
		expect(changes).toHaveLength(1);
		expect(changes[0].change).toMatchObject({ kind: 'statusChanged', status: 'Cancelled' });
		await api.deactivateWorkflow(STATUS.id);
	});

	test('a failed poll moves nothing on: the next one reports the order made before it, once', async () => {
		const before = (await sandbox.control.requests()).at(-1)?.seq ?? 0;
		orders.duringFault = (await sandbox.control.createOrder({ brandId: 4 })).order.id;
		await sandbox.control.injectFault({ route: 'listOrders', mode: '500', count: 1 });
		const items = await timings.time('failed poll, then the next', () =>
			waitForReported(NEW_ORDERS, [orders.duringFault]),
		);
		const polls = (await sandbox.control.requests(before)).filter((r) => r.route === 'listOrders');
		expect(polls.map((r) => r.status).slice(0, 2)).toEqual([500, 200]);
		expect(countOf(items, orders.duringFault)).toBe(1);
	});

	test('an order made before the activation and packed after it: the first scheduled poll reports Created -> Packed, with the order made meanwhile', async () => {
		const second = Math.floor((Date.now() + 25_000) / 1000) % 60;
		await n8n.createWorkflow(
			pollingWorkflow(CHANGES, second, {
				events: ['created', 'statusChanged'],
				lookbackDays: 1,
				filters: { brandIds: '1' },
			}),
		);
		await timings.time('activate Order Changes', async () => {
			await api.activateWorkflow(CHANGES.id);
			await n8n.waitForActivation(CHANGES.id);
		});
		const packing = await call(sandbox, 'POST', '/v1/fulfillment/orders/packed', {
			body: { orderIds: [old.packed] },
		});
		expect(packing.body).toEqual({
			results: [{ orderId: old.packed, success: true, status: 'Packed' }],
		});
		old.made = (await sandbox.control.createOrder({ brandId: 1 })).order.id;

		await timings.time('first scheduled poll of Order Changes reports', () =>
			waitForReported(CHANGES, [old.made]),
		);
		const [first, ...later] = (await executionsOf(api, CHANGES.id)).filter(
			(e) => e.mode === 'trigger',
		);
		expect(later).toEqual([]);
		expect(nodeOutput(first, CHANGES.node).map((o) => [o.id, o.change])).toEqual([
			[
				old.packed,
				expect.objectContaining({
					kind: 'statusChanged',
					status: 'Packed',
					previousStatus: 'Created',
				}),
			],
			[old.made, expect.objectContaining({ kind: 'created', status: 'Created' })],
		]);
	});

	test('an order made while n8n is down is reported once after the restart; nothing is reported twice', async () => {
		let whileDown = 0;
		await timings.time('restart', () =>
			n8n.restart(async () => {
				whileDown = (await sandbox.control.createOrder({ brandId: 5 })).order.id;
				await sandbox.control.cancelOrder(old.cancelled);
			}),
		);
		const items = await timings.time('poll after the restart reports', () =>
			waitForReported(NEW_ORDERS, [whileDown]),
		);
		const ids = items.map((o) => Number(o.id));
		expect(new Set(ids).size).toBe(ids.length);
		expect(ids).toEqual(
			expect.arrayContaining([orders.afterActivation, orders.duringFault, whileDown]),
		);
		await api.deactivateWorkflow(NEW_ORDERS.id);
	});

	test('Order Changes after the restart: the change made while n8n was down once, every earlier change still once', async () => {
		const items = await timings.time('Order Changes after the restart reports', () =>
			waitForReported(CHANGES, [old.cancelled]),
		);
		expect(items.map((o) => [o.id, o.change.status])).toEqual([
			[old.packed, 'Packed'],
			[old.made, 'Created'],
			[old.cancelled, 'Cancelled'],
		]);
		expect(items[2].change).toMatchObject({ kind: 'statusChanged', previousStatus: 'Created' });
		await api.deactivateWorkflow(CHANGES.id);
	});
});

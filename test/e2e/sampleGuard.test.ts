/**
 * A test run from the editor does not write a sample, in a real n8n 2.41.1 against the sandbox
 * (nodes/Marketplace/actions/sampleGuard.ts). The pack-on-order story, Marketplace Trigger ->
 * Fulfillment > Mark Orders Packed with Order IDs {{ $json.data.orderId }}, run as the editor's
 * *Execute workflow* runs it (POST /rest/workflows/{id}/run with triggerToStartFrom, then a Webhook
 * Endpoint > Test delivery to the test URL, which gives the sample): the run finishes, Mark Orders Packed outputs the item held back with the
 * reason, no mark-packed request reaches the service and the newest order stays Created. With Options
 * > Write Sample Items on, the same run packs it. The same for the Polling Trigger's Fetch Test Event.
 *
 *   .ci/with-node24 npm run --silent build && .ci/with-node24 npx jest -c test/e2e/jest.config.js test/e2e/sampleGuard.test.ts
 */
import { bootBench, PKG, TRIGGER_TYPE, type Bench } from '../bench/n8nBench';
import type { Json } from '../json';
import { nodeOutput, testDeliveryWhileListening, waitFor } from './kit';

const BRAND = 3;
const PACK = 'Mark Orders Packed';
const PACKED_PATH = '/v1/fulfillment/orders/packed';

let b: Bench;
beforeAll(async () => {
	b = await bootBench();
}, 120_000);
afterAll(async () => {
	await b?.n8n.stop();
	await b?.sandbox.close();
});

/** Start node `start` -> Mark Orders Packed (its Order IDs and options as given). */
function packWorkflow(
	id: string,
	start: Record<string, unknown>,
	orderIds: string,
	options: Record<string, unknown> = {},
) {
	const credentials = {
		marketplaceApi: { id: b.credentialId, name: 'Marketplace sandbox (bench)' },
	};
	return {
		id,
		name: `sample guard ${id}`,
		nodes: [
			{ id: `${id}-start`, position: [0, 0], credentials, ...start },
			{
				id: `${id}-pack`,
				name: PACK,
				type: `${PKG}.marketplace`,
				typeVersion: 1,
				position: [260, 0],
				credentials,
				parameters: { resource: 'fulfillment', operation: 'markPacked', orderIds, options },
			},
		],
		connections: { [start.name as string]: { main: [[{ node: PACK, type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	};
}

const trigger = (webhookId: string) => ({
	name: 'New Order',
	type: TRIGGER_TYPE,
	typeVersion: 2,
	webhookId,
	parameters: { eventTypes: ['order.created'] },
});
const poller = {
	name: 'Order Poll',
	type: `${PKG}.marketplacePollingTrigger`,
	typeVersion: 1,
	parameters: { events: ['created'] },
};

const lastSeq = async () => (await b.sandbox.control.requests()).at(-1)?.seq ?? 0;
const packRequests = async (since: number) =>
	(await b.sandbox.control.requests(since)).filter((r) => r.path === PACKED_PATH);
const statusOf = async (id: number) =>
	((await b.sandbox.control.state('orders', id)) as { status: string }).status;

/** Listen for test event, as the editor's Execute workflow, and a test delivery to it: the run the sample starts. */
async function runOnSample(workflowId: string, startNode: string, webhookId: string) {
	const answer = await b.n8n.startManualRun(workflowId, startNode);
	expect(answer.waitingForWebhook).toBe(true);
	await testDeliveryWhileListening(b.sandbox, webhookId);
	const run = (await waitFor(
		'the sample run',
		async () =>
			(await b.api.listExecutions({ workflowId, includeData: true, limit: 5 })).find(
				(e) => e.status !== 'running' && e.status !== 'new',
			),
		30_000,
		200,
	)) as { status: string; data?: Json };
	// Until n8n ends the listening and the trigger deletes its endpoint, the service still delivers
	// real events to the test URL: an order the next test makes would run in this workflow too.
	await waitFor('the listening to end at the service', async () =>
		(await b.sandbox.control.endpoints()).some((e) => e.url.includes('/webhook-test/'))
			? undefined
			: true,
	);
	return run;
}

describe('Marketplace Trigger -> Mark Orders Packed, Execute workflow on the sample', () => {
	test('held back: the write node says so (sample), no mark-packed request, the newest order stays Created', async () => {
		const { order } = await b.sandbox.control.createOrder({ brandId: BRAND });
		const since = await lastSeq();
		const webhookId = '5a0e7c1d-2b3f-4c5d-8e9f-0a1b2c3d4e01';
		await b.n8n.createWorkflow(
			packWorkflow('sampleGuardWh001', trigger(webhookId), '={{ $json.data.orderId }}'),
		);
		const started = Date.now();
		const execution = await runOnSample('sampleGuardWh001', 'New Order', webhookId);
		expect(execution.status).toBe('success');
		const [sample] = nodeOutput(execution, 'New Order') as Array<Record<string, Json>>;
		expect(sample).toMatchObject({ sample: true, data: { orderId: order.id } });
		const out = nodeOutput(execution, PACK) as Array<Record<string, Json>>;
		expect(out).toEqual([
			{ heldBack: true, heldBackReason: expect.stringMatching(/\bsample\b/), orderId: order.id },
		]);
		expect(out[0].heldBackReason).toContain('"New Order"');
		expect(out[0].heldBackReason).toContain('"Write Sample Items"');
		expect(await packRequests(since)).toEqual([]);
		expect(await statusOf(order.id as number)).toBe('Created');
		console.log(`sample run held back in ${Date.now() - started} ms`);
	}, 90_000);

	test('with Write Sample Items on, the same run packs the newest order', async () => {
		const { order } = await b.sandbox.control.createOrder({ brandId: BRAND });
		const since = await lastSeq();
		const webhookId = '5a0e7c1d-2b3f-4c5d-8e9f-0a1b2c3d4e02';
		await b.n8n.createWorkflow(
			packWorkflow('sampleGuardWh002', trigger(webhookId), '={{ $json.data.orderId }}', {
				writeSampleItems: true,
			}),
		);
		const execution = await runOnSample('sampleGuardWh002', 'New Order', webhookId);
		expect(execution.status).toBe('success');
		// one listening, one run (a failure here shows every run and every pack request it made)
		const runs = await b.api.listExecutions({ workflowId: 'sampleGuardWh002', limit: 5 });
		const packs = (await packRequests(since)).map((r) => [r.seq, r.body]);
		expect({ runs: runs.length, packs: packs.length, out: nodeOutput(execution, PACK) }).toEqual({
			runs: 1,
			packs: 1,
			out: [expect.objectContaining({ orderId: order.id, success: true, status: 'Packed' })],
		});
		expect((await packRequests(since)).map((r) => JSON.parse(r.body))).toEqual([
			{ orderIds: [order.id] },
		]);
		expect(await statusOf(order.id as number)).toBe('Packed');
	}, 90_000);
});

describe('Marketplace Polling Trigger -> Mark Orders Packed, Execute workflow (Fetch Test Event)', () => {
	test('the newest order comes as a sample and is held back; with Write Sample Items on it is packed', async () => {
		const { order } = await b.sandbox.control.createOrder({ brandId: BRAND });
		await b.n8n.createWorkflow(packWorkflow('sampleGuardPl001', poller, '={{ $json.id }}'));
		await b.n8n.createWorkflow(
			packWorkflow('sampleGuardPl002', poller, '={{ $json.id }}', { writeSampleItems: true }),
		);
		let since = await lastSeq();
		const held = (await b.n8n.runWorkflow('sampleGuardPl001', 'Order Poll')) as {
			status: string;
			data?: Json;
		};
		expect(held.status).toBe('success');
		expect(nodeOutput(held, 'Order Poll')).toEqual([
			expect.objectContaining({ id: order.id, sample: true, sampleSource: 'newest-order' }),
		]);
		expect(nodeOutput(held, PACK)).toEqual([
			{
				heldBack: true,
				heldBackReason: expect.stringMatching(/\bsample\b.*"Order Poll"/),
				orderId: order.id,
			},
		]);
		expect(await packRequests(since)).toEqual([]);
		expect(await statusOf(order.id as number)).toBe('Created');

		since = await lastSeq();
		const written = (await b.n8n.runWorkflow('sampleGuardPl002', 'Order Poll')) as {
			status: string;
			data?: Json;
		};
		expect(written.status).toBe('success');
		expect(await packRequests(since)).toHaveLength(1);
		expect(await statusOf(order.id as number)).toBe('Packed');
	}, 90_000);
});

/**
 * A sample is not written in a test run (nodes/Marketplace/actions/sampleGuard.ts): the writes of the
 * Marketplace node, run in n8n-core's engine after a real Marketplace Trigger or Marketplace Polling
 * Trigger as n8n runs them in a manual execution, hold back the items that come from the trigger's
 * sample, send nothing for them (the sandbox's request log), and write them with Options > Write Sample
 * Items. Items without `sample`, production modes and other start nodes are written as before.
 */
import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeParameters,
	INodeType,
} from 'n8n-workflow';

import { MarketplacePollingTrigger } from '../../nodes/MarketplacePollingTrigger/MarketplacePollingTrigger.node';
import { MarketplaceTrigger } from '../../nodes/MarketplaceTrigger/MarketplaceTrigger.node';
import { NodeFixture, items, pairs, type RunOptions } from './helpers';

const fixture = new NodeFixture();
beforeAll(async () => await fixture.start());
afterAll(async () => await fixture.close());

/**
 * Test-only middle node: outputs its input items and one more, none with pairedItem (as a Code node
 * that builds new items does), so n8n cannot tell which input item an output item came from.
 */
const unpairingNode: INodeType = {
	description: {
		displayName: 'Unpair (test)',
		name: 'n8n-nodes-marketplace-management-test.unpair',
		group: ['transform'],
		version: 1,
		description: 'Drops paired items',
		defaults: { name: 'Unpair' },
		inputs: ['main'],
		outputs: ['main'],
		properties: [],
	} as INodeType['description'],
	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const input = this.getInputData();
		return [[...input, input[0]].map((i) => ({ json: i.json }))];
	},
};

const TRIGGER = 'New Order';
const POLLER = 'Order Poll';

/** What "Listen for test event" hands the workflow (nodes/MarketplaceTrigger/sample.ts buildSample). */
const sampleEvent = (orderId: number, brandId = 1): IDataObject => ({
	id: `msg_sample_${orderId}`,
	type: 'order.created',
	createdAt: new Date().toISOString(),
	data: { brandId, orderId },
	sample: true,
	sampleSource: 'newest-order',
	sampleNote: `A sample order.created event made from your newest order (${orderId}); it did not happen.`,
});
/** A real delivery (an order the user placed to test, or production): no `sample`. */
const realEvent = (orderId: number, brandId = 1): IDataObject => ({
	id: `msg_real_${orderId}`,
	type: 'order.created',
	createdAt: new Date().toISOString(),
	data: { brandId, orderId },
});

const fromTrigger = (events: IDataObject[], extra: RunOptions = {}): RunOptions => ({
	start: {
		node: new MarketplaceTrigger(),
		name: TRIGGER,
		parameters: { eventTypes: ['order.created'] },
		data: events.map((json) => ({ json })),
	},
	...extra,
});

const markPacked = (options: IDataObject = {}): INodeParameters => ({
	resource: 'fulfillment',
	operation: 'markPacked',
	orderIds: '={{ $json.data.orderId }}',
	options,
});

async function newOrder(brandId = 1): Promise<number> {
	const { order } = await fixture.control.createOrder({ brandId });
	return order.id as number;
}
const statusOf = async (id: number) =>
	(await fixture.control.state<IDataObject>('orders', id)).status;
const json = (out: INodeExecutionData[]) => out.map((i) => i.json);

describe('Mark Orders Packed after the Marketplace Trigger', () => {
	test('manual run on the sample: held back with the reason, nothing sent, the order stays as it was', async () => {
		const orderId = await newOrder();
		const r = await fixture.run(markPacked(), fromTrigger([sampleEvent(orderId)]));
		expect(r.error).toBeUndefined();
		expect(r.sent).toEqual([]);
		expect(json(r.items)).toEqual([
			{ heldBack: true, heldBackReason: expect.any(String), orderId },
		]);
		const reason = r.items[0].json.heldBackReason as string;
		expect(reason).toMatch(/\bsample\b/);
		expect(reason).toContain(`"${TRIGGER}"`);
		expect(reason).toContain('"Write Sample Items"');
		expect(pairs(r.items)).toEqual([0]);
		expect(await statusOf(orderId)).toBe('Created');
	});

	test('Write Sample Items on: the sample is written as any item', async () => {
		const orderId = await newOrder();
		const r = await fixture.run(
			markPacked({ writeSampleItems: true }),
			fromTrigger([sampleEvent(orderId)]),
		);
		expect(r.error).toBeUndefined();
		expect(r.sent.map((s) => [s.method, s.path, s.body])).toEqual([
			['POST', '/v1/fulfillment/orders/packed', { orderIds: [orderId] }],
		]);
		expect(r.items[0].json).toMatchObject({ orderId, success: true, status: 'Packed' });
		expect(await statusOf(orderId)).toBe('Packed');
	});

	test('a real test delivery (no sample) is packed; beside a sample only the sample is held back', async () => {
		const [real, sampled] = [await newOrder(), await newOrder()];
		const r = await fixture.run(
			markPacked(),
			fromTrigger([realEvent(real), sampleEvent(sampled), realEvent(real)]),
		);
		expect(r.error).toBeUndefined();
		expect(r.sent.map((s) => s.body)).toEqual([{ orderIds: [real] }]);
		expect(
			r.items.map((i) => [i.json.orderId, i.json.heldBack ?? false, i.json.success ?? null]),
		).toEqual([
			[real, false, true],
			[sampled, true, null],
			[real, false, true],
		]);
		expect(pairs(r.items)).toEqual([0, 1, 2]);
		expect(await statusOf(real)).toBe('Packed');
		expect(await statusOf(sampled)).toBe('Created');
	});

	test.each(['webhook', 'trigger'] as const)(
		'mode %s (production) writes even an item marked sample',
		async (mode) => {
			const orderId = await newOrder();
			const r = await fixture.run(markPacked(), fromTrigger([sampleEvent(orderId)], { mode }));
			expect(r.error).toBeUndefined();
			expect(r.sent).toHaveLength(1);
			expect(r.items[0].json).toMatchObject({ orderId, success: true });
			expect(await statusOf(orderId)).toBe('Packed');
		},
	);

	test('another start node (as a Manual Trigger run) is not a sample, even with a sample field', async () => {
		const orderId = await newOrder();
		const r = await fixture.run(markPacked(), { inputItems: items(sampleEvent(orderId)) });
		expect(r.error).toBeUndefined();
		expect(r.sent).toHaveLength(1);
		expect(await statusOf(orderId)).toBe('Packed');
	});

	test('items n8n cannot pair with the trigger output (a node dropped the pairing) are written, and nothing throws', async () => {
		const [a, b] = [await newOrder(), await newOrder()];
		const r = await fixture.run(markPacked(), {
			...fromTrigger([sampleEvent(a), sampleEvent(b)]),
			between: { node: unpairingNode, name: 'Unpair' },
		});
		expect(r.error).toBeUndefined();
		expect(r.runData.Unpair[0].data!.main[0]!.map((i) => i.pairedItem)).toEqual([
			undefined,
			undefined,
			undefined,
		]);
		expect(r.sent.map((s) => s.body)).toEqual([{ orderIds: [a, b] }]);
		expect(await statusOf(a)).toBe('Packed');
	});
});

describe('the single writes after the Marketplace Trigger', () => {
	test('Sale Channel > Connect and the webhook endpoint writes hold back the sample and send nothing', async () => {
		const before = (await fixture.control.endpoints()).length;
		const runs: Array<[INodeParameters, IDataObject]> = [
			[
				{
					resource: 'saleChannel',
					operation: 'connect',
					brandId: '={{ $json.data.brandId }}',
					saleChannelName: 'Amazon',
				},
				{ brandId: 1 },
			],
			[
				{
					resource: 'webhookEndpoint',
					operation: 'create',
					url: 'https://example.com/hook',
					eventTypes: ['order.created'],
				},
				{},
			],
			...(['delete', 'test', 'rotateSecret'] as const).map(
				(operation): [INodeParameters, IDataObject] => [
					{ resource: 'webhookEndpoint', operation, endpointId: '={{ $json.data.orderId }}' },
					{ id: 4242 },
				],
			),
			[
				{
					resource: 'webhookEndpoint',
					operation: 'update',
					endpointId: '={{ $json.data.orderId }}',
					updateFields: { description: 'from a sample' },
				},
				{ id: 4242 },
			],
		];
		for (const [parameters, fields] of runs) {
			const r = await fixture.run(parameters, fromTrigger([sampleEvent(4242)]));
			expect({ op: parameters.operation, error: r.error, sent: r.sent }).toEqual({
				op: parameters.operation,
				error: undefined,
				sent: [],
			});
			expect(json(r.items)).toEqual([
				{ heldBack: true, heldBackReason: expect.stringMatching(/\bsample\b/), ...fields },
			]);
			expect(pairs(r.items)).toEqual([0]);
		}
		expect(await fixture.control.endpoints()).toHaveLength(before);
	});

	test('with Write Sample Items on, Connect sends its request', async () => {
		const r = await fixture.run(
			{
				resource: 'saleChannel',
				operation: 'connect',
				brandId: '={{ $json.data.brandId }}',
				saleChannelName: 'Amazon',
				options: { writeSampleItems: true },
			},
			fromTrigger([sampleEvent(4242)]),
		);
		expect(r.error).toBeUndefined();
		expect(r.sent.map((s) => [s.method, s.path])).toEqual([
			['POST', '/v1/brands/1/sale-channels/connect'],
		]);
		expect(r.items[0].json.heldBack).toBeUndefined();
	});
});

describe('Mark Orders Packed after the Marketplace Polling Trigger', () => {
	const fromPoller = (extra: RunOptions = {}): RunOptions => ({
		start: { node: new MarketplacePollingTrigger(), name: POLLER, parameters: {} },
		...extra,
	});
	const pollParams = (options: IDataObject = {}): INodeParameters => ({
		resource: 'fulfillment',
		operation: 'markPacked',
		orderIds: '={{ $json.id }}',
		options,
	});

	test('Fetch Test Event (manual): the newest order comes marked as a sample and is not packed', async () => {
		const orderId = await newOrder(5);
		const r = await fixture.run(pollParams(), fromPoller());
		expect(r.error).toBeUndefined();
		const polled = r.runData[POLLER][0].data!.main[0]![0].json;
		expect(polled).toMatchObject({ id: orderId, sample: true, sampleSource: 'newest-order' });
		// the trigger's read of the order list, and no write
		expect(r.sent.map((s) => [s.method, s.path])).toEqual([['GET', '/v1/orders']]);
		expect(json(r.items)).toEqual([
			{ heldBack: true, heldBackReason: expect.stringContaining(`"${POLLER}"`), orderId },
		]);
		expect(await statusOf(orderId)).toBe('Created');
	});

	test('with Write Sample Items on, the sample order is packed', async () => {
		const orderId = await newOrder(5);
		const r = await fixture.run(pollParams({ writeSampleItems: true }), fromPoller());
		expect(r.error).toBeUndefined();
		expect(r.sent.map((s) => [s.method, s.path])).toEqual([
			['GET', '/v1/orders'],
			['POST', '/v1/fulfillment/orders/packed'],
		]);
		expect(await statusOf(orderId)).toBe('Packed');
	});
});

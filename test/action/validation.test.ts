/**
 * Bad input never reaches the service: every item is checked before the first request; the error
 * is a NodeOperationError naming the field and the item. With continueOnFail, bad items become
 * error items paired with their input while the good items run — on every operation.
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { fixtureWithReceiver, errorOf, items, pairs } from './helpers';

const { fixture, receiver } = fixtureWithReceiver();

const cases: Array<[string, INodeParameters, string]> = [
	['non-integer order id', { resource: 'order', operation: 'get', orderId: 'abc' }, 'Order ID'],
	['fractional order id', { resource: 'order', operation: 'get', orderId: '10.5' }, 'Order ID'],
	[
		'empty order id (an expression that resolves to nothing)',
		{ resource: 'order', operation: 'get', orderId: '={{ $json.missing }}' },
		'Order ID',
	],
	[
		'non-integer brand id in a list',
		{ resource: 'product', operation: 'getAll', filters: { brandIds: '1,x' }, limit: 5 },
		'Filters > Brand Names or IDs',
	],
	['limit 0', { resource: 'product', operation: 'getAll', limit: 0 }, 'Limit'],
	['limit 101', { resource: 'inventoryForecast', operation: 'getAll', limit: 101 }, 'Limit'],
	['limit 2.5', { resource: 'return', operation: 'getAll', limit: 2.5 }, 'Limit'],
	[
		'invalid date',
		{ resource: 'order', operation: 'getAll', filters: { startDate: '2026-13-45' } },
		'Filters > Start Date',
	],
	[
		'unknown order status case',
		{ resource: 'order', operation: 'getAll', filters: { statuses: ['created'] } },
		'Filters > Statuses',
	],
	[
		'unknown purchase order status',
		{ resource: 'purchaseOrder', operation: 'export', filters: { statuses: ['Open'] } },
		'Filters > Statuses',
	],
	[
		'non-integer sale channel id',
		{
			resource: 'purchaseOrder',
			operation: 'getAll',
			filters: { saleChannelIds: 'amazon' },
			limit: 5,
		},
		'Filters > Sale Channel IDs',
	],
	[
		'brand health without brand',
		{ resource: 'brandHealth', operation: 'get', brandId: '={{ $json.missing }}' },
		'Brand',
	],
	[
		'connect with brand id 0',
		{ resource: 'saleChannel', operation: 'connect', brandId: '0', saleChannelName: 'Amazon' },
		'Brand',
	],
	[
		'connect without channel',
		{ resource: 'saleChannel', operation: 'connect', brandId: '1', saleChannelName: ' ' },
		'Sale Channel Name',
	],
	[
		'http URL of a public host',
		{
			resource: 'webhookEndpoint',
			operation: 'create',
			url: 'http://example.com/hook',
			eventTypes: ['order.created'],
		},
		'URL',
	],
	[
		'not a URL',
		{
			resource: 'webhookEndpoint',
			operation: 'create',
			url: 'example dot com',
			eventTypes: ['order.created'],
		},
		'URL',
	],
	[
		'no event types',
		{
			resource: 'webhookEndpoint',
			operation: 'create',
			url: 'https://example.com/h',
			eventTypes: '={{ [] }}',
		},
		'Event Types',
	],
	[
		'empty update',
		{ resource: 'webhookEndpoint', operation: 'update', endpointId: '1', updateFields: {} },
		'Update Fields',
	],
	[
		'update to a bad URL',
		{
			resource: 'webhookEndpoint',
			operation: 'update',
			endpointId: '1',
			updateFields: { url: 'ftp://example.com' },
		},
		'Update Fields > URL',
	],
	[
		'endpoint id not a number',
		{ resource: 'webhookEndpoint', operation: 'getDeliveries', endpointId: 'first' },
		'Webhook Endpoint',
	],
	[
		'empty order id list',
		{ resource: 'fulfillment', operation: 'markPacked', orderIds: '={{ [] }}' },
		'Order IDs',
	],
	[
		'non-integer in order id list',
		{ resource: 'fulfillment', operation: 'markPacked', orderIds: '1001, 1002x' },
		'Order IDs',
	],
	[
		'Max Attempts 0',
		{ resource: 'brand', operation: 'getAll', returnAll: true, requestOptions: { maxAttempts: 0 } },
		'Request Options > Max Attempts',
	],
];

describe('bad input: a NodeOperationError naming the field and the item, no request sent', () => {
	test.each(cases)('%s', async (_name, parameters, field) => {
		const r = await fixture.run(parameters, { inputItems: items({}, {}) });
		const error = errorOf(r);
		expect(r.sent).toEqual([]);
		expect(error.name).toBe('NodeOperationError');
		expect(error.message).toContain(`"${field}"`);
		expect(error.description).toMatch(/Nothing was sent/);
		expect(error.context).toMatchObject({ itemIndex: 0 });
	});

	test('only the second item is bad: nothing is sent for the first either; itemIndex 1', async () => {
		const r = await fixture.run(
			{ resource: 'order', operation: 'get', orderId: '={{ $json.id }}' },
			{ inputItems: items({ id: 1001 }, { id: 'x' }) },
		);
		expect(r.sent).toEqual([]);
		expect(errorOf(r).context).toMatchObject({ itemIndex: 1 });
		expect(errorOf(r).message).toContain('"Order ID"');
	});

	test('mark packed: the bad item is named, nothing is sent', async () => {
		const r = await fixture.run(
			{ resource: 'fulfillment', operation: 'markPacked', orderIds: '={{ $json.ids }}' },
			{ inputItems: items({ ids: [1001] }, { ids: [] }, { ids: [1002] }) },
		);
		expect(r.sent).toEqual([]);
		expect(errorOf(r)).toMatchObject({ name: 'NodeOperationError', context: { itemIndex: 1 } });
	});

	test('mark packed: a bad Batch Size is named too', async () => {
		const r = await fixture.run({
			resource: 'fulfillment',
			operation: 'markPacked',
			orderIds: '1001',
			options: { batchSize: 0 },
		});
		expect(r.sent).toEqual([]);
		const error = errorOf(r);
		expect(error.name).toBe('NodeOperationError');
		expect(error.message).toContain('"Options > Batch Size"');
	});
});

describe('continueOnFail and pairedItem on every operation', () => {
	let endpointIds: number[] = [];
	beforeAll(async () => {
		const created = [];
		for (let i = 0; i < 3; i++) {
			const r = await fixture.run({
				resource: 'webhookEndpoint',
				operation: 'create',
				url: receiver().url,
				eventTypes: ['order.created'],
				description: `cof-${i}`,
			});
			created.push(r.items[0].json.id as number);
		}
		endpointIds = created;
	});

	// [resource, operation, parameters with `={{ $json.v }}` where the value goes, bad value, good value, field]
	const table = (): Array<[string, string, INodeParameters, unknown, unknown, string]> => [
		[
			'product',
			'getAll',
			{ filters: { brandIds: '={{ $json.v }}' }, limit: 2 },
			'x',
			'1',
			'Filters > Brand Names or IDs',
		],
		[
			'order',
			'getAll',
			{ filters: { brandIds: '={{ $json.v }}', statuses: ['Created'] } },
			'1;2',
			'2',
			'Filters > Brand Names or IDs',
		],
		['order', 'get', { orderId: '={{ $json.v }}' }, 'abc', 1001, 'Order ID'],
		[
			'return',
			'getAll',
			{ filters: { brandIds: '={{ $json.v }}' }, limit: 2 },
			'-1',
			'1,2,3,4,5',
			'Filters > Brand Names or IDs',
		],
		[
			'purchaseOrder',
			'getAll',
			{ filters: { brandIds: '={{ $json.v }}' }, limit: 2 },
			'one',
			'1',
			'Filters > Brand Names or IDs',
		],
		[
			'purchaseOrder',
			'export',
			{ filters: { brandIds: '={{ $json.v }}' } },
			'1.5',
			'1',
			'Filters > Brand Names or IDs',
		],
		['brandHealth', 'get', { brandId: '={{ $json.v }}' }, '0', '2', 'Brand'],
		[
			'inventoryForecast',
			'getAll',
			{ filters: { brandIds: '={{ $json.v }}' }, limit: 2 },
			'x',
			'4',
			'Filters > Brand Names or IDs',
		],
		['brand', 'getAll', { returnAll: false, limit: '={{ $json.v }}' }, 0, 2, 'Limit'],
		[
			'saleChannel',
			'connect',
			{ brandId: '={{ $json.v }}', saleChannelName: 'Zalando' },
			'x',
			'5',
			'Brand',
		],
		[
			'webhookEndpoint',
			'create',
			{ url: '={{ $json.v }}', eventTypes: ['order.created'] },
			'http://example.com/h',
			() => receiver().url,
			'URL',
		],
		[
			'webhookEndpoint',
			'get',
			{ endpointId: '={{ $json.v }}' },
			'x',
			() => endpointIds[0],
			'Webhook Endpoint',
		],
		[
			'webhookEndpoint',
			'getAll',
			{ requestOptions: { maxAttempts: '={{ $json.v }}' } },
			11,
			2,
			'Request Options > Max Attempts',
		],
		[
			'webhookEndpoint',
			'update',
			{ endpointId: '={{ $json.v }}', updateFields: { description: 'changed' } },
			'x',
			() => endpointIds[0],
			'Webhook Endpoint',
		],
		[
			'webhookEndpoint',
			'test',
			{ endpointId: '={{ $json.v }}' },
			'x',
			() => endpointIds[0],
			'Webhook Endpoint',
		],
		[
			'webhookEndpoint',
			'rotateSecret',
			{ endpointId: '={{ $json.v }}' },
			'x',
			() => endpointIds[1],
			'Webhook Endpoint',
		],
		[
			'webhookEndpoint',
			'getDeliveries',
			{ endpointId: '={{ $json.v }}', limit: 5 },
			'x',
			() => endpointIds[0],
			'Webhook Endpoint',
		],
		[
			'webhookEndpoint',
			'delete',
			{ endpointId: '={{ $json.v }}' },
			'x',
			() => endpointIds[2],
			'Webhook Endpoint',
		],
	];

	test('every operation of the node is in the table', () => {
		const covered = new Set(table().map(([r, o]) => `${r}.${o}`));
		covered.add('fulfillment.markPacked'); // markPacked.test.ts
		const { operations } = jest.requireActual('../../nodes/Marketplace/actions/resources') as {
			operations: Record<string, Record<string, unknown>>;
		};
		const all = Object.entries(operations).flatMap(([r, ops]) =>
			Object.keys(ops).map((o) => `${r}.${o}`),
		);
		expect([...covered].sort()).toEqual(all.sort());
	});

	test.each(table().map((row) => `${row[0]}.${row[1]}`))('%s', async (name) => {
		const [resource, operation, parameters, bad, goodValue, field] = table().find(
			(t) => `${t[0]}.${t[1]}` === name,
		)!;
		const good = typeof goodValue === 'function' ? (goodValue as () => unknown)() : goodValue;
		const r = await fixture.run(
			{ resource, operation, ...parameters },
			{
				inputItems: items({ v: good as never }, { v: bad as never }, { v: good as never }),
				continueOnFail: true,
			},
		);
		expect(r.error).toBeUndefined();
		const byItem = (i: number) =>
			r.items.filter((o) => (o.pairedItem as { item: number }).item === i);
		expect(byItem(1)).toHaveLength(1);
		expect(byItem(1)[0].json.error).toEqual(expect.stringContaining(`"${field}"`));
		expect(byItem(0).length).toBeGreaterThan(0);
		expect(byItem(0).every((o) => o.json.error === undefined)).toBe(true);
		// item 2 runs too (delete of an already deleted endpoint fails with the service's 404)
		if (operation === 'delete') {
			expect(byItem(2)[0].json).toMatchObject({ details: { httpCode: '404' } });
		} else {
			expect(byItem(2).length).toBeGreaterThan(0);
			expect(byItem(2).every((o) => o.json.error === undefined)).toBe(true);
		}
		// output order follows input order
		expect(pairs(r.items)).toEqual([...pairs(r.items)].sort((a, b) => a - b));
		// no request carried the bad value
		expect(r.sent.length).toBeGreaterThan(0);
		expect(
			r.sent.every(
				(s) => !`${s.path}?${s.rawQuery} ${JSON.stringify(s.body ?? {})}`.includes(String(bad)),
			),
		).toBe(true);
	});

	test.each(table().map((row) => `${row[0]}.${row[1]}`))(
		'%s with "Continue (using error output)": the bad item on the error output',
		async (name) => {
			const [resource, operation, parameters, bad, goodValue, field] = table().find(
				(t) => `${t[0]}.${t[1]}` === name,
			)!;
			const good = typeof goodValue === 'function' ? (goodValue as () => unknown)() : goodValue;
			const r = await fixture.run(
				{ resource, operation, ...parameters },
				{
					inputItems: items({ v: good as never }, { v: bad as never }),
					onError: 'continueErrorOutput',
				},
			);
			expect(r.error).toBeUndefined();
			const badOnes = r.errorItems.filter((o) => (o.pairedItem as { item: number }).item === 1);
			expect(badOnes).toHaveLength(1);
			expect(badOnes[0].json).toMatchObject({
				v: bad,
				error: expect.stringContaining(`"${field}"`),
			});
			expect(
				r.items.every(
					(o) => o.json.error === undefined && (o.pairedItem as { item: number }).item === 0,
				),
			).toBe(true);
			// the good item ran; delete's endpoint was deleted by the test above, so it fails with the service's 404
			if (operation === 'delete')
				expect(
					r.errorItems.find((o) => (o.pairedItem as { item: number }).item === 0)?.json.details,
				).toMatchObject({ httpCode: '404' });
			else expect(r.items.length).toBeGreaterThan(0);
		},
	);
});

test('continueOnFail with a service error: the failed item is an error item with httpCode, the others run', async () => {
	const r = await fixture.run(
		{ resource: 'order', operation: 'get', orderId: '={{ $json.id }}' },
		{ inputItems: items({ id: 1001 }, { id: 999_999 }, { id: 1002 }), continueOnFail: true },
	);
	expect(r.error).toBeUndefined();
	expect(r.items.map((i) => i.json.id ?? (i.json.details as IDataObject).httpCode)).toEqual([
		1001,
		'404',
		1002,
	]);
	expect(r.items[1].json.error).toMatch(/^not-found \(404\)/);
	expect(pairs(r.items)).toEqual([0, 1, 2]);
	expect(r.sent.map((s) => s.status)).toEqual([200, 404, 200]);
	void ({} as IDataObject);
});

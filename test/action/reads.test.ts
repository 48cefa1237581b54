/**
 * Every read of the action node in n8n-core's engine against the sandbox: the exact request
 * (method, path, raw query in the operation's own encoding, headers) and the output items.
 */
import type { IDataObject } from 'n8n-workflow';

import { NodeFixture, expectRead, expectUniqueRequestIds, items, pairs } from './helpers';

const fixture = new NodeFixture();
beforeAll(async () => await fixture.start());
afterAll(async () => await fixture.close());

const ids = (out: { json: IDataObject }[]) => out.map((i) => i.json.id as number);

describe('product.getAll', () => {
	test('Limit: one page, comma-separated brandIds, one item per product paired with its input', async () => {
		const r = await fixture.run({
			resource: 'product',
			operation: 'getAll',
			filters: { brandIds: '1, 2' },
			limit: 3,
		});
		expect(r.error).toBeUndefined();
		expect(r.sent).toHaveLength(1);
		expectRead(r.sent[0], fixture.apiKey);
		expect(r.sent[0].path).toBe('/v1/products');
		expect(r.sent[0].rawQuery).toBe('brandIds=1,2&page=1&limit=3');
		expect(r.items).toHaveLength(3);
		for (const item of r.items) {
			expect([1, 2]).toContain(item.json.brandId);
			expect(item.json).toEqual(
				expect.objectContaining({
					id: expect.any(Number),
					sku: expect.any(String),
					name: expect.any(String),
				}),
			);
		}
		expect(pairs(r.items)).toEqual([0, 0, 0]);
	});

	test('empty Brand IDs is not sent at all', async () => {
		const r = await fixture.run({
			resource: 'product',
			operation: 'getAll',
			filters: { brandIds: '' },
			limit: 2,
		});
		expect(r.sent.map((s) => s.rawQuery)).toEqual(['page=1&limit=2']);
		expect(r.items).toHaveLength(2);
	});

	test('Return All over 320 products: ceil(320/100) = 4 requests with the same filters, every product once', async () => {
		const all = await fixture.control.state<{ id: number; brandId: number }>('products');
		const inScope = all.filter((p) => p.brandId <= 5);
		expect(inScope.length).toBeGreaterThanOrEqual(250);
		const r = await fixture.run({
			resource: 'product',
			operation: 'getAll',
			returnAll: true,
			filters: { brandIds: '1,2,3,4,5' },
		});
		expect(r.error).toBeUndefined();
		const pages = Math.ceil(inScope.length / 100);
		expect(r.sent).toHaveLength(pages);
		expect(r.sent.map((s) => s.rawQuery)).toEqual(
			Array.from({ length: pages }, (_, i) => `brandIds=1,2,3,4,5&page=${i + 1}&limit=100`),
		);
		expectUniqueRequestIds(r.sent);
		expect(ids(r.items).sort((a, b) => a - b)).toEqual(
			inScope.map((p) => p.id).sort((a, b) => a - b),
		);
		expect(new Set(pairs(r.items))).toEqual(new Set([0]));
	});

	test('two input items: each reads its own brand, outputs paired with their item', async () => {
		const r = await fixture.run(
			{
				resource: 'product',
				operation: 'getAll',
				filters: { brandIds: '={{ $json.brand }}' },
				limit: 2,
			},
			{ inputItems: items({ brand: 3 }, { brand: 4 }) },
		);
		expect(r.sent.map((s) => s.rawQuery)).toEqual([
			'brandIds=3&page=1&limit=2',
			'brandIds=4&page=1&limit=2',
		]);
		expectUniqueRequestIds(r.sent);
		expect(r.items.map((i) => i.json.brandId)).toEqual([3, 3, 4, 4]);
		expect(pairs(r.items)).toEqual([0, 0, 1, 1]);
	});
});

describe('order.getAll / order.get', () => {
	test('comma-separated statuses and brandIds, fulfillmentModel, startDate as UTC; the whole list', async () => {
		const startDate =
			new Date(Date.now() - 10 * 24 * 3_600_000).toISOString().slice(0, 10) + 'T00:00:00Z';
		const r = await fixture.run({
			resource: 'order',
			operation: 'getAll',
			filters: {
				statuses: ['Created', 'Packed'],
				brandIds: '1,3',
				fulfillmentModel: 'Merchant',
				startDate,
			},
		});
		expect(r.error).toBeUndefined();
		expect(r.sent).toHaveLength(1);
		expectRead(r.sent[0], fixture.apiKey);
		expect(r.sent[0].path).toBe('/v1/orders');
		expect(r.sent[0].rawQuery).toBe(
			`statuses=Created,Packed&fulfillmentModel=Merchant&brandIds=1,3&startDate=${encodeURIComponent(startDate)}`,
		);
		const expected = (await fixture.control.state<IDataObject>('orders')).filter(
			(o) =>
				['Created', 'Packed'].includes(o.status as string) &&
				[1, 3].includes(o.brandId as number) &&
				o.fulfillmentModel === 'Merchant' &&
				Date.parse(o.createdAt as string) >= Date.parse(startDate),
		);
		expect(expected.length).toBeGreaterThan(0);
		expect(ids(r.items)).toEqual(expected.map((o) => o.id));
		expect(new Set(pairs(r.items))).toEqual(new Set([0]));
	});

	test('a date-time with an offset is sent as UTC', async () => {
		const r = await fixture.run({
			resource: 'order',
			operation: 'getAll',
			filters: { startDate: '2026-01-02T01:30:00+02:00' },
		});
		expect(r.error).toBeUndefined();
		expect(r.sent[0].rawQuery).toBe('startDate=2026-01-01T23%3A30%3A00Z');
	});

	test('no filters: no query string at all', async () => {
		const r = await fixture.run({
			resource: 'order',
			operation: 'getAll',
			filters: { statuses: [], brandIds: '', fulfillmentModel: '' },
		});
		expect(r.sent.map((s) => s.rawQuery)).toEqual(['']);
		const inScope = (await fixture.control.state<IDataObject>('orders')).filter(
			(o) => (o.brandId as number) <= 5,
		);
		expect(r.items).toHaveLength(inScope.length);
	});

	test('Limit 2: the whole list in one request, the first 2 orders output; Return All: every order, one request', async () => {
		const brandIds = [1, 3];
		const expected = (await fixture.control.state<IDataObject>('orders')).filter((o) =>
			brandIds.includes(o.brandId as number),
		);
		expect(expected.length).toBeGreaterThan(2);

		const limited = await fixture.run({
			resource: 'order',
			operation: 'getAll',
			returnAll: false,
			limit: 2,
			filters: { brandIds },
		});
		expect(limited.error).toBeUndefined();
		expect(limited.sent.map((s) => [s.path, s.rawQuery])).toEqual([['/v1/orders', 'brandIds=1,3']]);
		expect(ids(limited.items)).toEqual(expected.slice(0, 2).map((o) => o.id));
		expect(pairs(limited.items)).toEqual([0, 0]);

		const all = await fixture.run({
			resource: 'order',
			operation: 'getAll',
			returnAll: true,
			limit: 2,
			filters: { brandIds },
		});
		expect(all.sent.map((s) => [s.path, s.rawQuery])).toEqual([['/v1/orders', 'brandIds=1,3']]);
		expect(ids(all.items)).toEqual(expected.map((o) => o.id));
	});

	test('a saved workflow without Return All / Limit still outputs every order (Return All defaults to on)', async () => {
		const expected = (await fixture.control.state<IDataObject>('orders')).filter(
			(o) => (o.brandId as number) <= 5,
		);
		expect(expected.length).toBeGreaterThan(50);
		const r = await fixture.run({ resource: 'order', operation: 'getAll' });
		expect(r.sent.map((s) => s.rawQuery)).toEqual(['']);
		expect(ids(r.items)).toEqual(expected.map((o) => o.id));
	});

	test('get: one item per input item, path /v1/orders/{id}', async () => {
		const r = await fixture.run(
			{ resource: 'order', operation: 'get', orderId: '={{ $json.orderId }}' },
			{ inputItems: items({ orderId: 1001 }, { orderId: '1002' }) },
		);
		expect(r.error).toBeUndefined();
		expect(r.sent.map((s) => [s.path, s.rawQuery])).toEqual([
			['/v1/orders/1001', ''],
			['/v1/orders/1002', ''],
		]);
		r.sent.forEach((s) => expectRead(s, fixture.apiKey));
		expectUniqueRequestIds(r.sent);
		expect(ids(r.items)).toEqual([1001, 1002]);
		expect(r.items[0].json).toEqual(await fixture.control.state('orders', 1001));
		expect(pairs(r.items)).toEqual([0, 1]);
	});
});

describe('return.getAll', () => {
	test('comma-separated brandIds and statuses, page/limit', async () => {
		const r = await fixture.run({
			resource: 'return',
			operation: 'getAll',
			filters: { brandIds: '1,2,3,4,5', statuses: 'Requested, Received,Refunded' },
			limit: 5,
		});
		expect(r.error).toBeUndefined();
		expectRead(r.sent[0], fixture.apiKey);
		expect(r.sent.map((s) => [s.path, s.rawQuery])).toEqual([
			['/v1/returns', 'brandIds=1,2,3,4,5&statuses=Requested,Received,Refunded&page=1&limit=5'],
		]);
		const expected = (await fixture.control.state<IDataObject>('returns'))
			.filter((x) => (x.brandId as number) <= 5)
			.slice(0, 5);
		expect(ids(r.items)).toEqual(expected.map((x) => x.id));
		expect(pairs(r.items)).toEqual(expected.map(() => 0));
	});

	test('Return All, empty filters not sent', async () => {
		const r = await fixture.run({
			resource: 'return',
			operation: 'getAll',
			returnAll: true,
			filters: { brandIds: '', statuses: '' },
		});
		expect(r.sent.map((s) => s.rawQuery)).toEqual(['page=1&limit=100']);
		const expected = (await fixture.control.state<IDataObject>('returns')).filter(
			(x) => (x.brandId as number) <= 5,
		);
		expect(r.items).toHaveLength(expected.length);
	});
});

describe('purchaseOrder.getAll / export', () => {
	const filters = { brandIds: '1,2', saleChannelIds: '1, 2', statuses: ['Confirmed', 'Closed'] };
	const matching = async () =>
		(await fixture.control.state<IDataObject>('purchaseOrders')).filter(
			(po) => [1, 2].includes(po.brandId as number) && [1, 2].includes(po.saleChannelId as number),
		);

	test('getAll: repeated keys for brandIds, saleChannelIds and statuses', async () => {
		const r = await fixture.run({
			resource: 'purchaseOrder',
			operation: 'getAll',
			filters,
			returnAll: true,
		});
		expect(r.error).toBeUndefined();
		expectRead(r.sent[0], fixture.apiKey);
		expect(r.sent.map((s) => [s.path, s.rawQuery])).toEqual([
			[
				'/v1/vendor/purchase-orders',
				'brandIds=1&brandIds=2&saleChannelIds=1&saleChannelIds=2&statuses=Confirmed&statuses=Closed&page=1&limit=100',
			],
		]);
		const expected = await matching();
		expect(expected.length).toBeGreaterThan(0);
		expect(ids(r.items)).toEqual(expected.map((po) => po.id));
	});

	test('getAll with Limit and only a status', async () => {
		const r = await fixture.run({
			resource: 'purchaseOrder',
			operation: 'getAll',
			filters: { statuses: ['Closed'] },
			limit: 4,
		});
		expect(r.sent.map((s) => s.rawQuery)).toEqual(['statuses=Closed&page=1&limit=4']);
		expect(r.items).toHaveLength(4);
		expect(r.items.every((i) => i.json.status === 'Closed')).toBe(true);
	});

	test('export: the same filters comma-separated, the whole set in one request', async () => {
		const r = await fixture.run({ resource: 'purchaseOrder', operation: 'export', filters });
		expect(r.error).toBeUndefined();
		expectRead(r.sent[0], fixture.apiKey);
		expect(r.sent.map((s) => [s.path, s.rawQuery])).toEqual([
			[
				'/v1/vendor/purchase-orders/export',
				'brandIds=1,2&saleChannelIds=1,2&statuses=Confirmed,Closed',
			],
		]);
		expect(ids(r.items)).toEqual((await matching()).map((po) => po.id));
		expect(new Set(pairs(r.items))).toEqual(new Set([0]));
	});

	test('export with empty filters sends no query', async () => {
		const r = await fixture.run({
			resource: 'purchaseOrder',
			operation: 'export',
			filters: { brandIds: '', saleChannelIds: '', statuses: [] },
		});
		expect(r.sent.map((s) => s.rawQuery)).toEqual(['']);
	});
});

describe('brandHealth.get', () => {
	test('brandId and repeated categories keys; a name with a comma stays one value', async () => {
		const r = await fixture.run({
			resource: 'brandHealth',
			operation: 'get',
			brandId: '2',
			filters: { categories: ['Home, Garden', 'Apparel'] },
		});
		expect(r.error).toBeUndefined();
		expectRead(r.sent[0], fixture.apiKey);
		expect(r.sent.map((s) => [s.path, s.rawQuery])).toEqual([
			['/v1/brand-health', 'brandId=2&categories=Home%2C%20Garden&categories=Apparel'],
		]);
		expect(r.items).toHaveLength(1);
		expect(r.items[0].json.brandId).toBe(2);
		const health = await fixture.control.state<IDataObject>('brandHealth', 2);
		const wanted = (health.categories as string[]).filter((c) =>
			['Home, Garden', 'Apparel'].includes(c),
		);
		expect(wanted).toContain('Home, Garden');
		expect(r.items[0].json.categories).toEqual(wanted);
		expect(
			(r.items[0].json.dimensions as IDataObject[]).every((d) =>
				wanted.includes(d.category as string),
			),
		).toBe(true);
		expect(r.items[0].pairedItem).toEqual({ item: 0 });
	});

	test('no categories: only brandId', async () => {
		const r = await fixture.run({
			resource: 'brandHealth',
			operation: 'get',
			brandId: 3,
			filters: { categories: [] },
		});
		expect(r.sent.map((s) => s.rawQuery)).toEqual(['brandId=3']);
		expect(r.items[0].json.brandId).toBe(3);
	});
});

describe('inventoryForecast.getAll', () => {
	test('comma-separated brandIds, page/limit; Return All walks the pages', async () => {
		const r = await fixture.run({
			resource: 'inventoryForecast',
			operation: 'getAll',
			filters: { brandIds: '4,5' },
			limit: 7,
		});
		expect(r.error).toBeUndefined();
		expectRead(r.sent[0], fixture.apiKey);
		expect(r.sent.map((s) => [s.path, s.rawQuery])).toEqual([
			['/v1/inventory-forecasts', 'brandIds=4,5&page=1&limit=7'],
		]);
		expect(r.items).toHaveLength(7);
		expect(r.items.every((i) => [4, 5].includes(i.json.brandId as number))).toBe(true);

		const all = await fixture.run({
			resource: 'inventoryForecast',
			operation: 'getAll',
			returnAll: true,
			filters: {},
		});
		const expected = (await fixture.control.state<IDataObject>('forecasts')).filter(
			(f) => (f.brandId as number) <= 5,
		);
		expect(all.sent.map((s) => s.rawQuery)).toEqual(
			Array.from({ length: Math.ceil(expected.length / 100) }, (_, i) => `page=${i + 1}&limit=100`),
		);
		expect(ids(all.items)).toEqual(expected.map((f) => f.id));
	});
});

describe('brand.getAll', () => {
	test('Return All: no page or limit, the whole accessible set', async () => {
		const r = await fixture.run({ resource: 'brand', operation: 'getAll', returnAll: true });
		expect(r.error).toBeUndefined();
		expectRead(r.sent[0], fixture.apiKey);
		expect(r.sent.map((s) => [s.path, s.rawQuery])).toEqual([['/v1/brands', '']]);
		expect(ids(r.items)).toEqual([1, 2, 3, 4, 5]);
		expect(pairs(r.items)).toEqual([0, 0, 0, 0, 0]);
	});

	test('Limit 2: page=1&limit=2', async () => {
		const r = await fixture.run({
			resource: 'brand',
			operation: 'getAll',
			returnAll: false,
			limit: 2,
		});
		expect(r.sent.map((s) => s.rawQuery)).toEqual(['page=1&limit=2']);
		expect(ids(r.items)).toEqual([1, 2]);
	});
});

describe('Brand Names or IDs filter: picked, old comma text and expressions send the same query', () => {
	// [operation, the other parameters, the query every form of brands 2 and 4 must send]
	const cases: Array<[string, IDataObject, string]> = [
		['product.getAll', { limit: 2 }, 'brandIds=2,4&page=1&limit=2'],
		['order.getAll', { returnAll: false, limit: 2 }, 'brandIds=2,4'],
		['return.getAll', { limit: 2 }, 'brandIds=2,4&page=1&limit=2'],
		['purchaseOrder.getAll', { limit: 2 }, 'brandIds=2&brandIds=4&page=1&limit=2'],
		['purchaseOrder.export', {}, 'brandIds=2,4'],
		['inventoryForecast.getAll', { limit: 2 }, 'brandIds=2,4&page=1&limit=2'],
	];
	const forms: Array<[string, unknown]> = [
		['picked from the list', [2, 4]],
		['picked (IDs as text)', ['2', '4']],
		['a saved comma text', ' 2, 4'],
		["an expression's list", '={{ [2, 4] }}'],
		["an expression's text", '={{ "2,4" }}'],
	];

	const table = cases.flatMap(([operation, others, query]) =>
		forms.map(([form, brandIds]) => [operation, form, others, brandIds, query] as const),
	);

	test.each(table)('%s, brands 2 and 4 %s', async (operation, _form, others, brandIds, query) => {
		const [resource, op] = operation.split('.');
		const r = await fixture.run({
			resource,
			operation: op,
			...others,
			filters: { brandIds } as IDataObject,
		});
		expect(r.error).toBeUndefined();
		expect(r.sent.map((s) => s.rawQuery)).toEqual([query]);
		expect(r.items.length).toBeGreaterThan(0);
		expect(r.items.every((i) => [2, 4].includes(i.json.brandId as number))).toBe(true);
	});
});

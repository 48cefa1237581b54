/**
 * fulfillment.markPacked, the batch write: ids from many items in as few requests as the batch size
 * allows, every per-order result paired with its input item, resend of only the failed ids.
 */
import type { IDataObject } from 'n8n-workflow';

import { NodeFixture, errorOf, expectUniqueRequestIds, expectWrite, items, pairs } from './helpers';

const fixture = new NodeFixture();
beforeAll(async () => await fixture.start());
afterAll(async () => await fixture.close());

async function newOrders(
	count: number,
	brandId = 1,
	status: 'Created' | 'Packed' = 'Created',
): Promise<number[]> {
	const { firstId, lastId } = await fixture.control.generateOrders({ count, brandId, status });
	return Array.from({ length: lastId - firstId + 1 }, (_, i) => firstId + i);
}
const statusOf = async (id: number) =>
	(await fixture.control.state<IDataObject>('orders', id)).status;

test('mixed results over several items, batch size 2: ceil(n/2) requests, each result paired with its item', async () => {
	const created = await newOrders(3);
	const [packed] = await newOrders(1, 2, 'Packed');
	const [outOfScope] = await newOrders(1, 6);
	const unknown = 999_999;
	const input = items(
		{ ids: [created[0], created[1]] },
		{ ids: `${packed}, ${unknown}` },
		{ ids: created[2] },
		{ ids: [outOfScope] },
	);
	const r = await fixture.run(
		{
			resource: 'fulfillment',
			operation: 'markPacked',
			orderIds: '={{ $json.ids }}',
			options: { batchSize: 2 },
		},
		{ inputItems: input },
	);
	expect(r.error).toBeUndefined();
	const all = [created[0], created[1], packed, unknown, created[2], outOfScope];
	expect(r.sent).toHaveLength(Math.ceil(all.length / 2));
	r.sent.forEach((s) => {
		expectWrite(s, fixture.apiKey, 'POST');
		expect(s).toMatchObject({ path: '/v1/fulfillment/orders/packed', rawQuery: '' });
	});
	expect(r.sent.map((s) => s.body)).toEqual([
		{ orderIds: [created[0], created[1]] },
		{ orderIds: [packed, unknown] },
		{ orderIds: [created[2], outOfScope] },
	]);
	expect(new Set(r.sent.map((s) => s.idempotencyKey)).size).toBe(3);
	expectUniqueRequestIds(r.sent);

	expect(r.items.map((i) => [i.json.orderId, i.json.success])).toEqual([
		[created[0], true],
		[created[1], true],
		[packed, false],
		[unknown, false],
		[created[2], true],
		[outOfScope, false],
	]);
	expect(pairs(r.items)).toEqual([0, 0, 1, 1, 2, 3]);
	expect(r.items[0].json).toMatchObject({
		status: 'Packed',
		attempts: 1,
		requestId: expect.any(String),
	});
	expect((r.items[2].json.error as IDataObject).type).toMatch(/\/conflict$/);
	expect((r.items[3].json.error as IDataObject).type).toMatch(/\/not-found$/);
	expect((r.items[5].json.error as IDataObject).type).toMatch(/\/not-found$/);
	for (const id of created) expect(await statusOf(id)).toBe('Packed');
	expect(await statusOf(outOfScope)).toBe('Created');
});

test('the default batch packs 150 ids from 150 items in ceil(150/100) = 2 requests', async () => {
	const ids = await newOrders(150, 3);
	const r = await fixture.run(
		{ resource: 'fulfillment', operation: 'markPacked', orderIds: '={{ $json.id }}' },
		{ inputItems: ids.map((id) => ({ json: { id } })) },
	);
	expect(r.error).toBeUndefined();
	expect(r.sent.map((s) => (s.body as { orderIds: number[] }).orderIds.length)).toEqual([100, 50]);
	expect(r.items).toHaveLength(150);
	expect(pairs(r.items)).toEqual(ids.map((_, i) => i));
	expect(r.items.every((i) => i.json.success === true)).toBe(true);
	const stored = await fixture.control.state<IDataObject>('orders');
	expect(stored.filter((o) => ids.includes(o.id as number) && o.status === 'Packed')).toHaveLength(
		150,
	);
});

test('Fail on Any Failed Order: the node fails naming the failed orders; the others are packed', async () => {
	const [ok] = await newOrders(1);
	const r = await fixture.run({
		resource: 'fulfillment',
		operation: 'markPacked',
		orderIds: `${ok},999998`,
		options: { failOnItemError: true },
	});
	const error = errorOf(r);
	expect(error.message).toMatch(/1 order could not be marked packed: 999998/);
	expect(r.sent).toHaveLength(1);
	expect(await statusOf(ok)).toBe('Packed');
});

test('Resend Failed Orders: only the failed ids go again, each round under a new key', async () => {
	const [a, b] = await newOrders(2);
	const [packed] = await newOrders(1, 1, 'Packed');
	const r = await fixture.run(
		{
			resource: 'fulfillment',
			operation: 'markPacked',
			orderIds: '={{ $json.ids }}',
			options: { resendRounds: 2 },
		},
		{ inputItems: items({ ids: [a, packed] }, { ids: [b, 999_997] }) },
	);
	expect(r.error).toBeUndefined();
	expect(r.sent.map((s) => (s.body as { orderIds: number[] }).orderIds)).toEqual([
		[a, packed, b, 999_997],
		[packed, 999_997],
		[packed, 999_997],
	]);
	expect(new Set(r.sent.map((s) => s.idempotencyKey)).size).toBe(3);
	expect(r.sent.every((s) => s.replayed === false)).toBe(true);
	expect(r.items.map((i) => [i.json.orderId, i.json.success, i.json.attempts])).toEqual([
		[a, true, 1],
		[packed, false, 3],
		[b, true, 1],
		[999_997, false, 3],
	]);
	expect(pairs(r.items)).toEqual([0, 0, 1, 1]);
});

test('a user key: batch N is sent as <key>-N, resends as <key>-N-resendR; a re-run replays', async () => {
	const ids = await newOrders(3);
	const parameters = {
		resource: 'fulfillment',
		operation: 'markPacked',
		orderIds: `${ids.join(',')},999996`,
		options: { batchSize: 2, resendRounds: 1, idempotencyKey: 'evening-run' },
	};
	const r = await fixture.run(parameters);
	expect(r.sent.map((s) => s.idempotencyKey)).toEqual([
		'evening-run-1',
		'evening-run-2',
		'evening-run-3-resend1',
	]);
	const again = await fixture.run(parameters);
	expect(again.sent.map((s) => [s.idempotencyKey, s.replayed])).toEqual([
		['evening-run-1', true],
		['evening-run-2', true],
		['evening-run-3-resend1', true],
	]);
	expect(again.items.map((i) => i.json.success)).toEqual([true, true, true, false]);
});

test('continueOnFail: a bad item becomes an error item paired with it, the good items are packed', async () => {
	const [a, b] = await newOrders(2);
	const r = await fixture.run(
		{ resource: 'fulfillment', operation: 'markPacked', orderIds: '={{ $json.ids }}' },
		{ inputItems: items({ ids: a }, { ids: 'abc' }, { ids: b }), continueOnFail: true },
	);
	expect(r.error).toBeUndefined();
	expect(r.sent.map((s) => s.body)).toEqual([{ orderIds: [a, b] }]);
	expect(r.items.map((i) => [i.json.orderId ?? null, i.json.success ?? null])).toEqual([
		[a, true],
		[null, null],
		[b, true],
	]);
	expect(r.items[1].json.error).toMatch(/Order IDs/);
	expect(pairs(r.items)).toEqual([0, 1, 2]);
});

test('"Continue (using error output)": a bad item and a failed batch go to the error output; packed orders to the main output', async () => {
	const ids = await newOrders(4);
	await fixture.control.injectFault({ route: 'markOrdersPacked', mode: '500', count: 1 });
	const r = await fixture.run(
		{
			resource: 'fulfillment',
			operation: 'markPacked',
			orderIds: '={{ $json.id }}',
			options: { batchSize: 2 },
			requestOptions: { maxAttempts: 1 },
		},
		{
			inputItems: [...ids.map((id) => ({ json: { id } })), { json: { id: 'abc' } }],
			onError: 'continueErrorOutput',
		},
	);
	expect(r.error).toBeUndefined();
	expect(r.items.map((i) => [i.json.orderId, i.json.success])).toEqual([
		[ids[2], true],
		[ids[3], true],
	]);
	expect(pairs(r.items)).toEqual([2, 3]);
	expect(
		r.errorItems.map((i) => [(i.json.details as IDataObject)?.orderId ?? null, i.json.id]),
	).toEqual([
		[ids[0], ids[0]],
		[ids[1], ids[1]],
		[null, 'abc'],
	]);
	expect(r.errorItems[0].json.error).toMatch(/internal \(500\)/);
	expect(r.errorItems[2].json.error).toMatch(/Order IDs/);
	expect(pairs(r.errorItems)).toEqual([0, 1, 4]);
});

test('continueOnFail: a batch whose request fails gives error items for its orders only', async () => {
	const ids = await newOrders(4);
	await fixture.control.injectFault({ route: 'markOrdersPacked', mode: '500', count: 1 });
	const r = await fixture.run(
		{
			resource: 'fulfillment',
			operation: 'markPacked',
			orderIds: '={{ $json.id }}',
			options: { batchSize: 2 },
			requestOptions: { maxAttempts: 1 },
		},
		{ inputItems: ids.map((id) => ({ json: { id } })), continueOnFail: true },
	);
	expect(r.error).toBeUndefined();
	expect(r.sent.map((s) => s.status)).toEqual([500, 200]);
	expect(
		r.items.map((i) => [
			i.json.orderId ?? (i.json.details as IDataObject).orderId,
			i.json.success ?? 'error',
		]),
	).toEqual([
		[ids[0], 'error'],
		[ids[1], 'error'],
		[ids[2], true],
		[ids[3], true],
	]);
	expect(r.items[0].json.error).toMatch(/internal \(500\)/);
	expect(pairs(r.items)).toEqual([0, 1, 2, 3]);
	expect(await statusOf(ids[0])).toBe('Created');
	expect(await statusOf(ids[2])).toBe('Packed');
});

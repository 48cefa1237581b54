/**
 * "Catch Up Missed Orders": the service disables an endpoint after 5 days without a successful
 * delivery and never resends what it could not deliver. With the option on, the first delivery
 * after the endpoint works again also brings the orders created meanwhile, each once, shaped like
 * an order.created event item. The sandbox's clock moves the days; the trigger in n8n-core's
 * engine receives over real HTTP.
 */
import type { IDataObject } from 'n8n-workflow';

import {
	deliverWithSecret,
	TriggerBench,
	outageOf,
	settledRuns,
	type TriggerHarness,
	restart,
} from './helpers';

const bench = new TriggerBench();
beforeAll(async () => await bench.start());
afterAll(async () => await bench.close());
afterEach(async () => await bench.closeHarnesses());

/** An outage of a trigger with Catch Up Missed Orders on. */
const outage = async () => await outageOf(bench, { options: { catchUpMissedOrders: true } });

const itemsOf = (t: TriggerHarness, run: number) => t.runs[run][0].map((i) => i.json);

test('re-enabled by activation: the first event brings the missed orders, each once, shaped like order.created items and marked; never again', async () => {
	const { t, brandId, before, missed } = await outage();
	expect(await t.checkExists()).toBe(true);
	const live = await bench.control.createOrder({ brandId });
	await t.waitForRuns(2);
	const items = itemsOf(t, 1);
	expect(items.map((i) => (i.data as IDataObject).orderId)).toEqual([...missed, live.order.id]);
	for (const [i, orderId] of missed.entries()) {
		expect(items[i]).toMatchObject({
			id: `caught_up_order.created_${orderId}`,
			type: 'order.created',
			data: { brandId, orderId },
			caughtUp: true,
		});
		expect(typeof items[i].createdAt).toBe('string');
	}
	expect(items.at(-1)).toMatchObject({ id: live.event.id, type: 'order.created' });
	expect(items.at(-1)!.caughtUp).toBeUndefined();
	expect(items.every((i) => (i.notice as IDataObject)?.caughtUpOrders === 3)).toBe(true);
	expect(items.some((i) => (i.data as IDataObject).orderId === before)).toBe(false);

	// a restart and a re-activation catch up nothing again; the live event's redelivery is a duplicate
	restart(t);
	expect(await t.checkExists()).toBe(true);
	const delivery = (await bench.control.deliveries()).find((d) => d.eventId === live.event.id)!;
	expect((await bench.control.redeliver(delivery.id)).responseStatusCode).toBe(200);
	const next = await bench.control.createOrder({ brandId });
	await t.waitForRuns(3);
	expect(await settledRuns(t)).toBe(3);
	expect(itemsOf(t, 2)).toEqual([expect.objectContaining({ id: next.event.id })]);
	expect(itemsOf(t, 2)[0].notice).toBeUndefined();
});

test("turned off and on over the Disabled endpoint: the new endpoint's first event brings the missed orders", async () => {
	const { t, userId, brandId, endpoint, missed } = await outage();
	await t.delete('update');
	await t.activate();
	const [fresh] = await bench.endpointsOf(userId);
	expect(fresh.id).not.toBe(endpoint.id);
	const live = await bench.control.createOrder({ brandId });
	await t.waitForRuns(2);
	expect(itemsOf(t, 1).map((i) => [(i.data as IDataObject).orderId, i.caughtUp ?? false])).toEqual([
		...missed.map((id) => [id, true]),
		[live.order.id, false],
	]);
});

test('two events at once after the re-enable: one run brings the missed orders (the claim), the other only its event', async () => {
	const { t, brandId, missed } = await outage();
	expect(await t.checkExists()).toBe(true);
	await Promise.all([1, 2].map(async () => await bench.control.createOrder({ brandId })));
	await t.waitForRuns(3);
	expect(await settledRuns(t)).toBe(3);
	const caught = t.runs
		.slice(1)
		.flatMap((run) => run[0].map((i) => i.json))
		.filter((i) => i.caughtUp === true);
	expect(caught.map((i) => (i.data as IDataObject).orderId)).toEqual(missed);
});

test('a late real order.created event of a caught-up order starts nothing; with Fetch Current State each caught-up item carries the order', async () => {
	const { t, brandId, missed } = await outage();
	t.node.parameters.options = { catchUpMissedOrders: true, fetchCurrentState: true };
	expect(await t.checkExists()).toBe(true);
	await bench.control.createOrder({ brandId });
	await t.waitForRuns(2);
	const first = itemsOf(t, 1)[0];
	expect(first.current).toMatchObject({ id: missed[0], brandId });
	const late = {
		id: 'evt_late_real_event',
		type: 'order.created',
		createdAt: new Date().toISOString(),
		data: { brandId, orderId: missed[0] },
	};
	expect((await deliverWithSecret(t, late)).body).toMatchObject({
		ignored: 'order-caught-up',
		orderId: missed[0],
	});
	expect(await settledRuns(t)).toBe(2);
});

test('with the option off the first event carries only the notice', async () => {
	const { t, brandId } = await outage();
	t.node.parameters.options = { catchUpMissedOrders: false };
	expect(await t.checkExists()).toBe(true);
	await bench.control.createOrder({ brandId });
	await t.waitForRuns(2);
	expect(itemsOf(t, 1)).toHaveLength(1);
	expect(itemsOf(t, 1)[0].notice).toMatchObject({ disabledReason: 'FailingDeliveries' });
	expect((itemsOf(t, 1)[0].notice as IDataObject).caughtUpOrders).toBeUndefined();
});

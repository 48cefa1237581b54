/**
 * What a catch-up brings ("Catch Up Missed Orders", catchUp.ts), run by trigger()'s check: the
 * orders whose deliveries never came, each once, shaped like an order.created item and marked; after
 * an endpoint the service disabled (it never resends what it could not deliver), an outage longer
 * than the service's retries, a time unpublished; a backlog; an order whose own delivery comes while
 * it is caught up, in this process or another. Deliveries never catch up. The trigger in n8n-core's
 * engine, the sandbox over real HTTP, one clock for both (helpers.ts `SharedClock`).
 */
import type { IDataObject } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { MAX_CAUGHT_UP_PER_RUN } from '../../nodes/MarketplaceTrigger/catchUp';
import {
	caughtUp,
	deliverWithSecret,
	idsStored,
	outageOf,
	restart,
	settle,
	settledRuns,
	SharedClock,
	startAgain,
	TriggerBench,
	type TriggerHarness,
} from './helpers';

const bench = new TriggerBench();
const shared = new SharedClock(bench);
beforeAll(async () => await bench.start());
afterAll(async () => await bench.close());
beforeEach(() => shared.install());
afterEach(async () => {
	await bench.closeHarnesses();
	shared.uninstall();
});

const UNREACHABLE = 'http://127.0.0.1:1/unreachable';
const HOUR_MS = 3_600_000;

const itemsOf = (t: TriggerHarness, run: number) => t.runs[run][0].map((i) => i.json);
const orderIdsOf = (t: TriggerHarness) =>
	t.runs.flatMap((run) => run[0].map((i) => (i.json.data as IDataObject).orderId as number));

/** An outage over which the service disabled the endpoint, with Catch Up Missed Orders on. */
const outage = async (options: IDataObject = {}) =>
	await outageOf(bench, shared, { options: { catchUpMissedOrders: true, ...options } });

/** A published trigger that ran one order and made its first check (nothing missed then). */
async function activeTrigger(parameters: IDataObject = {}) {
	const user = await bench.user();
	const t = await bench.trigger(user.apiKey, parameters, { settings: shared.settings });
	await t.activate();
	await t.startTrigger();
	const [endpoint] = await bench.endpointsOf(user.userId);
	await bench.control.createOrder({ brandId: user.brandId });
	await t.waitForRuns(1);
	await shared.advance(25_000);
	await settle(t);
	return { ...user, t, endpoint };
}

/** n8n stops: this process's memory and trigger() are gone, and the service's attempts fail. */
async function stopN8n(t: TriggerHarness, endpointId: number): Promise<void> {
	await idsStored(t);
	restart(t);
	await t.stopTrigger();
	await bench.control.setEndpointUrl(endpointId, UNREACHABLE);
}

test('re-enabled at the start: the first check brings the missed orders, each once, shaped like order.created items and marked, with the notice; never again', async () => {
	const { t, brandId, before, missed } = await outage();
	expect(await startAgain(t, shared)).toBe(true);
	expect(caughtUp(t)).toEqual(missed);
	const items = itemsOf(t, 1);
	for (const [i, orderId] of missed.entries()) {
		expect(items[i]).toMatchObject({
			id: `caught_up_order.created_${orderId}`,
			type: 'order.created',
			data: { brandId, orderId },
			caughtUp: true,
			notice: { disabledReason: 'FailingDeliveries', caughtUpOrders: 3 },
		});
		expect(typeof items[i].createdAt).toBe('string');
	}
	expect(orderIdsOf(t).filter((id) => id === before)).toHaveLength(1);

	// the next event carries no notice; a restart and its check bring nothing again, and the event sent again is a duplicate
	const live = await bench.control.createOrder({ brandId });
	await t.waitForRuns(3);
	expect(itemsOf(t, 2)).toEqual([expect.objectContaining({ id: live.event.id })]);
	expect(itemsOf(t, 2)[0].notice).toBeUndefined();
	await idsStored(t);
	restart(t);
	await t.stopTrigger();
	expect(await startAgain(t, shared)).toBe(true);
	const delivery = (await bench.control.deliveries()).find((d) => d.eventId === live.event.id)!;
	expect((await bench.control.redeliver(delivery.id)).responseStatusCode).toBe(200);
	expect(await settledRuns(t)).toBe(3);
	expect(caughtUp(t)).toEqual(missed);
});

test("turned off and on over the Disabled endpoint: the new endpoint's first check brings the missed orders", async () => {
	const { t, userId, endpoint, missed } = await outage();
	await t.delete('update');
	await t.activate();
	await t.startTrigger();
	const [fresh] = await bench.endpointsOf(userId);
	expect(fresh.id).not.toBe(endpoint.id);
	await shared.advance(25_000);
	await settle(t);
	expect(caughtUp(t)).toEqual(missed);
	expect(itemsOf(t, 1)[0].notice).toMatchObject({ disabledReason: 'FailingDeliveries' });
});

test('a late real order.created event of a caught-up order starts nothing; with Fetch Current State each caught-up item carries the order', async () => {
	const { t, brandId, missed } = await outage({ fetchCurrentState: true });
	await startAgain(t, shared);
	expect(itemsOf(t, 1)[0].current).toMatchObject({ id: missed[0], brandId });
	const late = {
		id: 'evt_late_real_event',
		type: 'order.created',
		createdAt: new Date(shared.now()).toISOString(),
		data: { brandId, orderId: missed[0] },
	};
	expect((await deliverWithSecret(t, late)).body).toMatchObject({
		ignored: 'order-caught-up',
		orderId: missed[0],
	});
	expect(await settledRuns(t)).toBe(2);
});

test('with the option off there is no check, and the first event carries only the notice', async () => {
	const { t, brandId, apiKey } = await outageOf(bench, shared, {
		options: { catchUpMissedOrders: false },
	});
	const since = await bench.lastSeq();
	await startAgain(t, shared);
	await bench.control.createOrder({ brandId });
	await t.waitForRuns(2);
	expect(itemsOf(t, 1)).toHaveLength(1);
	expect(itemsOf(t, 1)[0].notice).toMatchObject({ disabledReason: 'FailingDeliveries' });
	expect((itemsOf(t, 1)[0].notice as IDataObject).caughtUpOrders).toBeUndefined();
	const reads = (await bench.requestsOf(apiKey, since)).filter((r) => r.route === 'listOrders');
	expect(reads).toEqual([]);
});

test('n8n down longer than the service tries (about 42 hours): the orders whose deliveries failed for good run once, at the first check', async () => {
	const { t, brandId, endpoint } = await activeTrigger();
	await stopN8n(t, endpoint.id);
	const made = [
		await bench.control.createOrder({ brandId }),
		await bench.control.createOrder({ brandId }),
	];
	await shared.advance(43 * HOUR_MS);
	const deliveryIds = made.flatMap((m) => m.deliveryIds);
	const failed = (await bench.control.deliveries(endpoint.id)).filter((d) =>
		deliveryIds.includes(d.id),
	);
	expect(failed.map((d) => [d.attempts, d.status])).toEqual([
		[8, 'Failed'],
		[8, 'Failed'],
	]);
	await bench.control.setEndpointUrl(endpoint.id, t.webhookUrl);
	await startAgain(t, shared);
	expect(caughtUp(t)).toEqual(made.map((m) => m.order.id));
	expect(await settledRuns(t)).toBe(2);
});

test(`a backlog beyond ${MAX_CAUGHT_UP_PER_RUN} orders: the first check brings ${MAX_CAUGHT_UP_PER_RUN}, oldest first, the next a minute later the rest; none lost, none twice`, async () => {
	const { t, brandId, endpoint } = await activeTrigger();
	const first = orderIdsOf(t);
	await stopN8n(t, endpoint.id);
	const generated = await bench.control.generateOrders({
		count: MAX_CAUGHT_UP_PER_RUN + 10,
		brandId,
	});
	await bench.control.setEndpointUrl(endpoint.id, t.webhookUrl);
	await startAgain(t, shared);
	const expected = Array.from({ length: generated.created }, (_, i) => generated.firstId + i);
	expect(caughtUp(t)).toEqual(expected.slice(0, MAX_CAUGHT_UP_PER_RUN));
	await shared.advance(60_000);
	await settle(t);
	const ran = orderIdsOf(t).filter((id) => !first.includes(id));
	expect([...ran].sort((a, b) => a - b)).toEqual(expected);
});

test('orders created while the workflow was unpublished run at the first check after it is published again, as the polling trigger picks up where it stopped', async () => {
	const { t, brandId, userId } = await activeTrigger();
	await t.stopTrigger();
	await t.delete('update');
	expect(await bench.endpointsOf(userId)).toHaveLength(0);
	const meanwhile = [(await bench.control.createOrder({ brandId })).order.id as number];
	meanwhile.push((await bench.control.createOrder({ brandId })).order.id as number);
	await shared.advance(60_000);
	await t.activate();
	await t.startTrigger();
	await shared.advance(25_000);
	await settle(t);
	expect(caughtUp(t)).toEqual(meanwhile);
});

test('orders that ran while the option was off are not caught up when it is turned on again', async () => {
	const { t, brandId, apiKey } = await activeTrigger({ options: { catchUpMissedOrders: false } });
	await bench.control.createOrder({ brandId });
	await t.waitForRuns(2);
	await idsStored(t);
	// published again with the option at its default (on): the endpoint is found, the cursor starts then
	t.node.parameters.options = {};
	restart(t);
	await t.stopTrigger();
	const since = await bench.lastSeq();
	await startAgain(t, shared);
	expect(caughtUp(t)).toEqual([]);
	const reads = (await bench.requestsOf(apiKey, since)).filter((r) => r.route === 'listOrders');
	expect(reads).toHaveLength(1);
});

test('an order whose own delivery arrives while its catch-up is under way runs once', async () => {
	const { t, brandId, endpoint } = await activeTrigger();
	await stopN8n(t, endpoint.id);
	const missed = await bench.control.createOrder({ brandId });
	await shared.advance(20_000);
	await bench.control.setEndpointUrl(endpoint.id, t.webhookUrl);
	await t.checkExists('init');
	await t.startTrigger('init');
	await shared.advance(25_000);
	// the order list answers slowly; meanwhile the order's own delivery arrives
	await bench.control.injectFault({ route: 'listOrders', mode: 'hang', hangMs: 400, count: 1 });
	const check = settle(t);
	await sleep(100);
	const own = await deliverWithSecret(t, missed.event);
	await check;
	expect(own.status).toBe(200);
	expect(await settledRuns(t)).toBe(2);
	expect(orderIdsOf(t).filter((id) => id === missed.order.id)).toHaveLength(1);
});

test("an order's delivery at a second process that read the static data before the catch-up's save: the run's check keeps it out", async () => {
	const { t, apiKey, brandId, endpoint } = await activeTrigger();
	await stopN8n(t, endpoint.id);
	const missed = await bench.control.createOrder({ brandId });
	await shared.advance(20_000);
	await bench.control.setEndpointUrl(endpoint.id, t.webhookUrl);
	const beforeSave = { ...t.staticData };
	await startAgain(t, shared);
	expect(caughtUp(t)).toEqual([missed.order.id]);
	// the same webhook URL, served by a second process whose copy of the static data predates the save
	const other = await bench.trigger(
		apiKey,
		{},
		{ database: t.database, webhookBaseUrl: t.webhookBaseUrl, settings: shared.settings },
	);
	await idsStored(t);
	const saved = t.staticData;
	t.staticData = {
		...saved,
		known: beforeSave.known,
		deliveredOrders: beforeSave.deliveredOrders,
	};
	const copy = await deliverWithSecret(t, missed.event, other);
	expect(copy.body).toEqual({ received: true, ignored: 'duplicate', id: missed.event.id });
	await other.settled();
	// the run started, and let nothing through
	expect(other.executions).toHaveLength(1);
	expect(other.runs).toHaveLength(0);
	expect(orderIdsOf(t).filter((id) => id === missed.order.id)).toHaveLength(1);
});

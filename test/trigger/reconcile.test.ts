/**
 * Every order once, whatever happened between the service and n8n: Catch Up Missed Orders (on by
 * default) after gaps of minutes, hours and longer than the service's retry horizon, with n8n
 * restarted or running, and what it costs in requests. The trigger runs in n8n-core's engine and
 * receives over real HTTP; the sandbox's clock moves the service's time (its retry schedule, the
 * orders' createdAt) without waiting; a restart is this process forgetting its memory.
 */
import type { IDataObject } from 'n8n-workflow';

import { IN_FLIGHT_MS, MAX_CAUGHT_UP_PER_RUN } from '../../nodes/MarketplaceTrigger/catchUp';
import {
	deliverWithSecret,
	eventually,
	forgetActivationTraffic,
	idsStored,
	settledRuns,
	TriggerBench,
	type TriggerHarness,
	restart,
} from './helpers';

const bench = new TriggerBench();
beforeAll(async () => await bench.start());
afterAll(async () => await bench.close());
afterEach(async () => await bench.closeHarnesses());

const UNREACHABLE = 'http://127.0.0.1:1/unreachable';
/** longer than the in-flight margin: a restart of n8n takes longer than this */
const MARGIN_S = IN_FLIGHT_MS / 1000 + 5;

const orderIdsOf = (t: TriggerHarness, run: number) =>
	t.runs[run][0].map((i) => [(i.json.data as IDataObject).orderId, i.json.caughtUp === true]);
const allOrderIds = (t: TriggerHarness) =>
	t.runs.flatMap((run) => run[0].map((i) => (i.json.data as IDataObject).orderId as number));

async function active(parameters: IDataObject = {}) {
	const user = await bench.user();
	const t = await bench.trigger(user.apiKey, parameters);
	await t.activate();
	await forgetActivationTraffic(t);
	const [endpoint] = await bench.endpointsOf(user.userId);
	const since = await bench.lastSeq();
	/** requests of this trigger's key to `route` since it was activated */
	const reads = async (route: string) =>
		(await bench.requestsOf(user.apiKey, since)).filter((r) => r.route === route).length;
	return { ...user, t, endpoint, reads };
}

/** The deliveries `deliveryIds` as the sandbox holds them now. */
const deliveriesOf = async (endpointId: number, deliveryIds: number[]) =>
	(await bench.control.deliveries(endpointId)).filter((d) => deliveryIds.includes(d.id));

/**
 * Orders whose deliveries fail for `downForS` of the service's time (n8n stopped, or unreachable
 * through its proxy), then n8n is reachable again. Returns the orders and their deliveries.
 */
async function outage(
	endpointId: number,
	t: TriggerHarness,
	brandId: number,
	count: number,
	downForS = 0,
) {
	await bench.control.setEndpointUrl(endpointId, UNREACHABLE);
	const missed: number[] = [];
	const deliveryIds: number[] = [];
	for (let i = 0; i < count; i++) {
		const made = await bench.control.createOrder({ brandId });
		missed.push(made.order.id as number);
		deliveryIds.push(...made.deliveryIds);
	}
	if (downForS > 0) await bench.control.advanceClock(downForS);
	await bench.control.setEndpointUrl(endpointId, t.webhookUrl);
	return { missed, deliveryIds };
}

async function missedWhileDown(
	endpointId: number,
	t: TriggerHarness,
	brandId: number,
	count: number,
	downForS = 0,
): Promise<number[]> {
	return (await outage(endpointId, t, brandId, count, downForS)).missed;
}

async function firstRun(t: TriggerHarness, brandId: number) {
	await t.waitForRuns(1);
	await idsStored(t);
	return brandId;
}

test('n8n stopped for a minute: the first delivery after the restart brings each missed order once; the late retries start nothing, also after another restart', async () => {
	const { t, brandId, endpoint, reads } = await active();
	await bench.control.createOrder({ brandId });
	await firstRun(t, brandId);
	const missed = await missedWhileDown(endpoint.id, t, brandId, 3, MARGIN_S);
	restart(t);
	const live = await bench.control.createOrder({ brandId });
	await t.waitForRuns(2);
	expect(orderIdsOf(t, 1)).toEqual([...missed.map((id) => [id, true]), [live.order.id, false]]);
	expect(t.runs[1][0][0].json).toMatchObject({
		type: 'order.created',
		id: `caught_up_order.created_${missed[0]}`,
		data: { brandId },
	});
	// one read of the order list and one claim of the window
	expect([await reads('listOrders'), await reads('updateWebhookEndpoint')]).toEqual([1, 1]);

	// restarted again before the service's retries (a minute after each failed attempt)
	await idsStored(t);
	restart(t);
	await bench.control.advanceClock(60);
	await eventually(
		async () =>
			missed.length ===
			(await bench.control.deliveries(endpoint.id)).filter(
				(d) => d.status === 'Delivered' && d.attempts >= 2,
			).length,
	);
	const retried = t.responses.filter((r) => (r.body as IDataObject).ignored === 'order-caught-up');
	expect(retried.map((r) => (r.body as IDataObject).orderId).sort()).toEqual([...missed].sort());
	expect(await settledRuns(t)).toBe(2);
});

test('n8n unreachable for hours (five failed attempts each): the orders run once as soon as deliveries flow, the later retries start nothing', async () => {
	const { t, brandId, endpoint } = await active();
	await bench.control.createOrder({ brandId });
	await firstRun(t, brandId);
	const { missed, deliveryIds } = await outage(endpoint.id, t, brandId, 2, 3 * 3600);
	// attempts at 0, 1, 6, 36 and 156 minutes failed
	expect((await deliveriesOf(endpoint.id, deliveryIds)).map((d) => [d.attempts, d.status])).toEqual(
		[
			[5, 'Pending'],
			[5, 'Pending'],
		],
	);
	const live = await bench.control.createOrder({ brandId });
	await t.waitForRuns(2);
	expect(orderIdsOf(t, 1)).toEqual([...missed.map((id) => [id, true]), [live.order.id, false]]);
	await bench.control.advanceClock(5 * 3600);
	expect(await settledRuns(t)).toBe(2);
	expect(
		t.responses.filter((r) => (r.body as IDataObject).ignored === 'order-caught-up'),
	).toHaveLength(2);
});

test('n8n down longer than the service tries (about 42 hours): the orders whose deliveries failed for good still run, once', async () => {
	const { t, brandId, endpoint } = await active();
	await bench.control.createOrder({ brandId });
	await firstRun(t, brandId);
	const { missed, deliveryIds } = await outage(endpoint.id, t, brandId, 2, 43 * 3600);
	expect((await deliveriesOf(endpoint.id, deliveryIds)).map((d) => [d.attempts, d.status])).toEqual(
		[
			[8, 'Failed'],
			[8, 'Failed'],
		],
	);
	restart(t);
	const live = await bench.control.createOrder({ brandId });
	await t.waitForRuns(2);
	expect(orderIdsOf(t, 1)).toEqual([...missed.map((id) => [id, true]), [live.order.id, false]]);
});

test('deliveries lost while n8n runs (a proxy failing, first attempts and first retries lost): a catch-up about a minute later brings them; nothing twice', async () => {
	const { t, brandId, endpoint, reads } = await active();
	await bench.control.createOrder({ brandId });
	await firstRun(t, brandId);
	await bench.control.advanceClock(MARGIN_S);
	// steady traffic; the process caught up once since it started
	await bench.control.createOrder({ brandId });
	await t.waitForRuns(2);
	expect(await reads('listOrders')).toBe(1);
	// the proxy fails for 70 s: each lost order's first attempt and its retry a minute later
	const lost = await missedWhileDown(endpoint.id, t, brandId, 2, 70);
	// traffic goes on; the first delivery a minute after the last read catches up
	const next = await bench.control.createOrder({ brandId });
	await t.waitForRuns(3);
	expect(orderIdsOf(t, 2)).toEqual([...lost.map((id) => [id, true]), [next.order.id, false]]);
	expect(await reads('listOrders')).toBe(2);
	// the service's next retries (5 minutes after the last failed attempt) start nothing
	await bench.control.advanceClock(5 * 60);
	expect(await settledRuns(t)).toBe(3);
	expect(
		t.responses.filter((r) => (r.body as IDataObject).ignored === 'order-caught-up'),
	).toHaveLength(2);
	expect(new Set(allOrderIds(t)).size).toBe(allOrderIds(t).length);
});

test("steady traffic reads the order list about once a minute of the service's time; with the option off, never", async () => {
	const on = await active();
	const off = await active({ options: { catchUpMissedOrders: false } });
	const brands = [on.brandId, off.brandId];
	// an order for each every 10 s for 5 minutes
	for (let i = 0; i < 30; i++) {
		for (const brandId of brands) await bench.control.createOrder({ brandId });
		await bench.control.advanceClock(10);
	}
	await on.t.waitForRuns(30);
	await off.t.waitForRuns(30);
	expect(await on.reads('listOrders')).toBeGreaterThanOrEqual(4);
	expect(await on.reads('listOrders')).toBeLessThanOrEqual(5);
	expect(await off.reads('listOrders')).toBe(0);
	expect(on.t.runs.flatMap((run) => run[0]).filter((i) => i.json.caughtUp)).toHaveLength(0);
});

test(`a backlog beyond ${MAX_CAUGHT_UP_PER_RUN} orders comes over the next deliveries, oldest first: none lost, none twice`, async () => {
	const { t, brandId, endpoint } = await active();
	await bench.control.createOrder({ brandId });
	await firstRun(t, brandId);
	await bench.control.setEndpointUrl(endpoint.id, UNREACHABLE);
	const generated = await bench.control.generateOrders({
		count: MAX_CAUGHT_UP_PER_RUN + 10,
		brandId,
	});
	await bench.control.setEndpointUrl(endpoint.id, t.webhookUrl);
	await bench.control.advanceClock(MARGIN_S);
	restart(t);
	await bench.control.createOrder({ brandId });
	await t.waitForRuns(2);
	expect(t.runs[1][0].filter((i) => i.json.caughtUp)).toHaveLength(MAX_CAUGHT_UP_PER_RUN);
	await bench.control.advanceClock(MARGIN_S);
	await bench.control.createOrder({ brandId });
	await t.waitForRuns(3);
	expect(t.runs[2][0].filter((i) => i.json.caughtUp)).toHaveLength(10);
	const caught = t.runs
		.flatMap((run) => run[0])
		.filter((i) => i.json.caughtUp)
		.map((i) => (i.json.data as IDataObject).orderId as number);
	const expected = Array.from({ length: generated.created }, (_, i) => generated.firstId + i);
	expect([...caught].sort((a, b) => a - b)).toEqual(expected);
});

test('orders created while the workflow was unpublished run when it is published again, as the polling trigger picks up where it stopped', async () => {
	const { t, brandId, userId } = await active();
	await bench.control.createOrder({ brandId });
	await firstRun(t, brandId);
	await t.delete('update');
	expect(await bench.endpointsOf(userId)).toHaveLength(0);
	const meanwhile = [(await bench.control.createOrder({ brandId })).order.id as number];
	meanwhile.push((await bench.control.createOrder({ brandId })).order.id as number);
	await t.activate();
	await forgetActivationTraffic(t);
	await bench.control.advanceClock(MARGIN_S);
	const live = await bench.control.createOrder({ brandId });
	await t.waitForRuns(1);
	expect(orderIdsOf(t, 0)).toEqual([...meanwhile.map((id) => [id, true]), [live.order.id, false]]);
});

test('an order whose own delivery arrives while its catch-up is under way runs once', async () => {
	const { t, brandId, endpoint } = await active();
	await bench.control.createOrder({ brandId });
	await firstRun(t, brandId);
	await bench.control.setEndpointUrl(endpoint.id, UNREACHABLE);
	const missed = await bench.control.createOrder({ brandId });
	await bench.control.advanceClock(MARGIN_S);
	await bench.control.setEndpointUrl(endpoint.id, t.webhookUrl);
	restart(t);
	// the order list answers slowly; meanwhile the service's retry of the missed order arrives
	await bench.control.injectFault({ route: 'listOrders', mode: 'hang', hangMs: 400, count: 1 });
	const live = await bench.control.createOrder({ brandId });
	await new Promise((r) => setTimeout(r, 100));
	const retry = await deliverWithSecret(t, missed.event);
	await t.waitForRuns(3);
	expect(await settledRuns(t)).toBe(3);
	const ids = [missed.order.id as number, live.order.id as number];
	expect(
		allOrderIds(t)
			.filter((id) => ids.includes(id))
			.sort(),
	).toEqual(ids.sort());
	expect(retry.status).toBe(200);
});

test('orders that ran while the option was off are not caught up when it is turned on again', async () => {
	const { t, brandId, reads } = await active({ options: { catchUpMissedOrders: false } });
	for (let i = 0; i < 2; i++) await bench.control.createOrder({ brandId });
	await t.waitForRuns(2);
	await idsStored(t);
	// published again with the option at its default (on): the endpoint is found, the cursor starts at the next delivery
	t.node.parameters.options = {};
	await t.activate();
	await forgetActivationTraffic(t);
	restart(t);
	await bench.control.advanceClock(MARGIN_S);
	await bench.control.createOrder({ brandId });
	await t.waitForRuns(1);
	await bench.control.advanceClock(2 * 60);
	await bench.control.createOrder({ brandId });
	await t.waitForRuns(2);
	expect(t.runs.flatMap((run) => run[0]).filter((item) => item.json.caughtUp)).toHaveLength(0);
	expect(await reads('listOrders')).toBe(1);
});

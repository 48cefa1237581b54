/**
 * "Once" in n8n-core's real engine against the sandbox over HTTP: each event and each order runs the
 * workflow once; a copy starts an execution with no output; the check at the start catches up the
 * orders no delivery brought, and their late deliveries output nothing.
 */
import { DEFAULT_HISTORY_SIZE } from '../../nodes/MarketplaceTrigger/once';
import {
	caughtUp,
	deliverWithSecret,
	forgetActivationTraffic,
	settle,
	TriggerBench,
} from './helpers';

const bench = new TriggerBench();
beforeAll(async () => await bench.start());
afterAll(async () => await bench.close());
afterEach(async () => await bench.closeHarnesses());

test('an order.created delivery runs once; a copy of it starts an execution with no output', async () => {
	const { apiKey, brandId } = await bench.user();
	const t = await bench.trigger(apiKey);
	await t.activate();
	await forgetActivationTraffic(t);
	const { order } = await bench.control.createOrder({ brandId });
	await t.waitForRuns(1);
	const [item] = t.runs[0][0];
	expect(item.json).toMatchObject({ type: 'order.created', data: { orderId: order.id } });
	await deliverWithSecret(t, item.json);
	await settle(t);
	expect(t.runs).toHaveLength(1);
	expect(t.executions.length).toBe(2);
	expect(t.responses.every((r) => r.status === 200)).toBe(true);
	expect(DEFAULT_HISTORY_SIZE).toBeGreaterThan(0);
});

test('the check at the start runs the orders created while n8n was down, once; their late deliveries output nothing', async () => {
	const { apiKey, brandId, userId } = await bench.user();
	const t = await bench.trigger(apiKey);
	await t.activate();
	await t.startTrigger();
	await settle(t);
	// the first check reads nothing: older orders were never this workflow's to run
	expect(t.runs).toHaveLength(0);
	await t.stopTrigger();
	const [endpoint] = await bench.endpointsOf(userId);
	await bench.control.setEndpointUrl(endpoint.id, 'http://127.0.0.1:1/n8n-is-down');
	const missed = [
		(await bench.control.createOrder({ brandId })).order.id,
		(await bench.control.createOrder({ brandId })).order.id,
	];
	await bench.control.setEndpointUrl(endpoint.id, t.webhookUrl);
	await t.startTrigger('init');
	await settle(t);
	expect(caughtUp(t)).toEqual(missed);
	await bench.control.advanceClockMs(6 * 60_000);
	await settle(t);
	await t.stopTrigger();
	expect(caughtUp(t)).toEqual(missed);
	expect(t.runs).toHaveLength(1);
});

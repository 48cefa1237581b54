/**
 * The Marketplace Polling Trigger in n8n-core's real poll engine (PollContext, PollTriggerExecutor,
 * static data saved as the CLI saves it) against the sandbox over loopback HTTP.
 */
import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import { Logger } from '@n8n/backend-common';
import { Container } from '@n8n/di';

import { MarketplaceApi } from '../../credentials/MarketplaceApi.credentials';
import { MarketplacePollingTrigger } from '../../nodes/MarketplacePollingTrigger/MarketplacePollingTrigger.node';
import { setTransportClock } from '../transportClock';
import { SteppedClock } from '../action/clock';
import { createPollHarness, type PollHarness } from '../engine/harness';
import { startSandbox, type SandboxHandle } from '../sandbox';
import type { LoggedRequest } from '../sandbox/requestLog';
import { call } from '../sandbox/testkit';

const node = new MarketplacePollingTrigger();
const credentialType = new MarketplaceApi();
const DAY = 24 * 3600_000;

let sandbox: SandboxHandle;
beforeAll(async () => {
	sandbox = await startSandbox();
});
afterAll(async () => await sandbox?.close());
// a test that steps the transport's clock leaves the system clock to the next
afterEach(() => setTransportClock());

interface Order extends IDataObject {
	id: number;
	brandId: number;
	status: string;
	createdAt: string;
	updatedAt: string;
}

function trigger(
	parameters: INodeParameters,
	apiKey = sandbox.demoApiKey,
	durable?: { pollBudgetMs: number },
): PollHarness {
	return createPollHarness({
		node,
		credentialTypes: [credentialType],
		credentials: { marketplaceApi: { baseUrl: sandbox.baseUrl, apiKey } },
		parameters,
		durable,
	});
}

/** Runs one poll and returns what it emitted and the requests the sandbox received meanwhile. */
async function pollWithRequests(
	harness: PollHarness,
	mode: 'trigger' | 'manual' = 'trigger',
): Promise<{ items: INodeExecutionData[]; requests: LoggedRequest[] }> {
	const before = (await sandbox.control.requests()).at(-1)?.seq ?? 0;
	const result = await harness.poll(mode);
	const requests = await sandbox.control.requests(before);
	return { items: result?.[0] ?? [], requests };
}

const ids = (items: INodeExecutionData[]) => items.map((i) => i.json.id);
const changes = (items: INodeExecutionData[]) => items.map((i) => [i.json.id, i.json.change]);
const queryOf = (request: LoggedRequest) => new URLSearchParams(request.rawQuery);

/** The first states the node keeps in the workflow's static data (for n8n's durable poll scheduler). */
const firstStates = (harness: PollHarness) =>
	Object.values(
		((harness.workflowStaticData.global as IDataObject | undefined)?.marketplacePollingFirstState ??
			{}) as IDataObject,
	);

async function inScopeOrders(): Promise<Order[]> {
	return (await sandbox.control.state<Order>('orders')).filter((o) => o.brandId <= 5);
}

describe('Marketplace Polling Trigger (engine + sandbox)', () => {
	test('first activation does not flood; orders created between polls appear exactly once; one request per poll', async () => {
		await sandbox.control.generateOrders({ count: 4, brandId: 1 });
		const poller = trigger({ events: ['created'] });

		const first = await pollWithRequests(poller);
		expect(first.items).toEqual([]);
		expect(first.requests).toHaveLength(1);
		expect(firstStates(poller)).toEqual([poller.staticData.orderWatch]);
		expect(first.requests[0]).toMatchObject({ method: 'GET', path: '/v1/orders', status: 200 });
		const firstStart = Date.parse(queryOf(first.requests[0]).get('startDate')!);
		expect(Date.now() - firstStart).toBeGreaterThanOrEqual(10 * 60_000);
		expect(Date.now() - firstStart).toBeLessThan(11 * 60_000);

		const a = (await sandbox.control.createOrder({ brandId: 2 })).order as Order;
		const b = (await sandbox.control.createOrder({ brandId: 3, status: 'Packed' })).order as Order;
		const outOfScope = (await sandbox.control.createOrder({ brandId: 6 })).order as Order;

		const second = await pollWithRequests(poller);
		expect(ids(second.items)).toEqual([a.id, b.id]);
		expect(second.items[0].json).toMatchObject({
			...a,
			change: { kind: 'created', status: 'Created' },
		});
		expect(second.items[1].json.change).toEqual({
			kind: 'created',
			status: 'Packed',
			detectedAt: expect.any(String),
		});
		expect(ids(second.items)).not.toContain(outOfScope.id);
		expect(second.requests).toHaveLength(1);
		expect(poller.emitted).toHaveLength(1);

		// The next window overlaps the previous one and returns a and b again: nothing twice.
		const third = await pollWithRequests(poller);
		expect(third.items).toEqual([]);
		expect(third.requests).toHaveLength(1);
		expect(Date.parse(queryOf(third.requests[0]).get('startDate')!)).toBeLessThanOrEqual(
			Date.parse(a.createdAt),
		);
		expect(JSON.parse(third.requests[0].body || '{}')).toEqual({});

		const c = (await sandbox.control.createOrder({ brandId: 1 })).order as Order;
		const fourth = await pollWithRequests(poller);
		expect(ids(fourth.items)).toEqual([c.id]);
		expect(poller.emitted).toHaveLength(2);
	});

	test('brand filter is sent comma-separated and only those brands are reported', async () => {
		const poller = trigger({ events: ['created'], filters: { brandIds: '2, 4' } });
		const first = await pollWithRequests(poller);
		expect(first.requests[0].rawQuery).toMatch(
			/^brandIds=2,4&startDate=\d{4}-\d\d-\d\dT\d\d%3A\d\d%3A\d\dZ$/,
		);
		const two = (await sandbox.control.createOrder({ brandId: 2 })).order as Order;
		await sandbox.control.createOrder({ brandId: 3 });
		const four = (await sandbox.control.createOrder({ brandId: 4 })).order as Order;
		expect(ids((await pollWithRequests(poller)).items)).toEqual([two.id, four.id]);
	});

	test('status changes of older orders: reported once, with the previous status, within the lookback', async () => {
		const now = Date.now();
		const all = await inScopeOrders();
		const old = all.find(
			(o) =>
				o.status === 'Created' &&
				now - Date.parse(o.createdAt) > 3 * DAY &&
				now - Date.parse(o.createdAt) < 6 * DAY,
		)!;
		const tooOld = all.find(
			(o) => o.status === 'Created' && now - Date.parse(o.createdAt) > 8 * DAY,
		)!;
		expect(old).toBeDefined();
		expect(tooOld).toBeDefined();

		const poller = trigger({ events: ['statusChanged'], lookbackDays: 7 });
		const first = await pollWithRequests(poller);
		expect(first.items).toEqual([]); // dozens of orders in the lookback, none reported
		expect(first.requests).toHaveLength(1);
		const start = Date.parse(queryOf(first.requests[0]).get('startDate')!);
		expect(Math.abs(now - 7 * DAY - start)).toBeLessThan(60_000);

		await sandbox.control.cancelOrder(old.id);
		await sandbox.control.cancelOrder(tooOld.id);
		await sandbox.control.createOrder({ brandId: 1 }); // new, not watched
		const second = await pollWithRequests(poller);
		expect(changes(second.items)).toEqual([
			[
				old.id,
				{
					kind: 'statusChanged',
					status: 'Cancelled',
					previousStatus: 'Created',
					detectedAt: expect.any(String),
				},
			],
		]);
		expect(second.items[0].json.status).toBe('Cancelled');
		expect(second.requests).toHaveLength(1);

		expect((await pollWithRequests(poller)).items).toEqual([]);

		await sandbox.control.returnOrder(old.id);
		const fourth = await pollWithRequests(poller);
		expect(changes(fourth.items)).toEqual([
			[
				old.id,
				{
					kind: 'statusChanged',
					status: 'Returned',
					previousStatus: 'Cancelled',
					detectedAt: expect.any(String),
				},
			],
		]);
	});

	test('the statuses filter reports only changes into those statuses', async () => {
		const now = Date.now();
		const candidates = (await inScopeOrders()).filter(
			(o) => o.status === 'Created' && now - Date.parse(o.createdAt) < 6 * DAY,
		);
		const [x, y] = candidates.slice(-2);
		const poller = trigger({
			events: ['created', 'statusChanged'],
			filters: { statuses: ['Returned'] },
		});
		await poller.poll();
		await sandbox.control.cancelOrder(x.id);
		await sandbox.control.createOrder({ brandId: 2 });
		expect(await poller.poll()).toBeNull();
		await sandbox.control.returnOrder(y.id);
		const third = await poller.poll();
		expect(third![0].map((i) => [i.json.id, i.json.change])).toEqual([
			[
				y.id,
				{
					kind: 'statusChanged',
					status: 'Returned',
					previousStatus: 'Created',
					detectedAt: expect.any(String),
				},
			],
		]);
	});

	test('a start date catches up: orders since then are reported once on the first poll', async () => {
		const since = new Date(Date.now() - DAY).toISOString();
		const expected = (await inScopeOrders())
			.filter((o) => Date.parse(o.createdAt) >= Date.parse(since))
			.sort((p, q) => Date.parse(p.createdAt) - Date.parse(q.createdAt) || p.id - q.id)
			.map((o) => o.id);
		expect(expected.length).toBeGreaterThan(5);
		const poller = trigger({ events: ['created'], options: { startDate: since } });
		const first = await pollWithRequests(poller);
		expect(ids(first.items)).toEqual(expected);
		expect(first.requests).toHaveLength(1);
		expect(queryOf(first.requests[0]).get('startDate')).toBe(since.replace(/\.\d{3}Z$/, 'Z'));
		expect((await pollWithRequests(poller)).items).toEqual([]);
	});

	test('manual run returns the most recent order, marked as a sample, and leaves the saved state alone', async () => {
		const poller = trigger({ events: ['created'] });
		await poller.poll();
		const savedState = JSON.stringify(poller.staticData);
		const latest = (await sandbox.control.createOrder({ brandId: 5 })).order as Order;

		const manual = await pollWithRequests(poller, 'manual');
		expect(manual.items).toHaveLength(1);
		expect(manual.items[0].json).toEqual({
			...latest,
			change: { kind: 'created', status: 'Created', detectedAt: expect.any(String) },
			sample: true,
			sampleSource: 'newest-order',
			sampleNote: expect.stringContaining(`newest order (${latest.id})`),
		});
		expect(manual.requests).toHaveLength(1);
		expect(JSON.stringify(poller.staticData)).toBe(savedState);

		// The manual run did not consume the order: the active workflow still reports it.
		expect(ids((await poller.poll())![0])).toEqual([latest.id]);

		const cancelled = await pollWithRequests(
			trigger({ events: ['created'], filters: { statuses: ['Cancelled'] } }),
			'manual',
		);
		const newestCancelled = (await inScopeOrders())
			.filter((o) => o.status === 'Cancelled')
			.sort((p, q) => Date.parse(q.createdAt) - Date.parse(p.createdAt))[0];
		expect(ids(cancelled.items)).toEqual([newestCancelled.id]);
	});

	test('manual run reads a bounded window: widening 1, 7, 30, 365 days, never the whole order list', async () => {
		const { apiKey } = await sandbox.control.createUser({ brandIds: [5] });
		const found = await pollWithRequests(
			trigger({ events: ['created'], filters: { statuses: ['Returned'] } }, apiKey),
			'manual',
		);
		expect(found.items).toHaveLength(1);
		expect(found.requests.every((r) => queryOf(r).has('startDate'))).toBe(true);
		// nothing at all in a year (a user whose scope holds no brand): bounded reads, then no sample
		const { apiKey: empty } = await sandbox.control.createUser({ brandIds: [] });
		const none = await pollWithRequests(trigger({ events: ['created'] }, empty), 'manual');
		expect(none.items).toEqual([]);
		const starts = none.requests.map((r) =>
			Math.round((Date.now() - Date.parse(queryOf(r).get('startDate')!)) / DAY),
		);
		expect(starts).toEqual([1, 7, 30, 365]);
	});

	test('a revoked key surfaces as NodeApiError 401, no retry, the state is kept', async () => {
		const { apiKey } = await sandbox.control.createUser({
			permissions: ['orders.read'],
			brandIds: [1, 2],
		});
		const poller = trigger({ events: ['created'] }, apiKey);
		await poller.poll();
		const savedState = JSON.stringify(poller.staticData);
		await sandbox.control.revokeKey(apiKey);

		const before = (await sandbox.control.requests()).at(-1)?.seq ?? 0;
		const error = await poller.poll().catch((e: unknown) => e);
		expect(error).toBeInstanceOf(NodeApiError);
		expect(error).toMatchObject({ httpCode: '401' });
		expect((error as Error).message).toMatch(/unauthorized/i);
		expect((error as Error).message).not.toContain(apiKey);
		expect(await sandbox.control.requests(before)).toHaveLength(1);
		expect(JSON.stringify(poller.staticData)).toBe(savedState);
		expect(poller.emitted).toHaveLength(0);
	});

	test('the first poll (activation) fails on a key without orders.read', async () => {
		const { apiKey } = await sandbox.control.createUser({
			permissions: ['products.read'],
			brandIds: [1],
		});
		const error = await trigger({ events: ['created'] }, apiKey)
			.poll()
			.catch((e: unknown) => e);
		expect(error).toBeInstanceOf(NodeApiError);
		expect(error).toMatchObject({ httpCode: '403' });
	});

	test('injected 500s: retried, then surfaced; the next poll catches up on the orders of the outage', async () => {
		const poller = trigger({ events: ['created'], requestOptions: { maxAttempts: 2 } });
		await poller.poll();
		const clock = new SteppedClock(sandbox.control);
		setTransportClock(clock);
		await sandbox.control.injectFault({ route: 'listOrders', mode: '500', count: 2 });
		const during = (await sandbox.control.createOrder({ brandId: 3 })).order as Order;

		const before = (await sandbox.control.requests()).at(-1)?.seq ?? 0;
		const error = await poller.poll().catch((e: unknown) => e);
		expect(error).toBeInstanceOf(NodeApiError);
		expect(error).toMatchObject({ httpCode: '500' });
		const attempts = await sandbox.control.requests(before);
		expect(attempts.map((r) => r.status)).toEqual([500, 500]);
		// one backoff between the two attempts, asked of the transport's clock
		expect(clock.waits).toHaveLength(1);

		const recovered = await pollWithRequests(poller);
		expect(ids(recovered.items)).toEqual([during.id]);
		expect(recovered.requests).toHaveLength(1);
		expect(await poller.poll()).toBeNull();
	});

	test('overlapping polls: a poll that outlasts the interval makes the next one wait and report nothing itself; every order reported once', async () => {
		const poller = trigger({ events: ['created'] });
		await poller.poll();
		const before = (await sandbox.control.requests()).at(-1)?.seq ?? 0;
		const x = (await sandbox.control.createOrder({ brandId: 1 })).order as Order;
		await sandbox.control.injectFault({
			route: 'listOrders',
			mode: 'hang',
			hangMs: 1500,
			count: 1,
		});

		const slow = poller.poll();
		// the slow poll is in flight once its request took the fault
		while ((await sandbox.control.faults()).faults.length > 0)
			await new Promise((r) => setImmediate(r));
		const y = (await sandbox.control.createOrder({ brandId: 2 })).order as Order;
		const logged = jest.spyOn(Container.get(Logger), 'info');
		const overlapping = poller.poll();
		// it waits for the slow poll (as it says in n8n's log); the hang then ends when the sandbox's
		// clock has moved by it, not after a real 1.5 s
		while (!logged.mock.calls.some(([message]) => /still running/.test(message)))
			await new Promise((r) => setImmediate(r));
		logged.mockRestore();
		await sandbox.control.advanceClockMs(1500);
		expect(await overlapping).toBeNull();

		const reported = [...((await slow)?.[0] ?? []), ...((await poller.poll())?.[0] ?? [])];
		expect(ids(reported).sort((a, b) => Number(a) - Number(b))).toEqual([x.id, y.id]);
		expect(await poller.poll()).toBeNull();
		// the skipped poll sent nothing: one request per poll that ran
		expect(
			(await sandbox.control.requests(before)).filter((r) => r.path === '/v1/orders'),
		).toHaveLength(3);
	});

	test('re-activation after a pause, and a restart, report what changed while the workflow was off, once (as the notice says)', async () => {
		const notice = String(
			node.description.properties.find((p) => p.name === 'pollingNotice')!.displayName,
		);
		expect(notice).toMatch(/first activation starts from now/);
		expect(notice).toMatch(
			/unpublished for a while, or n8n restarted, it picks up where it stopped/,
		);

		const poller = trigger({ events: ['created', 'statusChanged'], lookbackDays: 1 });
		await poller.poll('trigger', 'activate');
		const tracked = (await sandbox.control.createOrder({ brandId: 4 })).order as Order;
		expect(ids((await poller.poll('trigger', 'activate'))![0])).toEqual([tracked.id]);

		// unpublished: no polls while an order arrives and a tracked one is cancelled
		const whileOff = (await sandbox.control.createOrder({ brandId: 4 })).order as Order;
		await sandbox.control.cancelOrder(tracked.id);
		const resumed = (await poller.poll('trigger', 'activate'))![0];
		// both happened within the same millisecond or two: compare in id order
		expect(changes(resumed).sort((a, b) => Number(b[0]) - Number(a[0]))).toEqual([
			[whileOff.id, { kind: 'created', status: 'Created', detectedAt: expect.any(String) }],
			[
				tracked.id,
				{
					kind: 'statusChanged',
					status: 'Cancelled',
					previousStatus: 'Created',
					detectedAt: expect.any(String),
				},
			],
		]);

		// n8n restarted (activation mode init): the same, and nothing twice
		const duringRestart = (await sandbox.control.createOrder({ brandId: 4 })).order as Order;
		expect(ids((await poller.poll('trigger', 'init'))![0])).toEqual([duringRestart.id]);
		expect(await poller.poll('trigger', 'init')).toBeNull();
	});

	test('invalid parameters fail before any request', async () => {
		const before = (await sandbox.control.requests()).at(-1)?.seq ?? 0;
		const error = await trigger({ events: ['created'], filters: { brandIds: 'one' } })
			.poll()
			.catch((e: unknown) => e);
		expect(error).toBeInstanceOf(NodeOperationError);
		expect((error as Error).message).toMatch(/Brand IDs/);
		expect(await sandbox.control.requests(before)).toHaveLength(0);
	});

	test('Request Options accept what the shared parameter offers (a 400,000 ms timeout), and the same bounds as the action node', async () => {
		const poller = trigger({
			events: ['created'],
			requestOptions: { timeout: 400_000, maxAttempts: 10 },
		});
		await expect(poller.poll()).resolves.toBeNull();
		for (const [requestOptions, field] of [
			[{ timeout: 600_001 }, 'Timeout (Ms)'],
			[{ maxAttempts: 11 }, 'Max Attempts'],
		] as const) {
			const error = await trigger({ events: ['created'], requestOptions })
				.poll()
				.catch((e: unknown) => e);
			expect((error as Error).message).toContain(`Request Options > ${field}`);
		}
	});

	test('static data stays bounded to the orders of the window', async () => {
		const poller = trigger({ events: ['created', 'statusChanged'], lookbackDays: 2 });
		await poller.poll();
		await sandbox.control.generateOrders({ count: 30, brandId: 1 });
		const { items, requests } = await pollWithRequests(poller);
		expect(items).toHaveLength(30);
		const start = Date.parse(queryOf(requests[0]).get('startDate')!);
		expect(Math.abs(Date.now() - 2 * DAY - start)).toBeLessThan(60_000);
		const seen = (poller.staticData.orderWatch as { seen: Record<string, [number, ...string[]]> })
			.seen;
		const inWindow = (await inScopeOrders()).filter((o) => Date.parse(o.createdAt) >= start);
		expect(Object.keys(seen).map(Number).sort()).toEqual(inWindow.map((o) => o.id).sort());
		expect(inWindow.length).toBeLessThan((await inScopeOrders()).length);
		expect(firstStates(poller)).toEqual([]);
	});
});

describe("Marketplace Polling Trigger under n8n's durable poll scheduler (engine + sandbox)", () => {
	const durableTrigger = (parameters: INodeParameters, pollBudgetMs = 36_000) =>
		trigger(parameters, undefined, { pollBudgetMs });
	/** n8n's poll at activation (never committed when it emits nothing), then the scheduled polls */
	const activate = (poller: PollHarness) => poller.poll('trigger', 'activate', true);

	test('an order created between the activation and the first scheduled poll is reported once', async () => {
		const poller = durableTrigger({ events: ['created'] });
		expect(await activate(poller)).toBeNull();
		expect(poller.cursor).toEqual({});
		const order = (await sandbox.control.createOrder({ brandId: 1 })).order as Order;

		expect(ids((await poller.poll('trigger', 'update'))?.[0] ?? [])).toEqual([order.id]);
		expect(await poller.poll('trigger', 'update')).toBeNull();
		expect(poller.cursor?.orderWatch).toMatchObject({ version: 1 });
	});

	test('a status change before the first scheduled poll is reported once', async () => {
		const poller = durableTrigger({ events: ['statusChanged'], lookbackDays: 1 });
		await activate(poller);
		const order = (await sandbox.control.createOrder({ brandId: 2 })).order as Order;
		await sandbox.control.cancelOrder(order.id);

		const first = (await poller.poll('trigger', 'update'))?.[0] ?? [];
		expect(changes(first)).toEqual([
			[order.id, expect.objectContaining({ kind: 'statusChanged', status: 'Cancelled' })],
		]);
		expect(await poller.poll('trigger', 'update')).toBeNull();
	});

	test('an order made before the activation and packed after it: the first scheduled poll reports Created -> Packed once, with the order made meanwhile', async () => {
		const poller = durableTrigger({
			events: ['created', 'statusChanged'],
			lookbackDays: 1,
			filters: { brandIds: '3' },
		});
		const [packed, untouched] = [
			(await sandbox.control.createOrder({ brandId: 3 })).order as Order,
			(await sandbox.control.createOrder({ brandId: 3 })).order as Order,
		];
		expect(await activate(poller)).toBeNull();
		expect(poller.cursor).toEqual({});
		const packing = await call(sandbox, 'POST', '/v1/fulfillment/orders/packed', {
			body: { orderIds: [packed.id] },
		});
		expect(packing.status).toBe(200);
		const made = (await sandbox.control.createOrder({ brandId: 3 })).order as Order;

		expect(changes((await poller.poll('trigger', 'update'))?.[0] ?? [])).toEqual([
			[
				packed.id,
				expect.objectContaining({
					kind: 'statusChanged',
					status: 'Packed',
					previousStatus: 'Created',
				}),
			],
			[made.id, expect.objectContaining({ kind: 'created', status: 'Created' })],
		]);
		expect(await poller.poll('trigger', 'update')).toBeNull();
		expect(firstStates(poller)).toEqual([]);
		await sandbox.control.cancelOrder(untouched.id);
		expect(changes((await poller.poll('trigger', 'update'))?.[0] ?? [])).toEqual([
			[untouched.id, expect.objectContaining({ status: 'Cancelled', previousStatus: 'Created' })],
		]);
	});

	test('a failed scheduled poll commits nothing; the next one reports the order once', async () => {
		const poller = durableTrigger({ events: ['created'], requestOptions: { maxAttempts: 1 } });
		await activate(poller);
		expect(await poller.poll('trigger', 'update')).toBeNull();
		const committed = JSON.stringify(poller.cursor);
		const order = (await sandbox.control.createOrder({ brandId: 3 })).order as Order;
		await sandbox.control.injectFault({ route: 'listOrders', mode: '500', count: 1 });

		await expect(poller.poll('trigger', 'update')).rejects.toBeInstanceOf(NodeApiError);
		expect(JSON.stringify(poller.cursor)).toBe(committed);
		expect(ids((await poller.poll('trigger', 'update'))?.[0] ?? [])).toEqual([order.id]);
	});

	test("a wait that would outlast n8n's poll budget ends the poll at once with the service's error; the next poll reports the order", async () => {
		const poller = durableTrigger({ events: ['created'] }, 2_000);
		await activate(poller);
		await poller.poll('trigger', 'update');
		const order = (await sandbox.control.createOrder({ brandId: 4 })).order as Order;
		await sandbox.control.injectFault({
			route: 'listOrders',
			mode: '429',
			retryAfterSeconds: 30,
			count: 1,
		});

		const started = Date.now();
		const error = await poller.poll('trigger', 'update').catch((e: unknown) => e);
		expect(error).toBeInstanceOf(NodeApiError);
		expect(error).toMatchObject({ httpCode: '429' });
		expect(Date.now() - started).toBeLessThan(2_000);
		expect(ids((await poller.poll('trigger', 'update'))?.[0] ?? [])).toEqual([order.id]);
	});

	test("an answer slower than n8n's poll budget ends the poll within it; the next poll reports the order", async () => {
		const poller = durableTrigger({ events: ['created'] }, 1_500);
		await activate(poller);
		await poller.poll('trigger', 'update');
		const order = (await sandbox.control.createOrder({ brandId: 4 })).order as Order;
		await sandbox.control.injectFault({ route: 'listOrders', mode: 'hang', hangMs: 10_000 });

		const started = Date.now();
		const error = await poller.poll('trigger', 'update').catch((e: unknown) => e);
		expect(error).toBeInstanceOf(NodeApiError);
		expect(Date.now() - started).toBeLessThan(3_000);
		await sandbox.control.clearFaults();
		expect(ids((await poller.poll('trigger', 'update'))?.[0] ?? [])).toEqual([order.id]);
	});

	test('the first activation still reports no order older than it', async () => {
		await sandbox.control.generateOrders({ count: 3, brandId: 5 });
		const poller = durableTrigger({ events: ['created'] });
		await activate(poller);
		expect(await poller.poll('trigger', 'update')).toBeNull();
	});
});

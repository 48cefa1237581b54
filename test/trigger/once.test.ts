/**
 * "Once" in n8n-core's real engine against the sandbox over HTTP (once.ts): each event and each order
 * runs the workflow once; a copy (the service's retry after a lost answer, a redelivery, the
 * order.created of an order a check ran) starts an execution with no output. The keys live in n8n's
 * deduplication store (the harness database's `processed_data` row, n8n's helper over it), and
 * beside them each run's `hour:<UTC hour>` mark and a failed check's `gap:<UTC hour>` mark, which
 * the check looks up (catchUp.ts); a second n8n process is a harness on the same database.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { DataDeduplicationService } from 'n8n-core';
import type { IDataObject } from 'n8n-workflow';

import { gapMark, activeHourMark } from '../../nodes/MarketplaceTrigger/marks';
import { DEFAULT_HISTORY_SIZE, MIN_HISTORY_SIZE } from '../../nodes/MarketplaceTrigger/once';
import { processedDataHash } from '../engine/triggers';
import {
	caughtUp,
	deliverWithSecret,
	forgetActivationTraffic,
	settle,
	SharedClock,
	TriggerBench,
	type TriggerHarness,
	publishedTrigger,
	sharedClockSuite,
} from './helpers';

const { bench, shared } = sharedClockSuite();

/** A second n8n process on the same database, behind the same public URL (WEBHOOK_URL). */
async function secondProcess(t: TriggerHarness, apiKey: string): Promise<TriggerHarness> {
	return await bench.trigger(
		apiKey,
		{},
		{ database: t.database, webhookBaseUrl: t.webhookBaseUrl },
	);
}

/** The keys n8n's store holds for the trigger, as hashes in recording order. */
const storedHashes = (t: TriggerHarness) => (t.processedData()?.value.data ?? []) as string[];

/** The hashes n8n's store keeps for `keys`. */
const hashes = (...keys: string[]) => keys.map(processedDataHash);

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;

/** Moves the shared clock to `minute` past the next full hour; returns that hour's start. */
async function nextHourAt(minute: number): Promise<number> {
	const hour = (Math.floor(shared.now() / HOUR_MS) + 1) * HOUR_MS;
	await shared.advance(hour + minute * MINUTE_MS - shared.now());
	return hour;
}

/** An order.created event as the service would sign it, for an order id of the test's choosing. */
const orderCreated = (
	orderId: number,
	id = `evt_${orderId}_${Math.random().toString(36).slice(2)}`,
) => ({
	id,
	type: 'order.created',
	createdAt: new Date(shared.now()).toISOString(),
	data: { brandId: 1, orderId },
});

test("an order.created delivery runs once; a copy starts an execution with no output; each run records its key and its hour's mark, and n8n is asked to keep History Size keys", async () => {
	const { brandId, t } = await publishedTrigger(bench);
	const hour = await nextHourAt(5);
	const record = jest.spyOn(DataDeduplicationService.getInstance(), 'checkProcessedAndRecord');
	const { order } = await bench.control.createOrder({ brandId });
	await t.waitForRuns(1);
	const [item] = t.runs[0][0];
	expect(item.json).toMatchObject({ type: 'order.created', data: { orderId: order.id } });
	await deliverWithSecret(t, item.json);
	await settle(t);
	expect(t.runs).toHaveLength(1);
	expect(t.executions.map((e) => [e.error, e.output?.[0].length])).toEqual([
		[undefined, 1],
		[undefined, 0],
	]);
	expect(t.responses.map((r) => r.status)).toEqual([200, 200]);
	// the mark is the hour of the run (UTC, ISO to the hour); the copy's run records it again
	expect(activeHourMark(hour + 5 * MINUTE_MS)).toBe(
		`hour:${new Date(hour).toISOString().slice(0, 13)}`,
	);
	expect(storedHashes(t)).toEqual(hashes(`order:${order.id}`, activeHourMark(hour)));
	const recorded = [`order:${order.id}`, activeHourMark(hour)];
	expect(record.mock.calls.map((call) => [call[0], call[1], call[3]])).toEqual([
		[recorded, 'node', { mode: 'entries', maxEntries: DEFAULT_HISTORY_SIZE }],
		[recorded, 'node', { mode: 'entries', maxEntries: DEFAULT_HISTORY_SIZE }],
	]);
});

test('an order.created is one key per order (another event id of it outputs nothing); any other event is one key per event id', async () => {
	const { brandId, t } = await publishedTrigger(bench, {
		eventTypes: ['order.created', 'order.cancelled'],
	});
	const { order } = await bench.control.createOrder({ brandId });
	await t.waitForRuns(1);
	await deliverWithSecret(t, orderCreated(order.id, 'evt_another_id_same_order'));
	const cancelled = (await bench.control.cancelOrder(order.id)).event;
	await t.waitForRuns(2);
	await deliverWithSecret(t, cancelled as unknown as IDataObject);
	// another cancellation event of the same order: another event, it runs
	await deliverWithSecret(t, { ...cancelled, id: 'evt_second_cancellation' } as IDataObject);
	await settle(t);
	expect(t.runs.map((run) => run[0].map((i) => [i.json.type, i.json.id]))).toEqual([
		[['order.created', expect.any(String)]],
		[['order.cancelled', cancelled.id]],
		[['order.cancelled', 'evt_second_cancellation']],
	]);
	expect(t.executions).toHaveLength(5);
});

/**
 * A proxy in front of n8n that forwards each delivery to it and loses n8n's answer: the service gets
 * a 502, or no answer at all (it gives up after its timeout). `heal` lets answers through again.
 */
async function lossyProxy(t: TriggerHarness, loses: 'bad-gateway' | 'no-answer') {
	let lossy = true;
	const held: http.ServerResponse[] = [];
	const server = http.createServer((req, res) => {
		void (async () => {
			const chunks: Buffer[] = [];
			for await (const chunk of req) chunks.push(chunk as Buffer);
			const headers = Object.fromEntries(
				Object.entries(req.headers).filter(([name]) => /^(content-type|webhook-)/.test(name)),
			) as Record<string, string>;
			const upstream = await fetch(`http://127.0.0.1:${t.listenPort}${req.url}`, {
				method: 'POST',
				headers,
				body: Buffer.concat(chunks),
			});
			const text = await upstream.text();
			if (!lossy) res.writeHead(upstream.status).end(text);
			else if (loses === 'bad-gateway') res.writeHead(502).end('Bad Gateway');
			else held.push(res);
		})();
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const port = (server.address() as AddressInfo).port;
	return {
		url: `http://127.0.0.1:${port}${new URL(t.webhookUrl).pathname}`,
		heal: () => (lossy = false),
		close: async () => {
			for (const res of held) res.destroy();
			server.closeAllConnections();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}

test("the service's retry after a 502 from a proxy whose n8n ran the event: the retry outputs nothing", async () => {
	const { brandId, t, endpoint } = await publishedTrigger(bench);
	const proxy = await lossyProxy(t, 'bad-gateway');
	try {
		await bench.control.setEndpointUrl(endpoint.id, proxy.url);
		const { deliveryIds } = await bench.control.createOrder({ brandId });
		await t.waitForRuns(1);
		await settle(t);
		proxy.heal();
		await shared.advance(60_000);
		await settle(t);
		const [delivery] = (await bench.control.deliveries(endpoint.id)).filter(
			(d) => d.id === deliveryIds[0],
		);
		expect(delivery.attemptLog.map((a) => a.statusCode)).toEqual([502, 200]);
		expect(delivery.status).toBe('Delivered');
		expect(t.executions.map((e) => e.output?.[0].length)).toEqual([1, 0]);
		expect(t.runs).toHaveLength(1);
	} finally {
		await proxy.close();
	}
});

test("the service's retry after its timeout (n8n ran the event, the answer never came): the retry outputs nothing", async () => {
	// a service that waits 300 ms for an answer, on a clock of its own shared with the trigger
	const slow = new TriggerBench({ allowHttpLoopback: true, deliveryTimeoutMs: 300 });
	await slow.start();
	const slowClock = new SharedClock(slow);
	shared.uninstall();
	slowClock.install();
	try {
		const { apiKey, brandId, userId } = await slow.user();
		const t = await slow.trigger(apiKey);
		await t.activate();
		await forgetActivationTraffic(t);
		const [endpoint] = await slow.endpointsOf(userId);
		const proxy = await lossyProxy(t, 'no-answer');
		try {
			await slow.control.setEndpointUrl(endpoint.id, proxy.url);
			const { deliveryIds } = await slow.control.createOrder({ brandId });
			await t.waitForRuns(1);
			await new Promise((r) => setTimeout(r, 400));
			proxy.heal();
			await slowClock.advance(60_000);
			await settle(t);
			const [delivery] = (await slow.control.deliveries(endpoint.id)).filter(
				(d) => d.id === deliveryIds[0],
			);
			expect(delivery.attemptLog.map((a) => [a.statusCode, a.error])).toEqual([
				[null, 'timeout'],
				[200, null],
			]);
			expect(t.executions.map((e) => e.output?.[0].length)).toEqual([1, 0]);
		} finally {
			await proxy.close();
		}
	} finally {
		slowClock.uninstall();
		await slow.close();
	}
});

test('copies that arrive at one process at the same instant: one runs (its runs take turns)', async () => {
	const { t } = await publishedTrigger(bench);
	const event = orderCreated(4242);
	await Promise.all(Array.from({ length: 6 }, async () => await deliverWithSecret(t, event)));
	await settle(t);
	expect(t.executions).toHaveLength(6);
	expect(t.runs).toHaveLength(1);
});

test('runs that wait for their turn in one process are recorded together, in one write each turn: 12 events at once, every one runs once, in fewer writes than runs', async () => {
	const { t } = await publishedTrigger(bench);
	const record = jest.spyOn(DataDeduplicationService.getInstance(), 'checkProcessedAndRecord');
	const events = Array.from({ length: 12 }, (_, i) => orderCreated(4300 + i));
	await Promise.all(events.map(async (event) => await deliverWithSecret(t, event)));
	await settle(t);
	expect(t.runs).toHaveLength(12);
	expect(record.mock.calls.length).toBeLessThan(12);
	// every key of every run reached the store, each written once
	const written = record.mock.calls.flatMap(([keys]) => keys.map(String));
	for (let i = 0; i < 12; i++) expect(written).toContain(`order:${4300 + i}`);
	expect(new Set(written.filter((k) => k.startsWith('order:'))).size).toBe(
		written.filter((k) => k.startsWith('order:')).length,
	);
});

test('two n8n processes on one database: a copy at the other process, after the first ran it, outputs nothing', async () => {
	const { apiKey, t } = await publishedTrigger(bench);
	const other = await secondProcess(t, apiKey);
	for (let i = 0; i < 5; i++) {
		const event = orderCreated(5000 + i);
		await deliverWithSecret(t, event, i % 2 === 0 ? t : other);
		await settle(t);
		await settle(other);
		await deliverWithSecret(t, event, i % 2 === 0 ? other : t);
		await settle(t);
		await settle(other);
	}
	expect(t.runs.length + other.runs.length).toBe(5);
	expect(t.executions.length + other.executions.length).toBe(10);
	expect([...t.responses, ...other.responses].every((r) => r.status === 200)).toBe(true);
});

test("two n8n processes on one database, copies at both at the same instant: n8n's store has no lock, so what holds is counted (each event runs once or twice, and is recorded)", async () => {
	const { apiKey, t } = await publishedTrigger(bench);
	const other = await secondProcess(t, apiKey);
	const events = Array.from({ length: 10 }, (_, i) => orderCreated(6000 + i));
	let twice = 0;
	const answered = () => [...t.responses, ...other.responses].filter((r) => r.status === 200);
	for (const event of events) {
		const before = t.runs.length + other.runs.length;
		await Promise.all([deliverWithSecret(t, event, t), deliverWithSecret(t, event, other)]);
		await settle(t);
		await settle(other);
		const ran = t.runs.length + other.runs.length - before;
		expect(ran).toBeGreaterThanOrEqual(1);
		expect(ran).toBeLessThanOrEqual(2);
		if (ran === 2) twice++;
	}
	// both processes wrote the same key: a later copy at either outputs nothing
	const runs = t.runs.length + other.runs.length;
	for (const event of events) await deliverWithSecret(t, event, other);
	await settle(other);
	expect(t.runs.length + other.runs.length).toBe(runs);
	expect(answered()).toHaveLength(3 * events.length);
	process.stdout.write(
		`once.test: ${twice} of ${events.length} events delivered to two processes at the same instant ran twice\n`,
	);
});

test(`History Size: a copy is recognised while fewer than History Size keys came after it (${MIN_HISTORY_SIZE} here), each hour's mark one of them, and runs again after`, async () => {
	const { brandId, t } = await publishedTrigger(bench, {
		options: { historySize: MIN_HISTORY_SIZE },
	});
	const h0 = await nextHourAt(5);
	await t.startTrigger();
	const first = (await bench.control.createOrder({ brandId })).order.id;
	await t.waitForRuns(1);
	const copy = t.runs[0][0][0].json;
	expect(storedHashes(t)).toEqual(hashes(`order:${first}`, activeHourMark(h0)));
	await t.stopTrigger();
	// 98 orders more, which the check at the next start (in the same hour) records in one run: with
	// the hour's mark, 100 keys
	await bench.control.generateOrders({ count: MIN_HISTORY_SIZE - 2, brandId });
	await shared.advance(MINUTE_MS);
	await t.startTrigger('init');
	await settle(t);
	expect(caughtUp(t)).toHaveLength(MIN_HISTORY_SIZE - 2);
	expect(storedHashes(t)).toHaveLength(MIN_HISTORY_SIZE);
	expect(storedHashes(t).slice(0, 2)).toEqual(hashes(`order:${first}`, activeHourMark(h0)));
	await deliverWithSecret(t, copy);
	await settle(t);
	expect(t.runs).toHaveLength(2);

	// the 100th key after it: the oldest is dropped, and its copy runs again (its key goes in again,
	// and pushes out the next oldest, the hour's mark)
	await deliverWithSecret(t, orderCreated(7777));
	await settle(t);
	expect(storedHashes(t)).toHaveLength(MIN_HISTORY_SIZE);
	expect(storedHashes(t)).not.toContain(processedDataHash(`order:${first}`));
	await deliverWithSecret(t, copy);
	await settle(t);
	expect(t.runs).toHaveLength(4);
	expect(t.runs[3][0][0].json).toMatchObject({ data: { orderId: first } });
	expect(storedHashes(t)).not.toContain(processedDataHash(activeHourMark(h0)));
	expect(storedHashes(t).slice(-2)).toEqual(hashes('order:7777', `order:${first}`));

	// in the next hour, a run records two new keys (its event and the hour's mark): two oldest go
	const oldest = storedHashes(t).slice(0, 3);
	await shared.advance(HOUR_MS);
	await deliverWithSecret(t, orderCreated(7778));
	await settle(t);
	expect(storedHashes(t)).toHaveLength(MIN_HISTORY_SIZE);
	expect(storedHashes(t)[0]).toBe(oldest[2]);
	expect(storedHashes(t)).not.toContain(oldest[1]);
	expect(storedHashes(t).slice(-2)).toEqual(hashes('order:7778', activeHourMark(h0 + HOUR_MS)));
});

test("the check's look-up of the hour and gap marks leaves no probe mark behind and pushes no key out: the row after the check is the row before it and the check's own hour mark", async () => {
	const { brandId, t } = await publishedTrigger(bench, {
		options: { historySize: MIN_HISTORY_SIZE },
	});
	const h0 = await nextHourAt(5);
	await t.startTrigger();
	await t.stopTrigger();
	// 97 orders no delivery brought, run by a check in hour 0, and one delivered: 99 keys
	const { firstId } = await bench.control.generateOrders({ count: MIN_HISTORY_SIZE - 3, brandId });
	await shared.advance(5 * MINUTE_MS);
	await t.startTrigger('init');
	await settle(t);
	const delivered = (await bench.control.createOrder({ brandId })).order.id;
	await t.waitForRuns(2);
	await settle(t);
	await t.stopTrigger();
	const before = storedHashes(t);
	expect(before).toHaveLength(MIN_HISTORY_SIZE - 1);
	expect(before.slice(-2)).toEqual(hashes(activeHourMark(h0), `order:${delivered}`));

	// the check in hour 2 looks, in one call, at the hour and gap marks of its own hour and the 48
	// before it (49 hour marks newest first, then 49 gap marks): one found (hour 0), 97 not there
	const record = jest.spyOn(DataDeduplicationService.getInstance(), 'checkProcessedAndRecord');
	const remove = jest.spyOn(DataDeduplicationService.getInstance(), 'removeProcessed');
	await shared.advance(2 * HOUR_MS);
	await t.startTrigger('init');
	await settle(t);
	const check = t.executions.at(-1)!;
	expect(check.source).toBe('trigger');
	expect(check.output).toEqual([[]]);
	const h2 = h0 + 2 * HOUR_MS;
	const hours = Array.from({ length: 49 }, (_, back) => h2 - back * HOUR_MS);
	const probes = [...hours.map(activeHourMark), ...hours.map(gapMark)];
	expect(probes).toHaveLength(98);
	const lookUp = { mode: 'entries', maxEntries: MIN_HISTORY_SIZE + 98 };
	// the look-up, then the run's own record (the 98 orders it read again, all there, and its hour
	// mark): no gap mark was found, and none is recorded
	expect(record.mock.calls).toHaveLength(2);
	expect(record.mock.calls[0].slice(0, 2)).toEqual([probes, 'node']);
	expect(record.mock.calls[0][3]).toEqual(lookUp);
	const generated = Array.from({ length: MIN_HISTORY_SIZE - 3 }, (_, i) => `order:${firstId + i}`);
	expect(record.mock.calls[1].slice(0, 2)).toEqual([
		[...generated, `order:${delivered}`, activeHourMark(h2)],
		'node',
	]);
	expect(record.mock.calls[1][3]).toEqual({ mode: 'entries', maxEntries: MIN_HISTORY_SIZE });
	// one removal: the 97 probes not found, in the same turn and with the same options
	expect(remove.mock.calls).toHaveLength(1);
	expect(remove.mock.calls[0].slice(0, 2)).toEqual([
		probes.filter((mark) => mark !== activeHourMark(h0)),
		'node',
	]);
	expect(remove.mock.calls[0][3]).toEqual(lookUp);
	expect(storedHashes(t)).toEqual([...before, ...hashes(activeHourMark(h2))]);
});

test('when the store throws, the event runs marked with storageWarning (a copy of it may run again)', async () => {
	const { t } = await publishedTrigger(bench);
	jest
		.spyOn(t.database, 'findProcessedData')
		.mockRejectedValueOnce(new Error('SQLITE_BUSY: database is locked'));
	const event = orderCreated(8080);
	await deliverWithSecret(t, event);
	await settle(t);
	expect(t.runs).toHaveLength(1);
	const [item] = t.runs[0][0];
	expect(item.json).toMatchObject({ id: event.id, data: { orderId: 8080 } });
	expect(String(item.json.storageWarning)).toMatch(/SQLITE_BUSY: database is locked/);
	expect(t.processedData()).toBeUndefined();
	// the store works again: the copy is the first the store sees, and runs, without the warning
	await deliverWithSecret(t, event);
	await settle(t);
	expect(t.runs).toHaveLength(2);
	expect(t.runs[1][0][0].json.storageWarning).toBeUndefined();
});

test('the check runs the orders no delivery brought, once; their late deliveries and redeliveries output nothing', async () => {
	const { brandId, t, endpoint } = await publishedTrigger(bench);
	await t.startTrigger();
	await settle(t);
	expect(t.executions).toHaveLength(0);
	await t.stopTrigger();
	await bench.control.setEndpointUrl(endpoint.id, 'http://127.0.0.1:1/n8n-is-down');
	const missed = [
		(await bench.control.createOrder({ brandId })).order.id,
		(await bench.control.createOrder({ brandId })).order.id,
	];
	await bench.control.setEndpointUrl(endpoint.id, t.webhookUrl);
	await t.startTrigger('init');
	await settle(t);
	expect(caughtUp(t)).toEqual(missed);
	await shared.advance(2 * 60_000);
	await settle(t);
	for (const delivery of await bench.control.deliveries(endpoint.id))
		if (delivery.event.type === 'order.created') await bench.control.redeliver(delivery.id);
	await settle(t);
	expect(caughtUp(t)).toEqual(missed);
	expect(t.runs).toHaveLength(1);
	// the check, two late deliveries, two redeliveries
	expect(t.executions).toHaveLength(5);
});

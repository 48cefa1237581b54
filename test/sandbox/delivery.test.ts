import { Webhook } from 'standardwebhooks';
import type { SandboxHandle } from './index';
import { call, get, type Receiver, startReceiver, waitFor, withSandbox } from './testkit';

let sb: SandboxHandle;
let rx: Receiver;
beforeEach(async () => {
	sb = await withSandbox({ allowHttpLoopback: true, quota: 10_000 });
	rx = await startReceiver(200);
});
afterEach(async () => {
	await sb.close();
	await rx.close();
});

const MINUTE = 60;
const HOUR = 3600;

async function endpoint(
	eventTypes = [
		'order.created',
		'order.cancelled',
		'order.returned',
		'brand_health.band_entered',
		'brand_health.band_exited',
	],
	key?: string,
) {
	const r = await call(sb, 'POST', '/v1/webhook-endpoints', {
		key,
		body: { url: rx.url, eventTypes },
	});
	expect(r.status).toBe(201);
	return { id: r.body.webhookEndpoint.id as number, secret: r.body.secret as string };
}

function verify(secret: string, req: { headers: Record<string, unknown>; body: string }) {
	return new Webhook(secret).verify(req.body, req.headers as Record<string, string>);
}

describe('events and the delivery request (parts 2.3, 6)', () => {
	test('an order created by the control API is delivered, signed, with the 6.2 headers', async () => {
		const { id, secret } = await endpoint();
		const { order, event } = await sb.control.createOrder({ brandId: 1 });
		const [req] = await waitFor(() => rx.received.length === 1 && rx.received);
		expect(req.headers['content-type']).toBe('application/json');
		expect(req.headers['user-agent']).toMatch(/\/1$/);
		expect(req.headers['webhook-id']).toBe(event.id);
		expect(Math.abs(Number(req.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(5);
		expect(req.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
		const envelope = JSON.parse(req.body);
		expect(envelope).toEqual({
			id: event.id,
			type: 'order.created',
			createdAt: expect.any(String),
			data: { brandId: 1, orderId: order.id },
		});
		expect(verify(secret, req)).toEqual(envelope);
		expect(() => verify(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, req)).toThrow();

		await waitFor(async () => (await sb.control.deliveries())[0]?.status === 'Delivered');
		const listed = await get(sb, `/v1/webhook-endpoints/${id}/deliveries`);
		expect(listed.body.deliveries[0]).toMatchObject({
			eventId: event.id,
			eventType: 'order.created',
			status: 'Delivered',
			attempts: 1,
			responseStatusCode: 200,
		});
	});

	test('cancel, return and band changes fire their events; subscriptions filter', async () => {
		const { secret } = await endpoint([
			'order.cancelled',
			'order.returned',
			'brand_health.band_entered',
			'brand_health.band_exited',
		]);
		const orders = await sb.control.state<{ id: number; brandId: number; status: string }>(
			'orders',
		);
		const target = orders.find((o) => o.status === 'Created' && o.brandId === 2)!;
		await sb.control.createOrder({ brandId: 1 }); // not subscribed
		await sb.control.cancelOrder(target.id);
		await sb.control.returnOrder(target.id);
		const health = (await get(sb, '/v1/brand-health?brandId=3')).body;
		const dim = health.dimensions[0];
		const newBand = dim.band === 'Critical' ? 'Good' : 'Critical';
		await sb.control.setBand(3, { dimension: dim.dimension, band: newBand });
		await waitFor(() => rx.received.length === 4);
		const events = rx.received
			.map((r) => JSON.parse(r.body))
			.sort((a, b) => a.type.localeCompare(b.type));
		expect(events.map((e) => [e.type, e.data])).toEqual([
			['brand_health.band_entered', { brandId: 3, dimension: dim.dimension, band: newBand }],
			['brand_health.band_exited', { brandId: 3, dimension: dim.dimension, band: dim.band }],
			['order.cancelled', { brandId: 2, orderId: target.id }],
			['order.returned', { brandId: 2, orderId: target.id }],
		]);
		for (const r of rx.received) expect(verify(secret, r)).toBeTruthy();
		expect((await get(sb, `/v1/orders/${target.id}`)).body.status).toBe('Returned');
		expect((await get(sb, '/v1/brand-health?brandId=3')).body.dimensions[0].band).toBe(newBand);
	});

	test('scope and permission of the owner are checked when the event happens', async () => {
		const narrow = await sb.control.createUser({ brandIds: [1], permissions: ['orders.read'] });
		const noPerm = await sb.control.createUser({
			brandIds: [1, 2],
			permissions: ['products.read'],
		});
		const a = await endpoint(['order.created', 'brand_health.band_entered'], narrow.apiKey);
		await endpoint(['order.created'], noPerm.apiKey);
		await sb.control.createOrder({ brandId: 2 }); // outside narrow's scope, noPerm lacks orders.read
		await sb.control.createOrder({ brandId: 1 });
		await sb.control.setBand(1, { dimension: 'ListingQuality', band: 'Critical' });
		await sb.control.setBand(1, { dimension: 'ListingQuality', band: 'Excellent' });
		await waitFor(() => rx.received.length >= 1);
		await new Promise((r) => setTimeout(r, 150));
		expect(rx.received.map((r) => JSON.parse(r.body).data)).toEqual([
			{ brandId: 1, orderId: expect.any(Number) },
		]);
		// the scope changes: later events follow it, earlier ones are not re-evaluated
		await sb.control.updateUser(narrow.userId, { brandIds: [2] });
		await sb.control.createOrder({ brandId: 1 });
		await sb.control.createOrder({ brandId: 2 });
		await waitFor(() => rx.received.length === 2);
		expect(JSON.parse(rx.received[1].body).data.brandId).toBe(2);
		expect((await sb.control.deliveries(a.id)).length).toBe(2);
	});

	test('events from the control API: arbitrary types, optionally forced to endpoints', async () => {
		const { id } = await endpoint(['order.created']);
		await sb.control.emitEvent({ type: 'order.created', data: { brandId: 6, orderId: 1 } }); // outside scope: not delivered
		const forced = await sb.control.emitEvent({
			type: 'purchase_order.updated',
			data: { brandId: 1, purchaseOrderId: 7001 },
			endpointIds: [id],
		});
		expect(forced.deliveryIds).toHaveLength(1);
		await waitFor(() => rx.received.length === 1);
		expect(JSON.parse(rx.received[0].body).type).toBe('purchase_order.updated');
	});
});

describe('retries on the 6.4 schedule (virtual clock)', () => {
	test('attempts at exactly +1 m, 5 m, 30 m, 2 h, 5 h, 10 h, 24 h, then Failed', async () => {
		rx.respondWith(503);
		const { id, secret } = await endpoint(['order.created']);
		await sb.control.createOrder({ brandId: 1 });
		await waitFor(() => rx.received.length === 1);
		const advanced = await sb.control.advanceClock(2 * 24 * HOUR);
		expect(advanced.attempts).toHaveLength(7);
		const [delivery] = await sb.control.deliveries(id);
		expect(delivery.status).toBe('Failed');
		expect(delivery.failureReason).toBe('AttemptsExhausted');
		expect(delivery.attemptLog.map((a) => a.statusCode)).toEqual(Array(8).fill(503));
		const gaps = delivery.attemptLog
			.slice(1)
			.map((a, i) => (a.atMs - delivery.attemptLog[i].atMs) / 1000);
		expect(gaps).toEqual([
			1 * MINUTE,
			5 * MINUTE,
			30 * MINUTE,
			2 * HOUR,
			5 * HOUR,
			10 * HOUR,
			24 * HOUR,
		]);
		// same webhook-id on every attempt, a fresh real timestamp each, each signature valid now
		expect(new Set(rx.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
		for (const r of rx.received) expect(verify(secret, r)).toBeTruthy();
		expect(rx.received).toHaveLength(8);
		// a still-young endpoint stays Enabled (no 5 days without success yet)
		expect((await get(sb, `/v1/webhook-endpoints/${id}`)).body.status).toBe('Enabled');
		const listed = (await get(sb, `/v1/webhook-endpoints/${id}/deliveries`)).body.deliveries[0];
		expect(listed).toMatchObject({ status: 'Failed', attempts: 8, responseStatusCode: 503 });
	});

	test('advancing less than the next gap makes no attempt; a 2xx on a retry ends the delivery', async () => {
		rx.respondWith(() => (rx.received.length >= 3 ? 200 : 500));
		const { id } = await endpoint(['order.created']);
		await sb.control.createOrder({ brandId: 1 });
		await waitFor(() => rx.received.length === 1);
		expect((await sb.control.advanceClock(59)).attempts).toHaveLength(0);
		expect((await sb.control.advanceClock(1)).attempts).toHaveLength(1);
		expect((await sb.control.advanceClock(5 * MINUTE)).attempts).toHaveLength(1);
		expect((await sb.control.advanceClock(48 * HOUR)).attempts).toHaveLength(0);
		const [d] = await sb.control.deliveries(id);
		expect(d.status).toBe('Delivered');
		expect(d.attemptLog.map((a) => a.statusCode)).toEqual([500, 500, 200]);
	});

	test('timeouts and connection errors are retried', async () => {
		const slow = await withSandbox({ allowHttpLoopback: true, deliveryTimeoutMs: 200 });
		const hanging = await startReceiver(200);
		hanging.respondWith(() => 200);
		try {
			const server = await import('node:http');
			const stall = server.createServer(() => undefined);
			await new Promise<void>((r) => stall.listen(0, '127.0.0.1', r));
			const port = (stall.address() as { port: number }).port;
			const ep = await call(slow, 'POST', '/v1/webhook-endpoints', {
				body: { url: `http://127.0.0.1:${port}/h`, eventTypes: ['order.created'] },
			});
			const closed = await call(slow, 'POST', '/v1/webhook-endpoints', {
				body: { url: 'http://127.0.0.1:1/h', eventTypes: ['order.created'] },
			});
			await slow.control.createOrder({ brandId: 1 });
			await waitFor(async () => (await slow.control.deliveries()).every((d) => d.attempts === 1));
			const [timedOut, refused] = [
				await slow.control.deliveries(ep.body.webhookEndpoint.id),
				await slow.control.deliveries(closed.body.webhookEndpoint.id),
			];
			expect(timedOut[0].attemptLog[0].error).toBe('timeout');
			expect(refused[0].attemptLog[0].error).toBe('ECONNREFUSED');
			expect(timedOut[0].status).toBe('Pending');
			expect((await slow.control.advanceClock(60)).attempts).toHaveLength(2);
			stall.closeAllConnections();
			stall.close();
		} finally {
			await slow.close();
			await hanging.close();
		}
	});
});

describe('disabling (3.1) and private targets (3.2)', () => {
	test('a final failure after 5 days without success disables the endpoint and fails its pending deliveries', async () => {
		rx.respondWith(500);
		const { id } = await endpoint(['order.created']);
		await sb.control.advanceClock(4 * 24 * HOUR);
		await sb.control.createOrder({ brandId: 1 });
		await waitFor(() => rx.received.length === 1);
		await sb.control.advanceClock(20 * HOUR);
		await sb.control.createOrder({ brandId: 1 }); // a second delivery, still pending when the first fails for good
		await waitFor(() => rx.received.length === 7);
		await sb.control.advanceClock(24 * HOUR);
		const ep = (await get(sb, `/v1/webhook-endpoints/${id}`)).body;
		expect(ep).toMatchObject({ status: 'Disabled', disabledReason: 'FailingDeliveries' });
		const deliveries = await sb.control.deliveries(id);
		expect(deliveries.map((d) => [d.status, d.failureReason])).toEqual([
			['Failed', 'AttemptsExhausted'],
			['Failed', 'EndpointDisabled'],
		]);
		// no more events while disabled; re-enabling does not resend them
		await sb.control.createOrder({ brandId: 1 });
		rx.respondWith(200);
		const before = rx.received.length;
		const enabled = await call(sb, 'PATCH', `/v1/webhook-endpoints/${id}`, {
			body: { status: 'Enabled' },
		});
		expect(enabled.body).toMatchObject({ status: 'Enabled', disabledReason: null });
		await sb.control.advanceClock(3 * 24 * HOUR);
		expect(rx.received.length).toBe(before);
		expect((await sb.control.deliveries(id)).length).toBe(2);
		await sb.control.createOrder({ brandId: 1 });
		await waitFor(() => rx.received.length === before + 1);
	});

	test('a recent success keeps the endpoint enabled after a final failure', async () => {
		rx.respondWith(200);
		const { id } = await endpoint(['order.created']);
		await sb.control.advanceClock(5 * 24 * HOUR);
		await sb.control.createOrder({ brandId: 1 });
		await waitFor(() => rx.received.length === 1);
		rx.respondWith(500);
		await sb.control.createOrder({ brandId: 1 });
		await waitFor(() => rx.received.length === 2);
		await sb.control.advanceClock(2 * 24 * HOUR);
		expect((await get(sb, `/v1/webhook-endpoints/${id}`)).body.status).toBe('Enabled');
		expect((await sb.control.deliveries(id))[1].status).toBe('Failed');
	});

	test('a target resolving to a private address: Failed, no request sent', async () => {
		const { id } = await endpoint(['order.created']);
		await sb.control.setEndpointUrl(id, 'https://10.1.2.3/h');
		await sb.control.createOrder({ brandId: 1 });
		const [d] = await waitFor(async () => {
			const list = await sb.control.deliveries(id);
			return list[0]?.status === 'Failed' && list;
		});
		expect(d.attempts).toBe(0);
		expect(d.failureReason).toMatch(/^PrivateAddress/);
		expect(rx.received).toHaveLength(0);
	});

	test('without allowHttpLoopback a loopback target is never contacted', async () => {
		const strict = await withSandbox();
		try {
			const ep = await call(strict, 'POST', '/v1/webhook-endpoints', {
				body: { url: 'https://93.184.216.34/h', eventTypes: ['order.created'] },
			});
			await strict.control.setEndpointUrl(ep.body.webhookEndpoint.id, rx.url);
			await strict.control.createOrder({ brandId: 1 });
			await waitFor(async () => (await strict.control.deliveries())[0]?.status === 'Failed');
			expect(rx.received).toHaveLength(0);
		} finally {
			await strict.close();
		}
	});
});

describe('secret rotation (6.5), test operation, duplicates and tampering', () => {
	test('for 24 h after rotation two signatures, each verified with its own secret; then only the new one', async () => {
		const { id, secret: oldSecret } = await endpoint(['order.created']);
		const newSecret = (await call(sb, 'POST', `/v1/webhook-endpoints/${id}/rotate-secret`)).body
			.secret as string;
		await sb.control.createOrder({ brandId: 1 });
		const [req] = await waitFor(() => rx.received.length === 1 && rx.received);
		const entries = String(req.headers['webhook-signature']).split(' ');
		expect(entries).toHaveLength(2);
		expect(entries.every((e) => e.startsWith('v1,'))).toBe(true);
		const only = (entry: string) => ({
			...req,
			headers: { ...req.headers, 'webhook-signature': entry },
		});
		expect(verify(newSecret, only(entries[0]))).toBeTruthy();
		expect(() => verify(oldSecret, only(entries[0]))).toThrow();
		expect(verify(oldSecret, only(entries[1]))).toBeTruthy();
		expect(() => verify(newSecret, only(entries[1]))).toThrow();

		await sb.control.advanceClock(24 * HOUR);
		await sb.control.createOrder({ brandId: 1 });
		const late = (await waitFor(() => rx.received.length === 2 && rx.received))[1];
		expect(String(late.headers['webhook-signature']).split(' ')).toHaveLength(1);
		expect(verify(newSecret, late)).toBeTruthy();
		expect(() => verify(oldSecret, late)).toThrow();
	});

	test('rotation works on a disabled endpoint', async () => {
		const { id } = await endpoint(['order.created']);
		await call(sb, 'PATCH', `/v1/webhook-endpoints/${id}`, { body: { status: 'Disabled' } });
		expect((await call(sb, 'POST', `/v1/webhook-endpoints/${id}/rotate-secret`)).status).toBe(200);
	});

	test('the test operation makes exactly one attempt, even when it fails', async () => {
		const { id, secret } = await endpoint(['order.created']);
		const ok = await call(sb, 'POST', `/v1/webhook-endpoints/${id}/test`);
		expect(ok.status).toBe(200);
		expect(ok.body).toMatchObject({
			eventType: 'webhook.test',
			status: 'Delivered',
			attempts: 1,
			responseStatusCode: 200,
		});
		expect(JSON.parse(rx.received[0].body)).toMatchObject({
			type: 'webhook.test',
			data: { webhookEndpointId: id },
		});
		expect(verify(secret, rx.received[0])).toBeTruthy();
		rx.respondWith(500);
		const failed = await call(sb, 'POST', `/v1/webhook-endpoints/${id}/test`);
		expect(failed.body).toMatchObject({ status: 'Failed', attempts: 1, responseStatusCode: 500 });
		await sb.control.advanceClock(3 * 24 * HOUR);
		expect(rx.received).toHaveLength(2);
		const listed = (await get(sb, `/v1/webhook-endpoints/${id}/deliveries`)).body.deliveries;
		expect(listed.map((d: { id: number }) => d.id)).toEqual([failed.body.id, ok.body.id]);
	});

	test('a timestamp skew setting makes deliveries stale for a real-clock receiver', async () => {
		const { secret } = await endpoint(['order.created']);
		await sb.control.settings({ timestampSkewSeconds: -600 });
		await sb.control.createOrder({ brandId: 1 });
		const [req] = await waitFor(() => rx.received.length === 1 && rx.received);
		expect(
			Math.abs(Number(req.headers['webhook-timestamp']) - (Date.now() / 1000 - 600)),
		).toBeLessThan(3);
		expect(() => verify(secret, req)).toThrow(/timestamp/i);
	});

	test('redeliver sends a duplicate with the same webhook-id and body', async () => {
		const { id } = await endpoint(['order.created']);
		await sb.control.createOrder({ brandId: 1 });
		await waitFor(() => rx.received.length === 1);
		const [original] = await sb.control.deliveries(id);
		const dup = await sb.control.redeliver(original.id);
		expect(dup.status).toBe('Delivered');
		expect(rx.received[1].headers['webhook-id']).toBe(rx.received[0].headers['webhook-id']);
		expect(rx.received[1].body).toBe(rx.received[0].body);
	});

	test('send: tampered body, signature or id fail verification; a skewed timestamp is sent as asked', async () => {
		const { id, secret } = await endpoint(['order.created']);
		rx.respondWith((r) => {
			try {
				verify(secret, r);
				return 204;
			} catch {
				return 401;
			}
		});
		expect((await sb.control.send(id)).statusCode).toBe(204);
		for (const tamper of ['body', 'signature', 'id'] as const)
			expect((await sb.control.send(id, { tamper })).statusCode).toBe(401);
		const stale = await sb.control.send(id, { timestampOffsetSeconds: -301 });
		expect(stale.statusCode).toBe(401);
		expect(Math.abs(stale.timestamp - (Date.now() / 1000 - 301))).toBeLessThan(3);
		expect((await sb.control.send(id, { timestampOffsetSeconds: -200 })).statusCode).toBe(204);
		const custom = await sb.control.send(id, {
			event: { id: 'evt_fixed', type: 'order.cancelled', data: { brandId: 1, orderId: 5 } },
		});
		expect(custom.webhookId).toBe('evt_fixed');
		expect(JSON.parse(rx.received[rx.received.length - 1].body)).toMatchObject({
			id: 'evt_fixed',
			type: 'order.cancelled',
		});
	});
});

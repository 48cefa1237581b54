import type { SandboxHandle } from './index';
import { call, withSandbox } from './testkit';

let sb: SandboxHandle;
beforeEach(async () => {
	sb = await withSandbox({ quota: 10_000 });
});
afterEach(() => sb.close());

const pack = (orderIds: number[], key: string | undefined, apiKey?: string) =>
	call(sb, 'POST', '/v1/fulfillment/orders/packed', {
		body: { orderIds },
		headers: key ? { 'idempotency-key': key } : {},
		key: apiKey,
	});

async function createdOrderIds(n: number): Promise<number[]> {
	const orders = await sb.control.state<{ id: number; brandId: number; status: string }>('orders');
	return orders
		.filter((o) => o.status === 'Created' && o.brandId <= 5)
		.slice(0, n)
		.map((o) => o.id);
}

describe('idempotency (4.1)', () => {
	test('a repeat with the same key, method, path and body replays the stored response', async () => {
		const [id] = await createdOrderIds(1);
		const first = await pack([id], 'k-1');
		expect(first.body.results[0]).toEqual({ orderId: id, success: true, status: 'Packed' });
		expect(first.headers.get('idempotent-replayed')).toBeNull();
		const again = await pack([id], 'k-1', undefined);
		expect(again.status).toBe(first.status);
		expect(again.text).toBe(first.text);
		expect(again.headers.get('idempotent-replayed')).toBe('true');
		expect(again.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
		expect(again.headers.get('ratelimit')).toMatch(/r=9998;/);
		// without a key the same body executes again: the order is already packed
		const noKey = await pack([id], undefined);
		expect(noKey.body.results[0].success).toBe(false);
		const log = await sb.control.requests();
		expect(log.map((r) => r.replayed)).toEqual([false, true, false]);
	});

	test('4xx responses are stored and replayed too', async () => {
		const bad = await call(sb, 'POST', '/v1/fulfillment/orders/packed', {
			body: { orderIds: 'x' },
			headers: { 'idempotency-key': 'k-4xx' },
		});
		expect(bad.status).toBe(400);
		const again = await call(sb, 'POST', '/v1/fulfillment/orders/packed', {
			body: { orderIds: 'x' },
			headers: { 'idempotency-key': 'k-4xx' },
		});
		expect(again.status).toBe(400);
		expect(again.headers.get('idempotent-replayed')).toBe('true');
		expect(again.text).toBe(bad.text);
		expect(again.body.requestId).toBe(bad.headers.get('x-request-id'));
	});

	test('the same key with a different body, path or method is 422 idempotency-key-reused', async () => {
		const [a, b] = await createdOrderIds(2);
		await pack([a], 'k-r');
		const otherBody = await pack([b], 'k-r');
		expect(otherBody.status).toBe(422);
		expect(otherBody.body.type).toBe(`${sb.baseUrl}/errors/idempotency-key-reused`);
		const otherPath = await call(sb, 'POST', '/v1/webhook-endpoints', {
			body: { orderIds: [a] },
			headers: { 'idempotency-key': 'k-r' },
		});
		expect(otherPath.status).toBe(422);
		const sameBytesOtherSpacing = await call(sb, 'POST', '/v1/fulfillment/orders/packed', {
			rawBody: `{ "orderIds": [${a}] }`,
			headers: { 'idempotency-key': 'k-r' },
		});
		expect(sameBytesOtherSpacing.status).toBe(422);
		const ep = await call(sb, 'POST', '/v1/webhook-endpoints', {
			body: { url: 'https://93.184.216.34/h', eventTypes: ['order.created'] },
		});
		await call(sb, 'DELETE', `/v1/webhook-endpoints/${ep.body.webhookEndpoint.id}`, {
			headers: { 'idempotency-key': 'k-m' },
		});
		const otherMethod = await call(
			sb,
			'PATCH',
			`/v1/webhook-endpoints/${ep.body.webhookEndpoint.id}`,
			{ headers: { 'idempotency-key': 'k-m' } },
		);
		expect(otherMethod.status).toBe(422);
	});

	test('keys are scoped to the API key that sent them', async () => {
		const [a] = await createdOrderIds(1);
		await pack([a], 'k-s');
		const other = await sb.control.createKey(1);
		const fromOther = await pack([a], 'k-s', other.apiKey);
		expect(fromOther.headers.get('idempotent-replayed')).toBeNull();
		expect(fromOther.body.results[0].success).toBe(false);
	});

	test('after a 5xx the key is released and a retry executes again', async () => {
		const [a, b] = await createdOrderIds(2);
		await sb.control.injectFault({
			route: 'markOrdersPacked',
			mode: '500',
			when: 'before',
			count: 1,
		});
		const failed = await pack([a], 'k-5');
		expect(failed.status).toBe(500);
		expect(failed.body.type).toBe(`${sb.baseUrl}/errors/internal`);
		expect((await sb.control.state<{ status: string }>('orders', a)).status).toBe('Created');
		const retry = await pack([a], 'k-5');
		expect(retry.status).toBe(200);
		expect(retry.headers.get('idempotent-replayed')).toBeNull();
		expect(retry.body.results[0].success).toBe(true);

		// a 500 after the effect: the retry runs again and sees the effect
		await sb.control.injectFault({ route: 'markOrdersPacked', mode: '500', when: 'after' });
		expect((await pack([b], 'k-6')).status).toBe(500);
		expect((await sb.control.state<{ status: string }>('orders', b)).status).toBe('Packed');
		const rerun = await pack([b], 'k-6');
		expect(rerun.headers.get('idempotent-replayed')).toBeNull();
		expect(rerun.body.results[0]).toMatchObject({ orderId: b, success: false });
	});

	test('same key while the first request still runs is 409 idempotency-in-progress', async () => {
		const [a] = await createdOrderIds(1);
		await sb.control.injectFault({
			route: 'markOrdersPacked',
			mode: 'hang',
			when: 'before',
			hangMs: 400,
		});
		const slow = pack([a], 'k-p');
		// the first request runs (hangs) once it took the fault
		while ((await sb.control.faults()).faults.length > 0) await new Promise((r) => setImmediate(r));
		const during = await pack([a], 'k-p');
		expect(during.status).toBe(409);
		expect(during.body.type).toBe(`${sb.baseUrl}/errors/idempotency-in-progress`);
		await sb.control.advanceClockMs(400);
		const first = await slow;
		expect(first.status).toBe(200);
		const after = await pack([a], 'k-p');
		expect(after.headers.get('idempotent-replayed')).toBe('true');
		expect(after.text).toBe(first.text);
	});

	test('a dropped connection after the effect: the retry with the same key replays', async () => {
		const [a] = await createdOrderIds(1);
		await sb.control.injectFault({ route: 'markOrdersPacked', mode: 'drop', when: 'after' });
		await expect(pack([a], 'k-d')).rejects.toThrow();
		const retry = await pack([a], 'k-d');
		expect(retry.headers.get('idempotent-replayed')).toBe('true');
		expect(retry.body.results[0]).toEqual({ orderId: a, success: true, status: 'Packed' });
		const log = await sb.control.requests();
		expect(log[0].dropped).toBe(true);
	});

	test('stored responses are discarded after 24 hours (virtual clock)', async () => {
		const [a] = await createdOrderIds(1);
		await pack([a], 'k-24');
		await sb.control.advanceClock(23 * 3600);
		expect((await pack([a], 'k-24')).headers.get('idempotent-replayed')).toBe('true');
		await sb.control.advanceClock(3600);
		const late = await pack([a], 'k-24');
		expect(late.headers.get('idempotent-replayed')).toBeNull();
		expect(late.body.results[0].success).toBe(false);
	});

	test('a replayed 201 create keeps status and body; 204 delete replays without a body', async () => {
		const body = { url: 'https://93.184.216.34/h', eventTypes: ['order.created'] };
		const created = await call(sb, 'POST', '/v1/webhook-endpoints', {
			body,
			headers: { 'idempotency-key': 'k-c' },
		});
		const replay = await call(sb, 'POST', '/v1/webhook-endpoints', {
			body,
			headers: { 'idempotency-key': 'k-c' },
		});
		expect(replay.status).toBe(201);
		expect(replay.body).toEqual(created.body);
		expect((await sb.control.endpoints()).length).toBe(1);
		const path = `/v1/webhook-endpoints/${created.body.webhookEndpoint.id}`;
		expect(
			(await call(sb, 'DELETE', path, { headers: { 'idempotency-key': 'k-del' } })).status,
		).toBe(204);
		const again = await call(sb, 'DELETE', path, { headers: { 'idempotency-key': 'k-del' } });
		expect(again.status).toBe(204);
		expect(again.text).toBe('');
		expect(again.headers.get('idempotent-replayed')).toBe('true');
	});
});

describe('fault injection', () => {
	test('429 before the effect carries Retry-After; hang delays; faults count down', async () => {
		const [a] = await createdOrderIds(1);
		await sb.control.injectFault({
			route: 'markOrdersPacked',
			mode: '429',
			count: 2,
			retryAfterSeconds: 7,
		});
		for (let i = 0; i < 2; i++) {
			const r = await pack([a], 'k-429');
			expect(r.status).toBe(429);
			expect(r.headers.get('retry-after')).toBe('7');
		}
		expect((await sb.control.state<{ status: string }>('orders', a)).status).toBe('Created');
		expect((await pack([a], 'k-429')).status).toBe(200);
		await sb.control.injectFault({ route: 'listBrands', mode: 'hang', hangMs: 300 });
		const started = Date.now();
		expect((await call(sb, 'GET', '/v1/brands')).status).toBe(200);
		expect(Date.now() - started).toBeGreaterThanOrEqual(280);
		await sb.control.injectFault({ route: 'listBrands', mode: 'drop' });
		expect((await sb.control.faults()).faults).toHaveLength(1);
		await sb.control.clearFaults();
		expect((await call(sb, 'GET', '/v1/brands')).status).toBe(200);
	});
});

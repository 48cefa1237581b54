import { spawn } from 'node:child_process';
import path from 'node:path';
import { startSandbox } from './index';
import { call, get, withSandbox } from './testkit';

describe('start-up and isolation (rule 13)', () => {
	test('starts in under a second; instances side by side do not share state', async () => {
		const started = Date.now();
		const a = await startSandbox();
		const elapsed = Date.now() - started;
		const b = await startSandbox({ quota: 2 });
		try {
			expect(elapsed).toBeLessThan(1000);
			expect(a.baseUrl).not.toBe(b.baseUrl);
			await a.control.generateProducts({ count: 5 });
			expect((await get(a, '/v1/products')).body.pagination.total).toBe(325);
			expect((await get(b, '/v1/products')).body.pagination.total).toBe(320);
			await get(b, '/v1/brands');
			await get(b, '/v1/brands');
			expect((await get(b, '/v1/brands')).status).toBe(429);
			expect((await get(a, '/v1/brands')).status).toBe(200);
			await a.control.advanceClock(3600);
			expect((await b.control.clock()).offsetSeconds).toBeLessThan(1);
			expect((await a.control.clock()).offsetSeconds).toBe(3600);
		} finally {
			await a.close();
			await b.close();
		}
	});

	test('the CLI prints its base URL and the demo key, warns about loopback, stops on SIGTERM', async () => {
		const root = path.resolve(__dirname, '../..');
		const child = spawn(
			process.execPath,
			[
				'-r',
				'ts-node/register/transpile-only',
				'test/sandbox/main.ts',
				'--port',
				'0',
				'--allow-http-loopback',
			],
			{ cwd: root },
		);
		let out = '';
		child.stdout.on('data', (d) => (out += d));
		try {
			const deadline = Date.now() + 15_000;
			while (!/Demo API key: \S+/.test(out) || !/WARNING/.test(out)) {
				if (Date.now() > deadline) throw new Error(`no banner: ${out}`);
				await new Promise((r) => setTimeout(r, 50));
			}
			const baseUrl = /listening on (http:\/\/\S+)/.exec(out)![1];
			const key = /Demo API key: (\S+)/.exec(out)![1];
			expect(out).toMatch(/allow-http-loopback is ON/);
			const r = await fetch(`${baseUrl}/v1/brands`, {
				headers: { authorization: `Bearer ${key}` },
			});
			expect(r.status).toBe(200);
		} finally {
			const exited = new Promise((r) => child.once('exit', r));
			child.kill('SIGTERM');
			await exited;
		}
	});
});

describe('control API', () => {
	test('request log: method, path, raw query, headers as sent, body, status, route, since', async () => {
		const sb = await withSandbox();
		try {
			await get(sb, '/v1/vendor/purchase-orders?brandIds=1&brandIds=2', {
				headers: { 'x-request-id': 'log-1' },
			});
			const body = '{"orderIds":[1001]}';
			await call(sb, 'POST', '/v1/fulfillment/orders/packed', {
				rawBody: body,
				headers: { 'idempotency-key': 'ik' },
			});
			await sb.control.clock(); // control calls are not logged
			const log = await sb.control.requests();
			expect(log).toHaveLength(2);
			expect(log[0]).toMatchObject({
				method: 'GET',
				path: '/v1/vendor/purchase-orders',
				rawQuery: 'brandIds=1&brandIds=2',
				status: 200,
				route: 'listPurchaseOrders',
				requestId: 'log-1',
				replayed: false,
			});
			expect(log[0].headers.authorization).toBe(`Bearer ${sb.demoApiKey}`);
			expect(log[1]).toMatchObject({
				method: 'POST',
				body,
				route: 'markOrdersPacked',
				status: 200,
			});
			expect(log[1].headers['idempotency-key']).toBe('ik');
			expect(await sb.control.requests(log[0].seq)).toHaveLength(1);
			await sb.control.clearRequests();
			expect(await sb.control.requests()).toHaveLength(0);
		} finally {
			await sb.close();
		}
	});

	test('reset reseeds data, clock, keys and endpoints', async () => {
		const sb = await withSandbox({ quota: 3 });
		try {
			const user = await sb.control.createUser();
			await call(sb, 'POST', '/v1/webhook-endpoints', {
				body: { url: 'https://93.184.216.34/h', eventTypes: ['order.created'] },
			});
			const order = await sb.control.createOrder({ brandId: 1 });
			await sb.control.advanceClock(100);
			await get(sb, '/v1/brands');
			await sb.control.reset();
			expect((await get(sb, '/v1/brands', { key: user.apiKey })).status).toBe(401);
			expect((await get(sb, '/v1/brands')).headers.get('ratelimit')).toMatch(/r=2;/);
			expect(await sb.control.endpoints()).toEqual([]);
			expect((await sb.control.clock()).offsetSeconds).toBe(0);
			expect((await get(sb, `/v1/orders/${order.order.id}`)).status).toBe(404);
			expect(await sb.control.requests()).toHaveLength(3);
		} finally {
			await sb.close();
		}
	});

	test('control validation errors are problems; unknown control routes 404', async () => {
		const sb = await withSandbox();
		try {
			const r = await fetch(`${sb.baseUrl}/_sandbox/faults`, {
				method: 'POST',
				body: JSON.stringify({ route: 'nope', mode: '500' }),
			});
			expect(r.status).toBe(400);
			expect((await fetch(`${sb.baseUrl}/_sandbox/nothing`)).status).toBe(404);
			await expect(sb.control.createOrder({ brandId: 99 })).rejects.toThrow(/404/);
			expect((await sb.control.state<{ id: number }>('orders', 1001)).id).toBe(1001);
		} finally {
			await sb.close();
		}
	});
});

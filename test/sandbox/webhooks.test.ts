import type { SandboxHandle } from './index';
import { call, get, withSandbox } from './testkit';

let sb: SandboxHandle;
beforeEach(async () => {
	sb = await withSandbox({ quota: 10_000 });
});
afterEach(() => sb.close());

const PUBLIC_URL = 'https://93.184.216.34/hooks/marketplace';
const create = (body: unknown, key?: string) =>
	call(sb, 'POST', '/v1/webhook-endpoints', { body, key });

describe('webhook endpoints (2.1, 4.3)', () => {
	test('create, read, list, update, rotate, delete', async () => {
		const created = await create({
			url: PUBLIC_URL,
			description: 'n8n',
			eventTypes: ['order.created', 'order.cancelled'],
		});
		expect(created.status).toBe(201);
		const { webhookEndpoint: ep, secret } = created.body;
		expect(ep).toEqual({
			id: expect.any(Number),
			url: PUBLIC_URL,
			description: 'n8n',
			eventTypes: ['order.created', 'order.cancelled'],
			status: 'Enabled',
			disabledReason: null,
			createdAt: expect.any(String),
			updatedAt: expect.any(String),
		});
		expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
		const raw = Buffer.from(secret.slice(6), 'base64');
		expect(raw.length).toBeGreaterThanOrEqual(24);
		expect(raw.length).toBeLessThanOrEqual(64);

		const read = await get(sb, `/v1/webhook-endpoints/${ep.id}`);
		expect(read.body).toEqual(ep);
		expect(read.text).not.toContain('whsec_');
		const list = await get(sb, '/v1/webhook-endpoints');
		expect(list.body).toEqual({ webhookEndpoints: [ep] });
		expect(list.text).not.toContain('whsec_');

		const updated = await call(sb, 'PATCH', `/v1/webhook-endpoints/${ep.id}`, {
			body: {
				description: 'changed',
				eventTypes: ['brand_health.band_entered'],
				status: 'Disabled',
			},
		});
		expect(updated.body).toMatchObject({
			description: 'changed',
			eventTypes: ['brand_health.band_entered'],
			status: 'Disabled',
			disabledReason: null,
		});
		expect(updated.text).not.toContain('whsec_');

		const rotated = await call(sb, 'POST', `/v1/webhook-endpoints/${ep.id}/rotate-secret`);
		expect(rotated.status).toBe(200);
		expect(rotated.body.secret).toMatch(/^whsec_/);
		expect(rotated.body.secret).not.toBe(secret);
		expect(rotated.body.webhookEndpoint.id).toBe(ep.id);
		const [stored] = await sb.control.endpoints();
		expect(stored.previousSecret).toBe(secret);
		expect(stored.secret).toBe(rotated.body.secret);

		const deliveries = await get(sb, `/v1/webhook-endpoints/${ep.id}/deliveries`);
		expect(deliveries.body).toEqual({
			deliveries: [],
			pagination: { page: 1, limit: 10, total: 0, totalPages: 0 },
		});

		expect((await call(sb, 'DELETE', `/v1/webhook-endpoints/${ep.id}`)).status).toBe(204);
		expect((await get(sb, `/v1/webhook-endpoints/${ep.id}`)).status).toBe(404);
	});

	test('private to the owning user: another user gets 404 for every operation', async () => {
		const ep = (await create({ url: PUBLIC_URL, eventTypes: ['order.created'] })).body
			.webhookEndpoint;
		const { apiKey } = await sb.control.createUser();
		const id = ep.id;
		for (const [method, path] of [
			['GET', `/v1/webhook-endpoints/${id}`],
			['PATCH', `/v1/webhook-endpoints/${id}`],
			['DELETE', `/v1/webhook-endpoints/${id}`],
			['POST', `/v1/webhook-endpoints/${id}/test`],
			['POST', `/v1/webhook-endpoints/${id}/rotate-secret`],
			['GET', `/v1/webhook-endpoints/${id}/deliveries`],
		]) {
			const r = await call(sb, method, path, {
				key: apiKey,
				body: method === 'PATCH' ? { description: 'x' } : undefined,
			});
			expect([method, path, r.status]).toEqual([method, path, 404]);
		}
		expect((await get(sb, '/v1/webhook-endpoints', { key: apiKey })).body.webhookEndpoints).toEqual(
			[],
		);
		// a second key of the owner sees it
		const second = await sb.control.createKey(1);
		expect((await get(sb, `/v1/webhook-endpoints/${id}`, { key: second.apiKey })).status).toBe(200);
	});

	test('at most 10 endpoints per user', async () => {
		for (let i = 0; i < 10; i++)
			expect(
				(await create({ url: `${PUBLIC_URL}/${i}`, eventTypes: ['order.created'] })).status,
			).toBe(201);
		const eleventh = await create({ url: `${PUBLIC_URL}/10`, eventTypes: ['order.created'] });
		expect(eleventh.status).toBe(409);
		expect(eleventh.body.type).toBe(`${sb.baseUrl}/errors/conflict`);
		expect(eleventh.body.detail).toMatch(/10/);
		const { apiKey } = await sb.control.createUser();
		expect((await create({ url: PUBLIC_URL, eventTypes: ['order.created'] }, apiKey)).status).toBe(
			201,
		);
	});

	test('url must be https and resolve only to public addresses', async () => {
		for (const url of [
			'http://93.184.216.34/h',
			'https://10.0.0.5/h',
			'https://127.0.0.1/h',
			'https://localhost/h',
			'https://169.254.169.254/latest',
			'https://[::1]/h',
			'https://[fd00::1]/h',
			'ftp://93.184.216.34/',
			'not a url',
			'https://nonexistent.invalid/h',
		]) {
			const r = await create({ url, eventTypes: ['order.created'] });
			expect([url, r.status, r.body.errors?.[0]?.pointer]).toEqual([url, 400, '/url']);
		}
		const ep = (await create({ url: PUBLIC_URL, eventTypes: ['order.created'] })).body
			.webhookEndpoint;
		const r = await call(sb, 'PATCH', `/v1/webhook-endpoints/${ep.id}`, {
			body: { url: 'https://192.168.1.1/h' },
		});
		expect(r.body.errors[0].pointer).toBe('/url');
	});

	test('with allowHttpLoopback, http loopback URLs are accepted', async () => {
		const local = await withSandbox({ allowHttpLoopback: true });
		try {
			expect(
				(
					await call(local, 'POST', '/v1/webhook-endpoints', {
						body: { url: 'http://127.0.0.1:9/h', eventTypes: ['order.created'] },
					})
				).status,
			).toBe(201);
			expect(
				(
					await call(local, 'POST', '/v1/webhook-endpoints', {
						body: { url: 'http://localhost:9/h', eventTypes: ['order.created'] },
					})
				).status,
			).toBe(201);
			expect(
				(
					await call(local, 'POST', '/v1/webhook-endpoints', {
						body: { url: 'http://10.0.0.1/h', eventTypes: ['order.created'] },
					})
				).status,
			).toBe(400);
		} finally {
			await local.close();
		}
	});

	test('body validation: required fields, types, event types, unknown fields', async () => {
		const cases: [unknown, string[]][] = [
			[{ eventTypes: ['order.created'] }, ['/url']],
			[{ url: PUBLIC_URL }, ['/eventTypes']],
			[{ url: PUBLIC_URL, eventTypes: ['webhook.test'] }, ['/eventTypes/0']],
			[{ url: PUBLIC_URL, eventTypes: ['Order.Created'] }, ['/eventTypes/0']],
			[{ url: PUBLIC_URL, eventTypes: 'order.created' }, ['/eventTypes']],
			[{ url: PUBLIC_URL, eventTypes: ['order.created'], secret: 'x' }, ['/secret']],
			[{ url: PUBLIC_URL, eventTypes: ['order.created'], description: 5 }, ['/description']],
		];
		for (const [body, expected] of cases) {
			const r = await create(body);
			expect(r.status).toBe(400);
			expect(r.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(expected);
		}
		const ep = (await create({ url: PUBLIC_URL, eventTypes: ['order.created'] })).body
			.webhookEndpoint;
		const bad = await call(sb, 'PATCH', `/v1/webhook-endpoints/${ep.id}`, {
			body: { status: 'enabled' },
		});
		expect(bad.body.errors[0].pointer).toBe('/status');
	});
});

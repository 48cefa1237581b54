/**
 * A sandbox with a state file (what `npm run dev` uses) comes back after a restart with its users,
 * keys, orders and webhook endpoints: a subscriber registered before the restart keeps receiving
 * events, signed with the same secret.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Webhook } from 'standardwebhooks';

import { startSandbox, type SandboxHandle } from './index';
import { call, startReceiver, waitFor, type Receiver } from './testkit';

let dir: string;
let receiver: Receiver;
const open: SandboxHandle[] = [];
beforeAll(async () => {
	dir = mkdtempSync(join(tmpdir(), 'sandbox-state-'));
	receiver = await startReceiver(204);
});
afterAll(async () => {
	await Promise.all(open.map(async (s) => await s.close()));
	await receiver.close();
	rmSync(dir, { recursive: true, force: true });
});

async function start(stateFile: string, port = 0): Promise<SandboxHandle> {
	const sandbox = await startSandbox({ stateFile, port, allowHttpLoopback: true });
	open.push(sandbox);
	return sandbox;
}

test('restart with the same state file: users, keys, orders and endpoints come back; events still arrive, signed with the same secret', async () => {
	const file = join(dir, 'state.json');
	const first = await start(file);
	expect(first.restored).toBe(false);
	const { apiKey } = await first.control.createUser({ brandIds: [1, 2] });
	const created = await call(first, 'POST', '/v1/webhook-endpoints', {
		key: apiKey,
		body: { url: receiver.url, eventTypes: ['order.created'] },
	});
	expect(created.status).toBe(201);
	const { webhookEndpoint, secret } = created.body as {
		webhookEndpoint: { id: number };
		secret: string;
	};
	const before = (await first.control.createOrder({ brandId: 1 })).order;
	await waitFor(() => receiver.received.length === 1);
	const port = Number(new URL(first.baseUrl).port);
	await first.close();
	open.splice(open.indexOf(first), 1);

	const second = await start(file, port);
	expect(second.restored).toBe(true);
	const endpoint = await call(second, 'GET', `/v1/webhook-endpoints/${webhookEndpoint.id}`, {
		key: apiKey,
	});
	expect(endpoint.status).toBe(200);
	const order = await call(second, 'GET', `/v1/orders/${before.id}`, { key: apiKey });
	expect(order.body).toMatchObject({ id: before.id });

	const after = (await second.control.createOrder({ brandId: 2 })).order;
	expect(after.id).toBeGreaterThan(before.id);
	await waitFor(() => receiver.received.length === 2);
	const delivery = receiver.received[1];
	const event = new Webhook(secret).verify(
		delivery.body,
		delivery.headers as Record<string, string>,
	) as { data: { orderId: number } };
	expect(event.data.orderId).toBe(after.id);
});

test('without a state file nothing is kept: a new sandbox is seeded afresh', async () => {
	const sandbox = await startSandbox({});
	open.push(sandbox);
	expect(sandbox.restored).toBe(false);
	expect(await sandbox.control.endpoints()).toEqual([]);
});

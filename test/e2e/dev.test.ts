/**
 * `npm run dev` survives its own restart: the published example trigger workflow still receives
 * events after the dev command was stopped and started again (the sandbox keeps its data in the
 * dev folder), and after the sandbox lost its data (the dev command publishes trigger workflows
 * again). Runs test/e2e/dev.ts as .ci/dev does, three times on one temporary folder.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { SandboxControl } from '../sandbox';
import { waitFor } from './kit';
import { defaultNodeBin, freePort } from './n8n';

const repoRoot = resolve(__dirname, '..', '..');
let folder: string;
let ports: { n8n: number; sandbox: number };
let running: ChildProcess | undefined;
let output = '';

beforeAll(async () => {
	folder = mkdtempSync(join(tmpdir(), 'mkt-dev-'));
	ports = { n8n: await freePort(), sandbox: await freePort() };
});
afterAll(async () => {
	await stopDev();
	rmSync(folder, { recursive: true, force: true });
});

/** Starts the dev command and resolves when it printed that it is ready. */
async function startDev(): Promise<string> {
	output = '';
	const child = spawn(
		defaultNodeBin,
		['-r', 'ts-node/register/transpile-only', 'test/e2e/dev.ts', '--port', String(ports.n8n), '--sandbox-port', String(ports.sandbox), '--folder', folder],
		{ cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TS_NODE_TRANSPILE_ONLY: '1' } },
	);
	running = child;
	child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
	child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
	await waitFor('the dev command to be ready', async () => (/\[dev\] ready in/.test(output) ? true : child.exitCode === null ? undefined : Promise.reject(new Error(output))), 180_000, 250);
	return output;
}

/** Ctrl-C, as a person stops it. */
async function stopDev(): Promise<void> {
	const child = running;
	running = undefined;
	if (!child || child.exitCode !== null) return;
	const exited = new Promise((r) => child.once('exit', r));
	child.kill('SIGINT');
	await exited;
}

/** A new order makes the sandbox send order.created to every subscribed endpoint; true when n8n accepted it. */
async function orderReachesN8n(): Promise<boolean> {
	const control = new SandboxControl(`http://127.0.0.1:${ports.sandbox}`);
	const { deliveryIds } = await control.createOrder({ brandId: 1 });
	if (deliveryIds.length === 0) return false;
	const delivered = await waitFor('the delivery to finish', async () => {
		const all = await control.deliveries();
		const mine = all.filter((d) => deliveryIds.includes(d.id));
		return mine.every((d) => d.status !== 'Pending') ? mine : undefined;
	}, 30_000);
	return delivered.every((d) => d.status === 'Delivered');
}

test('first start publishes the example trigger workflow; an order reaches n8n', async () => {
	const log = await startDev();
	expect(log).toMatch(/fresh demo data/);
	expect(log).toMatch(/active: +"Marketplace: order arrives -> read it"/);
	expect(await orderReachesN8n()).toBe(true);
	await stopDev();
	expect(existsSync(join(folder, 'sandbox-state.json'))).toBe(true);
});

test('after a restart the sandbox has its data back and the published workflow still receives', async () => {
	const log = await startDev();
	expect(log).toMatch(/its data from the last run/);
	expect(log).not.toMatch(/published .* again/);
	expect(await orderReachesN8n()).toBe(true);
	await stopDev();
});

test('a sandbox without its data: the dev command publishes the trigger workflow again, and it receives', async () => {
	rmSync(join(folder, 'sandbox-state.json'));
	const log = await startDev();
	expect(log).toMatch(/fresh demo data/);
	expect(log).toMatch(/published "Marketplace: order arrives -> read it" again/);
	expect(await orderReachesN8n()).toBe(true);
	await stopDev();
});

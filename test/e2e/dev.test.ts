/**
 * `npm run dev` survives its own restart: the published example trigger workflow still receives
 * events after the dev command was stopped and started again (the sandbox keeps its data in the
 * dev folder), and after the sandbox lost its data (the dev command publishes trigger workflows
 * again). The mail inbox it prints shows the mail example (b) sends when run from the editor, and
 * keeps it across the restart. Runs test/e2e/dev.ts as .ci/dev does, three times on one temporary folder.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { SandboxControl } from '../sandbox';
import { EVENING_PACK_WORKFLOW } from './dev';
import { waitFor } from './kit';
import type { CaughtMail } from './mailCatcher';
import { defaultNodeBin, freePort, OWNER } from './n8n';

const repoRoot = resolve(__dirname, '..', '..');
let folder: string;
let ports: { n8n: number; sandbox: number; smtp: number; inbox: number };
let running: ChildProcess | undefined;
let output = '';

beforeAll(async () => {
	folder = mkdtempSync(join(tmpdir(), 'mkt-dev-'));
	ports = {
		n8n: await freePort(),
		sandbox: await freePort(),
		smtp: await freePort(),
		inbox: await freePort(),
	};
});
afterAll(async () => {
	await stopDev();
	rmSync(folder, { recursive: true, force: true });
});

/** Starts the dev command and resolves when it printed that it is ready. */
async function startDev(): Promise<string> {
	// A test that failed before its stopDev() leaves its dev command running, holding the ports.
	await stopDev();
	output = '';
	const child = spawn(
		defaultNodeBin,
		[
			'-r',
			'ts-node/register/transpile-only',
			'test/e2e/dev.ts',
			'--port',
			String(ports.n8n),
			'--sandbox-port',
			String(ports.sandbox),
			'--smtp-port',
			String(ports.smtp),
			'--inbox-port',
			String(ports.inbox),
			'--folder',
			folder,
		],
		{
			cwd: repoRoot,
			stdio: ['ignore', 'pipe', 'pipe'],
			env: { ...process.env, TS_NODE_TRANSPILE_ONLY: '1' },
		},
	);
	running = child;
	child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
	child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
	await waitFor(
		'the dev command to be ready',
		async () =>
			/\[dev\] ready in/.test(output)
				? true
				: child.exitCode === null
					? undefined
					: Promise.reject(new Error(output)),
		180_000,
		250,
	);
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
	const delivered = await waitFor(
		'the delivery to finish',
		async () => {
			const all = await control.deliveries();
			const mine = all.filter((d) => deliveryIds.includes(d.id));
			return mine.every((d) => d.status !== 'Pending') ? mine : undefined;
		},
		30_000,
	);
	return delivered.every((d) => d.status === 'Delivered');
}

/** The inbox address the dev command printed beside the editor's. */
const printedInbox = (log: string) => /mail inbox: +(http:\/\/127\.0\.0\.1:\d+)\//.exec(log)?.[1];
const inboxMails = async (inbox: string) =>
	(await (await fetch(`${inbox}/api/email`)).json()) as CaughtMail[];
const isEveningReport = (m: CaughtMail) =>
	m.to.some((t) => t.address === 'warehouse@example.com') && /^Evening packing /.test(m.subject);

/** "Execute workflow" on example (b) as the editor sends it: the owner's session, then a manual run from its trigger. */
async function runEveningReport(): Promise<void> {
	const base = `http://127.0.0.1:${ports.n8n}`;
	const headers = { 'content-type': 'application/json', 'browser-id': 'dev-test' };
	const login = await fetch(`${base}/rest/login`, {
		method: 'POST',
		headers,
		body: JSON.stringify({ emailOrLdapLoginId: OWNER.email, password: OWNER.password }),
	});
	expect(login.status).toBe(200);
	const cookie = login.headers
		.getSetCookie()
		.map((c) => c.split(';')[0])
		.find((c) => c.startsWith('n8n-auth='));
	const run = await fetch(`${base}/rest/workflows/${EVENING_PACK_WORKFLOW.id}/run`, {
		method: 'POST',
		headers: { ...headers, cookie: cookie ?? '' },
		body: JSON.stringify({ triggerToStartFrom: { name: EVENING_PACK_WORKFLOW.startNode } }),
	});
	expect(run.status).toBe(200);
}

test('first start publishes the example trigger workflow; an order reaches n8n; example (b) mails the warehouse, shown in the printed inbox', async () => {
	const log = await startDev();
	expect(log).toMatch(/fresh demo data/);
	expect(log).toMatch(/active: +"Marketplace: order arrives -> read it"/);
	expect(await orderReachesN8n()).toBe(true);

	const inbox = printedInbox(log);
	expect(inbox).toBe(`http://127.0.0.1:${ports.inbox}`);
	// The web inbox itself (MailDev's page), not only its API.
	const page = await fetch(`${inbox}/`, { headers: { accept: 'text/html' } });
	expect(await page.text()).toMatch(/<title>MailDev<\/title>/);
	expect(await inboxMails(inbox!)).toEqual([]);
	await runEveningReport();
	const [mail] = await waitFor(
		'the evening report in the inbox',
		async () => {
			const mails = (await inboxMails(inbox!)).filter(isEveningReport);
			return mails.length ? mails : undefined;
		},
		60_000,
	);
	expect(mail.subject).toMatch(
		/^Evening packing \d{4}-\d{2}-\d{2}: (\d+) of \1 orders packed, 0 failed$/,
	);
	expect(mail.text).toMatch(/Marked packed: +\d+/);
	await stopDev();
	expect(existsSync(join(folder, 'sandbox-state.json'))).toBe(true);
});

test('after a restart the sandbox has its data back, the published workflow still receives, the inbox keeps its mail', async () => {
	const log = await startDev();
	expect(log).toMatch(/its data from the last run/);
	expect(log).not.toMatch(/published .* again/);
	expect(await orderReachesN8n()).toBe(true);
	expect((await inboxMails(printedInbox(log)!)).filter(isEveningReport)).toHaveLength(1);
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

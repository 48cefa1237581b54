/**
 * The README's walkthrough, "new order -> mark it packed -> e-mail me", as the shipped example
 * workflow test/e2e/workflows/pack-on-order.json runs it in a real n8n 2.41.1: imported with n8n's
 * CLI (as `npm run dev` and marketplace.test.ts do), published, then an order made in the sandbox
 * must be marked packed at the service (one mark-packed request naming that order, with an
 * Idempotency-Key) and the mail must reach the SMTP catcher.
 *
 *   .ci/with-node24 npm run build && .ci/with-node24 npx jest -c test/e2e/jest.config.js test/e2e/packOnOrder.test.ts
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { startSandbox, type SandboxHandle } from '../sandbox';
import { DEMO_CREDENTIAL, MAIL_CREDENTIAL } from './dev';
import { executionsOf, nodeOutput, sleep, Timings, waitFor } from './kit';
import { smtpCredentialData, startMailCatcher, type MailCatcherHandle } from './mailCatcher';
import { startN8n, type N8nHandle, type PublicApi } from './n8n';

const repoRoot = resolve(__dirname, '..', '..');
const workflowFile = join(__dirname, 'workflows', 'pack-on-order.json');
const workflow = JSON.parse(readFileSync(workflowFile, 'utf8')) as {
	id: string;
	nodes: Array<{
		name: string;
		type: string;
		webhookId?: string;
		parameters: Record<string, unknown>;
	}>;
};
const trigger = workflow.nodes.find((n) => n.type.endsWith('.marketplaceTrigger'))!;
const timings = new Timings();
let sandbox: SandboxHandle;
let mail: MailCatcherHandle;
let n8n: N8nHandle;
let api: PublicApi;

const webhookRuns = async () =>
	(await executionsOf(api, workflow.id)).filter((e) => e.mode === 'webhook');

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0, host: '127.0.0.1', allowHttpLoopback: true });
	mail = await startMailCatcher();
	n8n = await timings.time('n8n boot', () => startN8n({ packageRoot: repoRoot }));
	await n8n.setupOwner();
	await n8n.login();
	await timings.time(
		'CLI import:credentials and import:workflow (test/e2e/workflows)',
		async () => {
			await n8n.importCredential([
				{ ...DEMO_CREDENTIAL, data: { baseUrl: sandbox.baseUrl, apiKey: sandbox.demoApiKey } },
				{ ...MAIL_CREDENTIAL, data: smtpCredentialData(mail) },
			]);
			await n8n.importWorkflows(join(__dirname, 'workflows'));
		},
	);
	api = await n8n.publicApi();
}, 240_000);

afterAll(async () => {
	if (n8n) {
		mkdirSync(join(repoRoot, 'tmp'), { recursive: true });
		writeFileSync(join(repoRoot, 'tmp', 'e2e-pack-on-order-n8n.log'), n8n.logs());
	}
	await Promise.all([n8n?.stop(), sandbox?.close(), mail?.close()]);
	console.log(`[pack-on-order] timings:\n${timings.report()}`);
});

test("the example is the README's story: Order Created trigger -> Mark Orders Packed with {{ $json.data.orderId }} -> Send Email", () => {
	expect(workflow.nodes.map((n) => [n.name, n.type])).toEqual([
		['New Order', 'n8n-nodes-marketplace-management.marketplaceTrigger'],
		['Mark Order Packed', 'n8n-nodes-marketplace-management.marketplace'],
		['Email Me', 'n8n-nodes-base.emailSend'],
		['About this workflow', 'n8n-nodes-base.stickyNote'],
	]);
	expect(trigger.parameters.eventTypes).toEqual(['order.created']);
	expect(workflow.nodes[1].parameters).toMatchObject({
		resource: 'fulfillment',
		operation: 'markPacked',
		orderIds: '={{ $json.data.orderId }}',
	});
});

test('published, a new order in the sandbox is marked packed at the service and the mail arrives', async () => {
	await timings.time('publish (activate + publication status)', async () => {
		await api.activateWorkflow(workflow.id);
		await n8n.waitForActivation(workflow.id);
	});
	const url = `${n8n.baseUrl}/webhook/${trigger.webhookId}/webhook`;
	expect((await sandbox.control.endpoints()).filter((e) => e.url === url)).toMatchObject([
		{ status: 'Enabled', eventTypes: ['order.created'] },
	]);

	const since = (await sandbox.control.requests()).at(-1)?.seq ?? 0;
	const started = Date.now();
	const { order, event } = await sandbox.control.createOrder({ brandId: 1 });
	expect((order as { status: string }).status).toBe('Created');
	const [mailed] = await mail.waitForMails(1, (m) => m.subject.includes(`Order ${order.id}`));
	timings.add('order created -> mail caught', Date.now() - started);

	expect(mailed.subject).toBe(`Order ${order.id} marked packed`);
	expect(mailed.to.map((t) => t.address)).toEqual(['me@example.com']);
	expect(mailed.text).toContain(`order ${order.id} is now Packed.`);
	expect(mailed.text).toContain(`Event: ${event.id}`);
	expect(
		(await sandbox.control.state<{ status: string }>('orders', order.id as number)).status,
	).toBe('Packed');

	const packRequests = (await sandbox.control.requests(since)).filter(
		(r) => r.route === 'markOrdersPacked',
	);
	expect(packRequests).toHaveLength(1);
	expect(JSON.parse(packRequests[0].body)).toEqual({ orderIds: [order.id] });
	expect(packRequests[0].headers['idempotency-key']).toBeTruthy();

	const [run] = await waitFor('the webhook execution', async () => {
		const runs = await webhookRuns();
		return runs.length ? runs : undefined;
	});
	expect(run.status).toBe('success');
	expect(nodeOutput(run, 'Mark Order Packed')).toMatchObject([
		{ orderId: order.id, success: true, status: 'Packed' },
	]);
	// one order, one run, one mail
	await sleep(1000);
	expect(await webhookRuns()).toHaveLength(1);
	expect((await mail.mails()).filter((m) => m.subject.includes(`Order ${order.id}`))).toHaveLength(
		1,
	);
}, 90_000);

test('an order the service will not mark packed (cancelled meanwhile) is mailed as not packed, with its reason', async () => {
	// The sandbox holds the mark-packed request until the customer has cancelled the order.
	await sandbox.control.injectFault({
		route: 'markOrdersPacked',
		mode: 'hang',
		when: 'before',
		count: 1,
		hangMs: 20_000,
	});
	const { order } = await sandbox.control.createOrder({ brandId: 2 });
	await waitFor('the mark-packed request to be held', async () =>
		(await sandbox.control.faults()).faults.length === 0 ? true : undefined,
	);
	await sandbox.control.cancelOrder(order.id as number);
	await sandbox.control.advanceClockMs(20_000);
	const [mailed] = await mail.waitForMails(1, (m) => m.subject.includes(`Order ${order.id}`));
	expect(mailed.subject).toBe(`Order ${order.id} could not be marked packed`);
	expect(mailed.text).toContain(
		`order ${order.id} could not be marked packed: order ${order.id} is Cancelled, only Created orders can be packed`,
	);
	expect(
		(await sandbox.control.state<{ status: string }>('orders', order.id as number)).status,
	).toBe('Cancelled');
	const runs = await waitFor('the second webhook execution', async () => {
		const list = await webhookRuns();
		return list.length === 2 ? list : undefined;
	});
	expect(runs[1].status).toBe('success');
	expect(nodeOutput(runs[1], 'Mark Order Packed')).toMatchObject([
		{ orderId: order.id, success: false, error: { detail: expect.stringContaining('Cancelled') } },
	]);
}, 60_000);

/**
 * End-to-end: this package loaded into a real n8n 2.41.1 server (test/e2e/n8n.ts) against the
 * sandbox service (test/sandbox) on loopback. One n8n server for the whole file (plus one restart
 * and one `n8n execute` CLI run); the example workflows of test/e2e/workflows are imported with
 * n8n's own CLI, exactly as `npm run dev` does.
 *
 *   .ci/with-node24 npm run build && .ci/with-node24 npx jest -c test/e2e/jest.config.js
 *
 * The polling trigger is activated early and checked late, so its one-minute poll overlaps the
 * other tests instead of adding a minute of waiting.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { Webhook } from 'standardwebhooks';

import { startSandbox, type SandboxHandle } from '../sandbox';
import type { LoggedRequest } from '../sandbox/requestLog';
import { DEMO_CREDENTIAL, MAIL_CREDENTIAL, ORDER_ARRIVES_WORKFLOW } from './dev';
import { describeEmpty, executionsOf, nodeOutput, sleep, splitRuns, Timings, waitFor } from './kit';
import {
	smtpCredentialData,
	startMailCatcher,
	type CaughtMail,
	type MailCatcherHandle,
} from './mailCatcher';
import { startN8n, type N8nHandle, type PublicApi } from './n8n';
import type { Json } from '../json';
import { jsonBesideNodeParameters } from '../nodeParameters';

const repoRoot = resolve(__dirname, '..', '..');
const PKG = 'n8n-nodes-marketplace-management';
const TYPES = {
	action: `${PKG}.marketplace`,
	trigger: `${PKG}.marketplaceTrigger`,
	polling: `${PKG}.marketplacePollingTrigger`,
};
const CRED_REF = { marketplaceApi: { id: DEMO_CREDENTIAL.id, name: DEMO_CREDENTIAL.name } };

const WF = {
	orderArrives: ORDER_ARRIVES_WORKFLOW.id,
	eveningPack: 'mktEveningPack01',
	brandHealth: 'mktBrandHealth01',
	products: 'e2eProductsAll01',
	badKey: 'e2eBadKeyOrder01',
	polling: 'e2ePollingOrders',
	connect: 'e2eConnectChan01',
};
const BRAND_HEALTH_WEBHOOK_ID = '9a4e6c20-2f1b-4d8e-b7a3-6c0d5e8f1b22';

const BAD_KEY = 'mk_unknown_key_e2e_0001';
/**
 * Connect's channel secrets: the key and the secret typed into the node, the password read from n8n's
 * environment by an expression (README: how to keep one out of the workflow).
 */
const CHANNEL_SECRETS = {
	apiKey: 'e2e-chan-key-71c4',
	apiSecret: 'e2e-chan-secret-2d9f',
	logInPassword: 'e2e-chan-pass-a05b',
};
const CHANNEL_ENV = {
	N8N_BLOCK_ENV_ACCESS_IN_NODE: 'false',
	E2E_CHANNEL_PASSWORD: 'e2e-chan-pass-a05b',
};
const timings = new Timings();
const suiteStarted = Date.now();
let sandbox: SandboxHandle;
/** The SMTP catcher the examples' Send Email nodes deliver to (credential MAIL_CREDENTIAL). */
let mail: MailCatcherHandle;
let n8n: N8nHandle;
let api: PublicApi;

const requestsOf = async (route: string, sinceSeq = 0): Promise<LoggedRequest[]> =>
	(await sandbox.control.requests(sinceSeq)).filter((r) => r.route === route);
const lastSeq = async (): Promise<number> => {
	const all = await sandbox.control.requests();
	return all.length ? all[all.length - 1].seq : 0;
};
const webhookUrl = (webhookId: string) => `${n8n.baseUrl}/webhook/${webhookId}/webhook`;
const endpointsAt = async (webhookId: string) =>
	(await sandbox.control.endpoints()).filter((e) => e.url === webhookUrl(webhookId));
const webhookExecutions = async (workflowId: string) =>
	(await executionsOf(api, workflowId)).filter((e) => e.mode === 'webhook');
/**
 * The event ids the Order Created trigger ran in `list`. A copy of an event that ran starts an
 * execution whose trigger outputs nothing (execute() keeps each event once with n8n's deduplication):
 * no id here.
 */
const ranEventIds = (list: Awaited<ReturnType<typeof webhookExecutions>>) =>
	list.flatMap((e) => nodeOutput(e, 'Order Created').map((item) => item.id));
/** The order-arrives workflow's webhook executions: runs (with output) and executions with no output (copies). */
const orderArrivesWebhook = async () =>
	splitRuns(await webhookExecutions(WF.orderArrives), 'Order Created');
/** The order-arrives workflow's executions trigger() started (its catch-up checks). */
const orderArrivesChecks = async () =>
	(await executionsOf(api, WF.orderArrives)).filter((e) => e.mode === 'trigger');
/** How many lines of n8n's log say the trigger refused a delivery. */
const refusalLines = () =>
	(n8n.logs().match(/Marketplace Trigger refused a delivery \(401\)/g) ?? []).length;
/** Executions started by the active poller (not the editor's manual runs). */
const pollExecutions = async () =>
	(await executionsOf(api, WF.polling)).filter((e) => e.mode === 'trigger');

function manualWorkflow(id: string, name: string, node: Record<string, unknown>) {
	return {
		id,
		name,
		nodes: [
			{
				id: `${id}-start`,
				name: 'Start',
				type: 'n8n-nodes-base.manualTrigger',
				typeVersion: 1,
				position: [0, 0],
				parameters: {},
			},
			{ id: `${id}-node`, typeVersion: 1, position: [260, 0], credentials: CRED_REF, ...node },
		],
		connections: { Start: { main: [[{ node: node.name, type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	};
}

beforeAll(async () => {
	sandbox = await timings.time('sandbox start', () =>
		startSandbox({ port: 0, host: '127.0.0.1', allowHttpLoopback: true }),
	);
	mail = await timings.time('mail catcher start', () => startMailCatcher());
	n8n = await timings.time('n8n first boot (to editor line + readiness)', () =>
		startN8n({ packageRoot: repoRoot, env: CHANNEL_ENV }),
	);
	await timings.time('owner setup + login', async () => {
		await n8n.setupOwner();
		await n8n.login();
	});
	await timings.time('CLI import:credentials (demo key, SMTP)', () =>
		n8n.importCredential([
			{ ...DEMO_CREDENTIAL, data: { baseUrl: sandbox.baseUrl, apiKey: sandbox.demoApiKey } },
			{ ...MAIL_CREDENTIAL, data: smtpCredentialData(mail) },
		]),
	);
	await timings.time('CLI import:workflow (test/e2e/workflows)', () =>
		n8n.importWorkflows(join(__dirname, 'workflows')),
	);
	api = await n8n.publicApi();
	await timings.time("REST create the suite's own workflows", async () => {
		await n8n.createWorkflow(
			manualWorkflow(WF.products, 'e2e: all products', {
				name: 'All Products',
				type: TYPES.action,
				parameters: { resource: 'product', operation: 'getAll', returnAll: true },
			}),
		);
		const badCredential = { name: 'Marketplace (unknown key)', type: 'marketplaceApi' };
		const badId = await n8n.createCredential({
			...badCredential,
			data: { baseUrl: sandbox.baseUrl, apiKey: BAD_KEY },
		});
		await n8n.createWorkflow(
			manualWorkflow(WF.badKey, 'e2e: order read with an unknown key', {
				name: 'Get Order',
				type: TYPES.action,
				parameters: { resource: 'order', operation: 'get', orderId: '1001' },
				credentials: { marketplaceApi: { id: badId, name: badCredential.name } },
			}),
		);
		await n8n.createWorkflow(
			manualWorkflow(WF.connect, "e2e: connect a brand with the channel account's secrets", {
				name: 'Connect Amazon',
				type: TYPES.action,
				parameters: {
					resource: 'saleChannel',
					operation: 'connect',
					brandId: { __rl: true, mode: 'id', value: '1' },
					saleChannelName: 'Amazon',
					additionalFields: {
						logInEmail: 'seller@example.com',
						apiKey: CHANNEL_SECRETS.apiKey,
						apiSecret: CHANNEL_SECRETS.apiSecret,
						logInPassword: '={{ $env.E2E_CHANNEL_PASSWORD }}',
					},
				},
			}),
		);
	});
}, 240_000);

afterAll(async () => {
	if (n8n) {
		// The server's log, as evidence (and for a failure).
		mkdirSync(join(repoRoot, 'tmp'), { recursive: true });
		writeFileSync(join(repoRoot, 'tmp', 'e2e-n8n.log'), n8n.logs());
	}
	await n8n?.stop();
	await sandbox?.close();
	await mail?.close();
	timings.add('whole file (beforeAll to afterAll)', Date.now() - suiteStarted);
	console.log(`[e2e] timings:\n${timings.report()}`);
});

describe('the package in n8n 2.41.1', () => {
	test('loads without errors or warnings about it; three node types and the credential type exist', async () => {
		expect(n8n.packageLoadError()).toBeUndefined();
		const logLines = n8n.logs().split('\n');
		const aboutUs = logLines.filter(
			(l) => /marketplace/i.test(l) && /error|warn|fail|deprecat/i.test(l),
		);
		expect(aboutUs).toEqual([]);

		// What the editor loads: /types/nodes.json names the types `<package>.<nodeName>`.
		const served = (await (await n8n.fetch('/types/nodes.json')).json()) as Array<{
			name: string;
			displayName: string;
		}>;
		const ours = served.filter((t) => t.name.startsWith(`${PKG}.`));
		// usableAsTool: n8n also derives `marketplaceTool` (the action node as an AI agent tool).
		expect(ours.map((t) => t.name).sort()).toEqual(
			[...Object.values(TYPES), `${PKG}.marketplaceTool`].sort(),
		);
		expect(
			ours
				.filter((t) => t.name !== `${PKG}.marketplaceTool`)
				.map((t) => t.displayName)
				.sort(),
		).toEqual(['Marketplace', 'Marketplace Polling Trigger', 'Marketplace Trigger']);
		// each node's one version: the trigger's is 2
		const described = await n8n.rest<Array<{ name: string }>>('POST', '/node-types', {
			nodeInfos: [
				{ name: TYPES.action, version: 1 },
				{ name: TYPES.trigger, version: 2 },
				{ name: TYPES.polling, version: 1 },
			],
		});
		expect(described).toHaveLength(3);

		const credentialTypes = (await (await n8n.fetch('/types/credentials.json')).json()) as Array<{
			name: string;
		}>;
		expect(credentialTypes.map((c) => c.name).filter((n) => n.startsWith('marketplace'))).toEqual([
			'marketplaceApi',
		]);
	});

	test('credential test (POST /rest/credentials/test): passes with the demo key, fails with a bad one', async () => {
		const since = await lastSeq();
		const test = async (apiKey: string) =>
			await n8n.rest<{ status: string; message: string }>('POST', '/credentials/test', {
				credentials: { ...DEMO_CREDENTIAL, data: { baseUrl: sandbox.baseUrl, apiKey } },
			});
		const good = await test(sandbox.demoApiKey);
		expect(good.status).toBe('OK');
		const bad = await test('mk_not_a_real_key');
		expect(bad.status).toBe('Error');
		expect(bad.message).not.toContain('mk_not_a_real_key');
		console.log(
			`[e2e] credential test answers: good ${JSON.stringify(good)}; bad ${JSON.stringify(bad)}`,
		);

		// A request that fails authentication is logged without a route name: match the path.
		const seen = (await sandbox.control.requests(since)).filter(
			(r) => r.path === '/v1/webhook-endpoints',
		);
		expect(seen[0]).toMatchObject({
			method: 'GET',
			status: 200,
			headers: { authorization: `Bearer ${sandbox.demoApiKey}` },
		});
		const refused = seen.slice(1);
		// n8n 2.41.1 sends a request that met 401 once more (its re-authentication retry, for every
		// credential type): one or two refused requests, all with the bad key.
		expect(refused.length).toBeGreaterThanOrEqual(1);
		expect(
			refused.every(
				(r) => r.status === 401 && r.headers.authorization === 'Bearer mk_not_a_real_key',
			),
		).toBe(true);
		console.log(`[e2e] credential test with a bad key: ${refused.length} request(s) answered 401`);
	});
});

describe("Sale Channel > Connect and the channel account's secrets", () => {
	const secretsIn = (text: string) =>
		Object.values(CHANNEL_SECRETS).filter((v) => text.includes(v));

	test('a Connect run sends the secrets; the workflow holds the typed ones only, the execution besides the node parameters and the log none', async () => {
		const since = await lastSeq();
		const ex = await n8n.runWorkflow(WF.connect);
		expect(ex.status).toBe('success');
		const sent = await requestsOf('connectSaleChannel', since);
		expect(sent.map((r) => [r.path, JSON.parse(r.body)])).toEqual([
			[
				'/v1/brands/1/sale-channels/connect',
				{ saleChannelName: 'Amazon', logInEmail: 'seller@example.com', ...CHANNEL_SECRETS },
			],
		]);
		expect(nodeOutput(ex as { data?: Json }, 'Connect Amazon')).toEqual([
			expect.objectContaining({ brandId: 1, saleChannelName: 'Amazon', status: 'Connected' }),
		]);
		expect(secretsIn(jsonBesideNodeParameters(ex))).toEqual([]);
		// the workflow keeps what was typed into the node, and only the expression for the password
		const workflow = JSON.stringify(await n8n.rest('GET', `/workflows/${WF.connect}`));
		expect(secretsIn(workflow)).toEqual([CHANNEL_SECRETS.apiKey, CHANNEL_SECRETS.apiSecret]);
		expect(workflow).toContain('$env.E2E_CHANNEL_PASSWORD');
		expect(secretsIn(n8n.logs())).toEqual([]);
	});
});

describe('pickers in the editor (Marketplace node)', () => {
	// What the editor posts when a user opens a picker or a loaded dropdown (DynamicNodeParametersController).
	const editorCall = async <T>(
		endpoint: 'resource-locator-results' | 'options',
		body: Record<string, unknown>,
	) =>
		await n8n.rest<T>('POST', `/dynamic-node-parameters/${endpoint}`, {
			nodeTypeAndVersion: { name: TYPES.action, version: 1 },
			credentials: CRED_REF,
			...body,
		});

	test("Brand and Webhook Endpoint lists, with search, and the brand's health categories", async () => {
		const since = await lastSeq();
		const brands = await editorCall<{ results: Array<{ name: string; value: string }> }>(
			'resource-locator-results',
			{
				path: 'brandId',
				methodName: 'searchBrands',
				currentNodeParameters: { resource: 'brandHealth', operation: 'get' },
			},
		);
		const stored = (await sandbox.control.state<{ id: number; name: string }>('brands')).filter(
			(b) => b.id <= 5,
		);
		expect(brands.results).toEqual(
			stored.map((b) => ({ name: `${b.name} (${b.id})`, value: String(b.id) })),
		);
		const searched = await editorCall<{ results: unknown[] }>('resource-locator-results', {
			path: 'brandId',
			methodName: 'searchBrands',
			filter: stored[0].name,
			currentNodeParameters: { resource: 'brandHealth', operation: 'get' },
		});
		expect(searched.results).toContainEqual({
			name: `${stored[0].name} (${stored[0].id})`,
			value: String(stored[0].id),
		});

		const endpoints = await editorCall<{ results: Array<{ name: string; value: string }> }>(
			'resource-locator-results',
			{
				path: 'endpointId',
				methodName: 'searchWebhookEndpoints',
				currentNodeParameters: { resource: 'webhookEndpoint', operation: 'get' },
			},
		);
		expect(
			endpoints.results.every((e) => /^https?:\/\/\S+ \((Enabled|Disabled)\)$/.test(e.name)),
		).toBe(true);

		const categories = await editorCall<Array<{ name: string; value: string }>>('options', {
			path: 'filters.categories',
			methodName: 'getBrandHealthCategories',
			currentNodeParameters: {
				resource: 'brandHealth',
				operation: 'get',
				brandId: { __rl: true, mode: 'list', value: '2' },
			},
		});
		expect(categories).toContainEqual({ name: 'Home, Garden', value: 'Home, Garden' });
		// each list is one request with the credential's key
		const paths = (await sandbox.control.requests(since)).map((r) => `${r.method} ${r.path}`);
		expect(paths).toEqual([
			'GET /v1/brands',
			'GET /v1/brands',
			'GET /v1/webhook-endpoints',
			'GET /v1/brand-health',
		]);
	});

	test('a workflow with a picked brand and category runs', async () => {
		const workflow = manualWorkflow('e2ePickedBrand01', 'e2e picked brand', {
			name: 'Brand Health',
			type: TYPES.action,
			parameters: {
				resource: 'brandHealth',
				operation: 'get',
				brandId: { __rl: true, mode: 'list', value: '2', cachedResultName: 'Brand 2' },
				filters: { categories: ['Home, Garden'] },
			},
		});
		await n8n.createWorkflow(workflow);
		const execution = await n8n.runWorkflow(workflow.id);
		expect(execution.status).toBe('success');
		expect(nodeOutput(execution, 'Brand Health')).toEqual([
			expect.objectContaining({ categories: ['Home, Garden'] }),
		]);
	});
});

/** State of the polling test, shared by its two halves (activated early, checked late). */
const polling = {
	activatedAt: 0,
	activationSeq: 0,
	ordersAfterActivation: [] as number[],
	staticDataAfterActivation: undefined as unknown,
};

describe('Marketplace Polling Trigger, part 1', () => {
	test('activates (its first poll runs at activation and starts from now: no execution for older orders)', async () => {
		// n8n's "every minute" fires at a random second; a 6-field cron with one fixed second about
		// 12 s from now (allowed: not sub-minute) makes the first scheduled poll come soon.
		const second = Math.floor((Date.now() + 12_000) / 1000) % 60;
		await n8n.createWorkflow({
			id: WF.polling,
			name: 'e2e: polling trigger, new orders',
			nodes: [
				{
					id: `${WF.polling}-poll`,
					name: 'New Orders',
					type: TYPES.polling,
					typeVersion: 1,
					position: [0, 0],
					credentials: CRED_REF,
					parameters: {
						events: ['created'],
						pollTimes: { item: [{ mode: 'custom', cronExpression: `${second} * * * * *` }] },
					},
				},
			],
			connections: {},
			settings: { executionOrder: 'v1' },
		});
		polling.activationSeq = await lastSeq();
		await timings.time('polling trigger: activate + publication', async () => {
			await api.activateWorkflow(WF.polling);
			await n8n.waitForActivation(WF.polling);
		});
		polling.activatedAt = Date.now();
		// The activation poll read the order list once, from "now" (minus the overlap).
		const activationPolls = await waitFor('the activation poll', async () => {
			const polls = await requestsOf('listOrders', polling.activationSeq);
			return polls.length > 0 ? polls : undefined;
		});
		expect(activationPolls).toHaveLength(1);
		const startDate = new URLSearchParams(activationPolls[0].rawQuery).get('startDate') ?? '';
		expect(startDate).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
		// from now minus the default overlap of 10 minutes
		expect(Math.abs(Date.now() - 10 * 60_000 - Date.parse(startDate))).toBeLessThan(30_000);
		polling.staticDataAfterActivation =
			(await n8n.rest<Json>('GET', `/workflows/${WF.polling}`)).staticData ?? null;

		for (const brandId of [4, 5])
			polling.ordersAfterActivation.push((await sandbox.control.createOrder({ brandId })).order.id);
		expect(await pollExecutions()).toEqual([]);
	});
});

describe('action workflows, headless', () => {
	test('`n8n execute` (CLI): product Return All walks every page with limit 100: ceil(N/100) requests', async () => {
		const inScope = (await sandbox.control.state<{ brandId: number }>('products')).filter(
			(p) => p.brandId <= 5,
		).length;
		const since = await lastSeq();
		const run = await timings.time('CLI n8n execute (products Return All)', () =>
			n8n.runWorkflowCli(WF.products),
		);
		expect(run.code).toBe(0);
		const items = nodeOutput(run.output as Json, 'All Products');
		expect(items).toHaveLength(inScope);
		expect(new Set(items.map((p) => p.id)).size).toBe(inScope);

		const pages = await requestsOf('listProducts', since);
		expect(pages).toHaveLength(Math.ceil(inScope / 100));
		expect(pages.map((r) => r.rawQuery)).toEqual(pages.map((_, i) => `page=${i + 1}&limit=100`));
	});

	test('an unknown key: the node fails with 401 unauthorized (key not echoed); what n8n sends', async () => {
		const since = await lastSeq();
		const ex = await n8n.runWorkflow(WF.badKey);
		expect(ex.status).toBe('error');
		const error = ex.data?.resultData?.error;
		const text = JSON.stringify(error);
		expect(text).toMatch(/unauthorized|401/i);
		expect(text).not.toContain(BAD_KEY);
		const sent = (await sandbox.control.requests(since)).filter(
			(r) => r.path === '/v1/orders/1001',
		);
		expect(sent.length).toBeGreaterThanOrEqual(1);
		expect(
			sent.every((r) => r.status === 401 && r.headers.authorization === `Bearer ${BAD_KEY}`),
		).toBe(true);
		console.log(
			`[e2e] one order read with an unknown key: ${sent.length} request(s) answered 401; n8n error message: ${String(error?.message).slice(0, 200)}`,
		);
	});

	test('"On Error: Continue (using error output)": a 404 item takes the error branch, the others the main branch', async () => {
		const id = 'e2eErrorOutput01';
		await n8n.createWorkflow({
			id,
			name: 'e2e: error output',
			nodes: [
				{
					id: 'eo-start',
					name: 'Start',
					type: 'n8n-nodes-base.manualTrigger',
					typeVersion: 1,
					position: [0, 0],
					parameters: {},
				},
				{
					id: 'eo-items',
					name: 'Order IDs',
					type: 'n8n-nodes-base.code',
					typeVersion: 2,
					position: [200, 0],
					parameters: {
						jsCode:
							'return [{ json: { o: 1001 } }, { json: { o: 999999 } }, { json: { o: 1002 } }];',
					},
				},
				{
					id: 'eo-get',
					name: 'Get Order',
					type: TYPES.action,
					typeVersion: 1,
					position: [400, 0],
					credentials: CRED_REF,
					onError: 'continueErrorOutput',
					parameters: { resource: 'order', operation: 'get', orderId: '={{ $json.o }}' },
				},
				{
					id: 'eo-found',
					name: 'Found',
					type: 'n8n-nodes-base.noOp',
					typeVersion: 1,
					position: [600, -100],
					parameters: {},
				},
				{
					id: 'eo-failed',
					name: 'Failed',
					type: 'n8n-nodes-base.noOp',
					typeVersion: 1,
					position: [600, 100],
					parameters: {},
				},
			],
			connections: {
				Start: { main: [[{ node: 'Order IDs', type: 'main', index: 0 }]] },
				'Order IDs': { main: [[{ node: 'Get Order', type: 'main', index: 0 }]] },
				'Get Order': {
					main: [
						[{ node: 'Found', type: 'main', index: 0 }],
						[{ node: 'Failed', type: 'main', index: 0 }],
					],
				},
			},
			settings: { executionOrder: 'v1' },
		});
		const ex = await timings.time('REST run: error output', () => n8n.runWorkflow(id, 'Start'));
		expect(ex.status).toBe('success');
		expect(nodeOutput(ex, 'Found').map((o) => o.id)).toEqual([1001, 1002]);
		const failed = nodeOutput(ex, 'Failed');
		expect(failed).toHaveLength(1);
		expect(failed[0]).toMatchObject({
			o: 999999,
			error: expect.stringMatching(/^not-found \(404\)/),
			details: { httpCode: '404' },
		});
	});

	test("story (b) via REST run: today's Created orders read, marked packed in one batch (a 500 retried with the same key), reported by mail to the warehouse (also 0 of 0, and an order cancelled meanwhile)", async () => {
		// A few orders of today besides the seed's.
		for (const brandId of [1, 2, 3]) await sandbox.control.createOrder({ brandId });
		const before = await sandbox.control.state<{
			id: number;
			brandId: number;
			status: string;
			createdAt: string;
		}>('orders');
		const since = await lastSeq();
		// The first mark-packed attempt fails with 500 before any effect: the node retries it.
		await sandbox.control.injectFault({
			route: 'markOrdersPacked',
			mode: '500',
			when: 'before',
			count: 1,
		});

		const ex = await timings.time('REST run: evening pack and report (one 500 retried)', () =>
			n8n.runWorkflow(WF.eveningPack),
		);
		expect(ex.status).toBe('success');

		const reads = (await requestsOf('listOrders', since)).filter((r) =>
			r.rawQuery.includes('statuses=Created'),
		);
		expect(reads).toHaveLength(1);
		const query = new URLSearchParams(reads[0].rawQuery);
		expect([...query.keys()].sort()).toEqual(['startDate', 'statuses']);
		const startDate = Date.parse(query.get('startDate')!);
		// Start of today in the workflow's timezone: within the last 24 hours, at or before now.
		expect(Date.now() - startDate).toBeGreaterThanOrEqual(0);
		expect(Date.now() - startDate).toBeLessThan(24 * 3600 * 1000);
		// The demo key's brand scope is brands 1-5 (test/sandbox/README.md).
		const expected = before
			.filter(
				(o) => o.status === 'Created' && o.brandId <= 5 && Date.parse(o.createdAt) >= startDate,
			)
			.map((o) => o.id);
		expect(expected.length).toBeGreaterThanOrEqual(3);

		// One batch (ceil(N/100) = 1), sent twice: the 500, then the retry with the same key and body.
		const attempts = await requestsOf('markOrdersPacked', since);
		expect(attempts.map((r) => r.status)).toEqual([500, 200]);
		const keys = new Set(attempts.map((r) => r.headers['idempotency-key']));
		expect(keys.size).toBe(Math.ceil(expected.length / 100));
		expect([...keys][0]).toBeTruthy();
		expect(attempts[1].body).toBe(attempts[0].body);
		expect((JSON.parse(attempts[1].body) as { orderIds: number[] }).orderIds.sort()).toEqual(
			[...expected].sort(),
		);

		const packed = nodeOutput(ex, 'Mark Packed');
		expect(packed.map((r) => [r.orderId, r.success, r.status])).toEqual(
			expected.map((id) => [id, true, 'Packed']),
		);
		const [report] = nodeOutput(ex, 'Packing Report');
		expect(report).toMatchObject({
			ordersFound: expected.length,
			packed: expected.length,
			failed: 0,
		});
		expect(report.report).toMatch(
			new RegExp(
				`${expected.length} of ${expected.length} Created order\\(s\\) marked packed, 0 failed`,
			),
		);

		const after = await sandbox.control.state<{ id: number; status: string }>('orders');
		for (const id of expected) expect(after.find((o) => o.id === id)?.status).toBe('Packed');

		// The Send Email node's report, as it arrived at the SMTP catcher.
		const n = expected.length;
		const toWarehouse = (m: CaughtMail) =>
			m.envelope.to.some((t) => t.address === 'warehouse@example.com');
		const [first] = await mail.waitForMails(1, toWarehouse);
		expect(first.from).toEqual([{ address: 'n8n@example.com', name: 'Marketplace automation' }]);
		expect(first.to).toEqual([{ address: 'warehouse@example.com', name: 'Warehouse' }]);
		expect(report.date).toMatch(/^\d{4}-\d\d-\d\d$/);
		expect(first.subject).toBe(
			`Evening packing ${report.date}: ${n} of ${n} orders packed, 0 failed`,
		);
		expect(first.text).toMatch(
			new RegExp(`Orders found: +${n}\nMarked packed: +${n}\nFailed: +0\n`),
		);
		expect(first.text).toContain(`Packed orders: ${expected.join(', ')}\nNo failures.`);

		// Run again: nothing Created today is left, the report still comes (0 of 0), nothing is written.
		const againSince = await lastSeq();
		const again = await n8n.runWorkflow(WF.eveningPack);
		expect(again.status).toBe('success');
		expect(nodeOutput(again, 'Mark Packed')).toEqual([]);
		expect(nodeOutput(again, 'Packing Report')).toMatchObject([
			{ ordersFound: 0, packed: 0, failed: 0 },
		]);
		expect(await requestsOf('markOrdersPacked', againSince)).toEqual([]);
		const [, second] = await mail.waitForMails(2, toWarehouse);
		expect(second.subject).toBe(`Evening packing ${report.date}: 0 of 0 orders packed, 0 failed`);
		expect(second.text).toContain('No order was marked packed today.\nNo failures.');

		// A customer cancels one of two new orders while the run is under way (the sandbox holds the
		// mark-packed request until then): the service refuses that one, and the mail names it and why.
		const { order: kept } = await sandbox.control.createOrder({ brandId: 1 });
		const { order: cancelled } = await sandbox.control.createOrder({ brandId: 2 });
		await sandbox.control.injectFault({
			route: 'markOrdersPacked',
			mode: 'hang',
			when: 'before',
			count: 1,
			hangMs: 20_000,
		});
		const third = n8n.runWorkflow(WF.eveningPack);
		await waitFor('the mark-packed request to be held', async () =>
			(await sandbox.control.faults()).faults.length === 0 ? true : undefined,
		);
		await sandbox.control.cancelOrder(cancelled.id);
		await sandbox.control.advanceClockMs(20_000);
		expect((await third).status).toBe('success');
		const [, , withFailure] = await mail.waitForMails(3, toWarehouse);
		expect(withFailure.subject).toBe(
			`Evening packing ${report.date}: 1 of 2 orders packed, 1 failed`,
		);
		expect(withFailure.text).toContain(`Packed orders: ${kept.id}\n`);
		expect(withFailure.text).toContain(
			`Failed (please check these orders in the marketplace):\n- ${cancelled.id}: order ${cancelled.id} is Cancelled, only Created orders can be packed`,
		);
	});
});

/** The order-arrives endpoint and its first delivery, shared with the restart tests. */
let endpointId: number;
/** When the order-arrives workflow was published (n8n's clock): its checks never read orders made before. */
let publishedAt = 0;
let firstDeliveryId: number;
let firstEventId: string;
/** Ids of events accepted (and run) before the restart: their dedup must survive it. */
const acceptedBeforeRestart: string[] = [];
/** The order of each event sent by hand: one order per order.created event, as the service sends them. */
const orderOf = new Map<string, number>();
/** `count` new orders of brand 1 at the sandbox, made without an event. */
async function newOrderIds(count: number): Promise<number[]> {
	const made = await sandbox.control.generateOrders({ count, brandId: 1 });
	return Array.from({ length: made.created }, (_, i) => made.firstId + i);
}

describe('Marketplace Trigger in a real n8n', () => {
	test('the test URL (editor\'s "listen for test event"): registers /webhook-test/..., one event runs once, then its endpoint is deleted', async () => {
		const testUrl = `${n8n.baseUrl}/webhook-test/${ORDER_ARRIVES_WORKFLOW.webhookId}/webhook`;
		const started = await n8n.startManualRun(WF.orderArrives, 'Order Created');
		expect(started.waitingForWebhook).toBe(true);
		const [registered] = await waitFor('the test endpoint', async () => {
			const list = (await sandbox.control.endpoints()).filter((e) => e.url === testUrl);
			return list.length ? list : undefined;
		});
		const { order, event } = await sandbox.control.createOrder({ brandId: 1 });
		const ex = await waitFor('the manual execution', async () =>
			(await executionsOf(api, WF.orderArrives)).find((e) => e.mode === 'manual'),
		);
		expect(ex.status).toBe('success');
		expect(nodeOutput(ex, 'Order Created')[0]).toMatchObject({
			id: event.id,
			data: { orderId: order.id },
		});
		expect(nodeOutput(ex, 'Get Order')).toMatchObject([{ id: order.id }]);
		await waitFor('the test endpoint to be deleted', async () =>
			(await sandbox.control.endpoints()).some((e) => e.id === registered.id) ? undefined : true,
		);
		expect(await sandbox.control.endpoints()).toEqual([]);
	});

	test("activation registers one endpoint at the sandbox for n8n's production webhook URL", async () => {
		publishedAt = Date.now();
		await timings.time('webhook trigger: activate + publication', async () => {
			await api.activateWorkflow(WF.orderArrives);
			await n8n.waitForActivation(WF.orderArrives);
		});
		const endpoints = await endpointsAt(ORDER_ARRIVES_WORKFLOW.webhookId);
		expect(endpoints).toHaveLength(1);
		expect(endpoints[0]).toMatchObject({
			status: 'Enabled',
			eventTypes: ['order.created'],
			ownerUserId: 1,
		});
		endpointId = endpoints[0].id;
	});

	test('story (a): one sandbox event -> exactly one execution carrying the event and the order read', async () => {
		const t = Date.now();
		const { order, event, deliveryIds } = await sandbox.control.createOrder({ brandId: 1 });
		expect(deliveryIds).toHaveLength(1);
		firstDeliveryId = deliveryIds[0];
		firstEventId = event.id;
		const [ex] = await waitFor('the execution of the order event', async () => {
			const list = await webhookExecutions(WF.orderArrives);
			return list.length > 0 ? list : undefined;
		});
		timings.add('webhook: event emitted -> execution finished and listed', Date.now() - t);
		expect(ex.status).toBe('success');
		expect(nodeOutput(ex, 'Order Created')).toEqual([
			{
				id: event.id,
				type: 'order.created',
				createdAt: event.createdAt,
				data: { brandId: 1, orderId: order.id },
			},
		]);
		expect(nodeOutput(ex, 'Get Order')).toMatchObject([
			{ id: order.id, brandId: 1, status: 'Created' },
		]);

		// before it, the activation check's test delivery: answered 401 by the trigger's route (n8n saves the secret after create())
		const deliveries = await sandbox.control.deliveries(endpointId);
		expect(deliveries.map((d) => [d.kind, d.eventType, d.responseStatusCode])).toEqual([
			['test', 'webhook.test', 401],
			['event', 'order.created', 200],
		]);
		expect(deliveries.find((d) => d.id === firstDeliveryId)).toMatchObject({
			status: 'Delivered',
			attempts: 1,
			responseStatusCode: 200,
		});
		await sleep(1000);
		expect(await webhookExecutions(WF.orderArrives)).toHaveLength(1);
		// the first publication emits no check (it reads nothing: it starts the record)
		expect(await orderArrivesChecks()).toEqual([]);
	});

	test('a tampered or stale delivery gets 401, a log line and no execution; a duplicate gets 200 and an execution with no output, no run', async () => {
		const refusedBefore = refusalLines();
		const results = {
			tamperedBody: (await sandbox.control.send(endpointId, { tamper: 'body' })).statusCode,
			tamperedSignature: (await sandbox.control.send(endpointId, { tamper: 'signature' }))
				.statusCode,
			tamperedId: (await sandbox.control.send(endpointId, { tamper: 'id' })).statusCode,
			staleBy6Minutes: (await sandbox.control.send(endpointId, { timestampOffsetSeconds: -360 }))
				.statusCode,
			futureBy6Minutes: (await sandbox.control.send(endpointId, { timestampOffsetSeconds: 360 }))
				.statusCode,
		};
		expect(results).toEqual({
			tamperedBody: 401,
			tamperedSignature: 401,
			tamperedId: 401,
			staleBy6Minutes: 401,
			futureBy6Minutes: 401,
		});
		expect(refusalLines() - refusedBefore).toBe(5);
		await sleep(1000);
		expect(await webhookExecutions(WF.orderArrives)).toHaveLength(1);

		const duplicate = await sandbox.control.redeliver(firstDeliveryId);
		expect(duplicate.attemptLog[duplicate.attemptLog.length - 1].statusCode).toBe(200);
		const after = await waitFor('the execution of the duplicate', async () => {
			const split = await orderArrivesWebhook();
			return split.empty.length > 0 ? split : undefined;
		});
		await sleep(1000);
		expect({ runs: after.runs.length, empty: after.empty.length }).toEqual({ runs: 1, empty: 1 });
		console.log(`[e2e] a duplicate: executions with no output ${describeEmpty(after.empty)}`);
	});

	test('concurrency: 4 simultaneous copies of one event start one run (and 3 executions with no output); 6 simultaneous distinct events start six', async () => {
		const before = await orderArrivesWebhook();
		const copyId = `msg_e2e_copies_${Date.now()}`;
		const [copyOrder, ...distinctOrders] = await newOrderIds(7);
		orderOf.set(copyId, copyOrder);
		const copies = await Promise.all(
			[0, 1, 2, 3].map(() =>
				sandbox.control.send(endpointId, {
					event: { id: copyId, type: 'order.created', data: { brandId: 1, orderId: copyOrder } },
				}),
			),
		);
		expect(copies.map((c) => c.statusCode)).toEqual([200, 200, 200, 200]);
		const distinct = await Promise.all(
			[0, 1, 2, 3, 4, 5].map((i) =>
				sandbox.control.send(endpointId, {
					event: {
						id: `msg_e2e_distinct_${i}_${Date.now()}`,
						type: 'order.created',
						data: { brandId: 1, orderId: distinctOrders[i] },
					},
				}),
			),
		);
		expect(distinct.map((c) => c.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
		acceptedBeforeRestart.push(copyId, ...distinct.map((d) => d.webhookId));
		distinct.forEach((d, i) => orderOf.set(d.webhookId, distinctOrders[i]));
		await waitFor('ten executions', async () =>
			(await webhookExecutions(WF.orderArrives)).length >=
			before.runs.length + before.empty.length + 10
				? true
				: undefined,
		);
		await sleep(1500);
		const after = await orderArrivesWebhook();
		const ids = ranEventIds(after.runs.slice(before.runs.length));
		expect(ids.filter((id) => id === copyId)).toHaveLength(1);
		expect(ids.sort()).toEqual([copyId, ...distinct.map((d) => d.webhookId)].sort());
		const empty = after.empty.slice(before.empty.length);
		console.log(`[e2e] 4 concurrent copies: executions with no output ${describeEmpty(empty)}`);
		expect(empty).toHaveLength(3);
	});

	test('an untouched signed delivery of a new event via the same path does start one run (control for the 401s)', async () => {
		const before = (await orderArrivesWebhook()).runs.length;
		const [orderId] = await newOrderIds(1);
		const sent = await sandbox.control.send(endpointId, {
			event: { type: 'order.created', data: { brandId: 1, orderId } },
		});
		expect(sent.statusCode).toBe(200);
		const list = await waitFor('one more run', async () => {
			const l = (await orderArrivesWebhook()).runs;
			return l.length === before + 1 ? l : undefined;
		});
		expect(nodeOutput(list[before], 'Order Created')[0].id).toBe(sent.webhookId);
		acceptedBeforeRestart.push(sent.webhookId);
		orderOf.set(sent.webhookId, orderId);
	});

	test('answers: 12 accepted in a row and a duplicate are each answered 200 with an empty body (n8n, on receipt); an unsubscribed type is answered by webhook() with no execution', async () => {
		const before = await orderArrivesWebhook();
		const all = (await webhookExecutions(WF.orderArrives)).length;
		const secret = (await sandbox.control.endpoints()).find((e) => e.id === endpointId)!
			.secret as string;
		const url = webhookUrl(ORDER_ARRIVES_WORKFLOW.webhookId);
		const post = async (id: string, type = 'order.created') => {
			const body = JSON.stringify({
				id,
				type,
				createdAt: new Date().toISOString(),
				data: { brandId: 1, orderId: orderOf.get(id) ?? 1001 },
			});
			const timestamp = new Date();
			const res = await fetch(url, {
				method: 'POST',
				headers: {
					'content-type': 'application/json',
					'webhook-id': id,
					'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
					'webhook-signature': new Webhook(secret).sign(id, timestamp, body),
				},
				body,
			});
			const text = await res.text();
			return [res.status, text === '' ? '' : (JSON.parse(text) as Json)];
		};
		const ids = Array.from({ length: 12 }, (_, i) => `msg_e2e_body_${i}_${Date.now()}`);
		(await newOrderIds(ids.length)).forEach((orderId, i) => orderOf.set(ids[i], orderId));
		for (const id of ids) expect(await post(id)).toEqual([200, '']);
		await waitFor('twelve runs', async () =>
			(await orderArrivesWebhook()).runs.length >= before.runs.length + 12 ? true : undefined,
		);
		expect(await post(ids[0])).toEqual([200, '']);
		expect(await post(`msg_e2e_other_${Date.now()}`, 'order.shipped')).toEqual([
			200,
			{ received: true, ignored: 'event-type-not-subscribed', detail: 'order.shipped' },
		]);
		acceptedBeforeRestart.push(...ids);
		await waitFor('the execution of the duplicate', async () =>
			(await webhookExecutions(WF.orderArrives)).length >= all + 13 ? true : undefined,
		);
		await sleep(1000);
		const after = await orderArrivesWebhook();
		expect(ranEventIds(after.runs.slice(before.runs.length)).sort()).toEqual([...ids].sort());
		// the duplicate: one execution with no output; the unsubscribed type: none
		expect(after.empty.length - before.empty.length).toBe(1);
		expect((await webhookExecutions(WF.orderArrives)).length).toBe(all + 13);
	});

	test("story (c), activated over a Disabled endpoint at its URL: adopted and re-enabled, n8n's log says what is not recovered; band entered -> brand health read -> alert mailed to the brand manager; band_exited starts nothing", async () => {
		// An endpoint for this URL already exists and the service disabled it (e.g. n8n was down for days).
		const serviceApi = async (method: string, path: string, body: unknown) => {
			const res = await fetch(`${sandbox.baseUrl}${path}`, {
				method,
				headers: {
					authorization: `Bearer ${sandbox.demoApiKey}`,
					'content-type': 'application/json',
					'idempotency-key': `e2e-${Date.now()}-${Math.random()}`,
				},
				body: JSON.stringify(body),
			});
			expect(res.status).toBeLessThan(300);
			return (await res.json()) as Json;
		};
		const preexisting = await serviceApi('POST', '/v1/webhook-endpoints', {
			url: webhookUrl(BRAND_HEALTH_WEBHOOK_ID),
			description: 'left over',
			eventTypes: ['brand_health.band_exited'],
		});
		const preexistingId = preexisting.webhookEndpoint.id as number;
		await serviceApi('PATCH', `/v1/webhook-endpoints/${preexistingId}`, { status: 'Disabled' });

		const logFrom = n8n.logs().length;
		await timings.time('brand health trigger: activate + publication', async () => {
			await api.activateWorkflow(WF.brandHealth);
			await n8n.waitForActivation(WF.brandHealth);
		});
		const atUrl = await endpointsAt(BRAND_HEALTH_WEBHOOK_ID);
		expect(atUrl).toHaveLength(1);
		const [endpoint] = atUrl;
		expect(endpoint).toMatchObject({
			id: preexistingId,
			eventTypes: ['brand_health.band_entered'],
			status: 'Enabled',
		});

		const { events } = await sandbox.control.setBand(2, {
			dimension: 'DeliveryPerformance',
			band: 'Critical',
		});
		expect(events.map((e) => e.event.type).sort()).toEqual([
			'brand_health.band_entered',
			'brand_health.band_exited',
		]);
		const [ex] = await waitFor('the alert execution', async () => {
			const l = await webhookExecutions(WF.brandHealth);
			return l.length > 0 ? l : undefined;
		});
		expect(ex.status).toBe('success');
		const entered = events.find((e) => e.event.type === 'brand_health.band_entered')!.event;
		expect(nodeOutput(ex, 'Band Entered')[0]).toMatchObject({ id: entered.id, data: entered.data });
		expect(nodeOutput(ex, 'Get Brand Health')[0]).toMatchObject({ brandId: 2 });
		// the re-enable is told in n8n's log: what the trigger recovers by itself (orders) and what it does not
		expect(n8n.logs().slice(logFrom)).toMatch(
			new RegExp(
				`webhook endpoint ${preexistingId} was Disabled by the service .*cancellations, returns and brand health changes of that time are not recovered`,
			),
		);
		expect(nodeOutput(ex, 'Band Entered')[0].notice).toBeUndefined();
		const [alert] = nodeOutput(ex, 'Alert');
		expect(alert).toMatchObject({
			severity: 'high',
			brandId: 2,
			eventId: entered.id,
			message: 'Brand 2: DeliveryPerformance entered band Critical',
		});
		expect(
			alert.dimensionsNow.every(
				(d: { dimension: string; band: string }) =>
					d.dimension === 'DeliveryPerformance' && d.band === 'Critical',
			),
		).toBe(true);
		// The Send Email node's alert to the brand manager, as it arrived at the SMTP catcher.
		const [alertMail] = await mail.waitForMails(1, (m) =>
			m.envelope.to.some((t) => t.address === 'brand-manager@example.com'),
		);
		expect(alertMail.to).toEqual([{ address: 'brand-manager@example.com', name: 'Brand manager' }]);
		expect(alertMail.subject).toBe(
			'Brand health alert for brand 2: DeliveryPerformance entered band Critical',
		);
		expect(alertMail.text).toContain(
			"brand 2's DeliveryPerformance has entered the band Critical, which needs action.",
		);
		expect(alert.dimensionsNow.length).toBeGreaterThan(0);
		for (const d of alert.dimensionsNow)
			expect(alertMail.text).toContain(`- ${d.category}: Critical (score ${d.score})`);
		expect(alertMail.text).toContain(`Severity: high`);
		expect(alertMail.text).toContain(`Event: ${entered.id}`);

		// The band_exited delivery is answered 2xx (unsubscribed types are acknowledged) or was never sent.
		await sleep(1000);
		const deliveries = await sandbox.control.deliveries(endpoint.id);
		// the activation check's test delivery was refused 401 (signed with the adopted endpoint's secret, which n8n did not hold yet)
		expect(deliveries.filter((d) => d.kind === 'test').map((d) => d.responseStatusCode)).toEqual([
			401,
		]);
		expect(deliveries.filter((d) => d.kind !== 'test').every((d) => d.status === 'Delivered')).toBe(
			true,
		);
		expect(await webhookExecutions(WF.brandHealth)).toHaveLength(1);
	});
	test('a band that needs no action is mailed to the brand manager as an update, not an alert', async () => {
		const before = (await webhookExecutions(WF.brandHealth)).length;
		await sandbox.control.setBand(2, { dimension: 'DeliveryPerformance', band: 'Good' });
		const list = await waitFor('the second alert', async () => {
			const l = await webhookExecutions(WF.brandHealth);
			return l.length > before ? l : undefined;
		});
		expect(nodeOutput(list[before], 'Band Entered')[0]).toMatchObject({
			type: 'brand_health.band_entered',
			data: { brandId: 2, band: 'Good' },
		});
		// A band that needs no action reaches the brand manager as an update, not an alert.
		const toManager = await mail.waitForMails(2, (m) =>
			m.envelope.to.some((t) => t.address === 'brand-manager@example.com'),
		);
		expect(toManager[1].subject).toBe(
			'Brand health update for brand 2: DeliveryPerformance entered band Good',
		);
		expect(toManager[1].text).toContain(
			"brand 2's DeliveryPerformance has entered the band Good.\n",
		);
	});
});

describe('Marketplace Polling Trigger, part 2', () => {
	test('the next scheduled poll reports the orders created after activation, each exactly once', async () => {
		const t = Date.now();
		const executions = await waitFor(
			'a polling execution with the new orders',
			async () => {
				const list = await pollExecutions();
				const ids = list.flatMap((e) => nodeOutput(e, 'New Orders').map((o) => o.id));
				return polling.ordersAfterActivation.every((id) => ids.includes(id)) ? list : undefined;
			},
			90_000,
			500,
		);
		timings.add('polling: waited for the scheduled poll (beyond the other tests)', Date.now() - t);
		timings.add('polling: activation -> orders reported', Date.now() - polling.activatedAt);
		const reported = executions.flatMap((e) => nodeOutput(e, 'New Orders'));
		for (const id of polling.ordersAfterActivation)
			expect(reported.filter((o) => o.id === id)).toHaveLength(1);
		expect(reported.every((o) => o.change?.kind === 'created')).toBe(true);
		expect(executions.every((e) => e.mode === 'trigger' && e.status === 'success')).toBe(true);
		// Every order reported was created after activation (the trigger starts from now).
		const created = new Set([...polling.ordersAfterActivation]);
		const all = await sandbox.control.state<{ id: number; createdAt: string }>('orders');
		for (const o of reported) {
			if (!created.has(o.id))
				expect(Date.parse(all.find((x) => x.id === o.id)!.createdAt)).toBeGreaterThanOrEqual(
					polling.activatedAt - 60_000,
				);
		}
		const staticData = (await n8n.rest<Json>('GET', `/workflows/${WF.polling}`)).staticData ?? null;
		console.log(
			`[e2e] polling static data in n8n's database: after the activation poll ${JSON.stringify(polling.staticDataAfterActivation)?.slice(0, 300)}; after the first emitting poll ${JSON.stringify(staticData)?.slice(0, 300)}`,
		);
	});
});

describe('Marketplace Polling Trigger, manual run', () => {
	test('the editor\'s manual run ("fetch test event") outputs the newest order as a sample and leaves the active poll state alone', async () => {
		const before = (await n8n.rest<Json>('GET', `/workflows/${WF.polling}`)).staticData;
		const ex = await n8n.runWorkflow(WF.polling, 'New Orders');
		expect(ex.mode).toBe('manual');
		expect(ex.status).toBe('success');
		const orders = await sandbox.control.state<{ id: number; brandId: number; createdAt: string }>(
			'orders',
		);
		const newest = orders
			.filter((o) => o.brandId <= 5)
			// newest first; of orders made in the same millisecond, the highest id (as the node picks)
			.sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || b.id - a.id)[0];
		const sample = nodeOutput(ex, 'New Orders');
		expect(sample).toHaveLength(1);
		expect(sample[0]).toMatchObject({ id: newest.id, change: { kind: 'created' } });
		expect((await n8n.rest<Json>('GET', `/workflows/${WF.polling}`)).staticData).toEqual(before);
	});
});

describe('after a restart of n8n', () => {
	let endpointsBefore: Awaited<ReturnType<typeof sandbox.control.endpoints>>;
	let betweenOrder: number;
	let pollingBefore: number;
	let restartSeq = 0;
	/** The execution of the check at the restart's start (the trigger's first poll then). */
	let restartCheck: Awaited<ReturnType<typeof orderArrivesChecks>>[number];

	test('restart creates no second endpoint; events still run once; a pre-restart duplicate starts nothing', async () => {
		endpointsBefore = await sandbox.control.endpoints();
		pollingBefore = (await pollExecutions()).length;
		const executedBefore = (await webhookExecutions(WF.orderArrives)).length;
		const ranBefore = ranEventIds(await webhookExecutions(WF.orderArrives)).length;
		// An order (and its order.created event) before the restart, run before n8n stops. (A delivery
		// that arrives while n8n is shutting down can be answered and then dropped by n8n's own shutdown
		// (its execution store is already closed): that window is n8n's, see the README; deliveries
		// while n8n is down are refused and retried by the service, see test/bench/outage.ts.)
		const between = await sandbox.control.createOrder({ brandId: 3 });
		betweenOrder = between.order.id;
		await waitFor('the execution of the event sent before the restart', async () => {
			const l = await webhookExecutions(WF.orderArrives);
			return l.some((e) => nodeOutput(e, 'Order Created')[0]?.id === between.event.id)
				? l
				: undefined;
		});
		// Five events at once, then nothing for a few seconds: their ids must be saved without any
		// later delivery to carry them (checked after the restart, below).
		const burstOrders = await newOrderIds(5);
		const burst = await Promise.all(
			burstOrders.map((orderId, i) =>
				sandbox.control.send(endpointId, {
					event: {
						id: `msg_e2e_burst_${i}_${Date.now()}`,
						type: 'order.created',
						data: { brandId: 1, orderId },
					},
				}),
			),
		);
		burst.forEach((b, i) => orderOf.set(b.webhookId, burstOrders[i]));
		expect(burst.map((b) => b.statusCode)).toEqual([200, 200, 200, 200, 200]);
		acceptedBeforeRestart.push(...burst.map((b) => b.webhookId));
		await waitFor("the burst's executions", async () =>
			(await webhookExecutions(WF.orderArrives)).length >= executedBefore + 6 ? true : undefined,
		);
		await sleep(3000);
		const restartedAt = Date.now();
		const seq = await lastSeq();
		restartSeq = seq;
		await timings.time('n8n restart (stop + boot to editor line)', () => n8n.restart());
		await n8n.login();
		await n8n.waitForActivation(WF.orderArrives);
		await n8n.waitForActivation(WF.polling);
		// the first check after the restart (the watch may have run checks before it)
		restartCheck = await waitFor("the check at the restart's start", async () =>
			(await orderArrivesChecks())
				.filter((e) => Date.parse(String(e.startedAt)) >= restartedAt)
				.sort((x, y) => Date.parse(String(x.startedAt)) - Date.parse(String(y.startedAt)))
				.at(0),
		);
		const endpointsAfter = await sandbox.control.endpoints();
		expect(endpointsAfter.map((e) => [e.id, e.url, e.status])).toEqual(
			endpointsBefore.map((e) => [e.id, e.url, e.status]),
		);
		const lifecycle = (await sandbox.control.requests(seq)).filter((r) =>
			/WebhookEndpoint/.test(r.route ?? ''),
		);
		console.log(
			`[e2e] webhook-endpoint requests during the restart: ${JSON.stringify(lifecycle.map((r) => `${r.method} ${r.path}`))}`,
		);
		// n8n 2.0 and 1.x run checkExists at every start, and with it the activation check (a test delivery,
		// which changes nothing); anything else that writes would be a change
		expect(
			lifecycle
				.filter((r) => r.method !== 'GET' && r.route !== 'testWebhookEndpoint')
				.map((r) => `${r.method} ${r.path}`),
		).toEqual([]);

		const delivered = (await sandbox.control.deliveries(endpointId)).find(
			(d) => d.id === between.deliveryIds[0],
		)!;
		expect(delivered.status).toBe('Delivered');

		const duplicate = await sandbox.control.redeliver(firstDeliveryId);
		expect(duplicate.attemptLog[duplicate.attemptLog.length - 1].statusCode).toBe(200);
		const { order, event } = await sandbox.control.createOrder({ brandId: 2 });
		const list = await waitFor('the post-restart executions', async () => {
			const l = await webhookExecutions(WF.orderArrives);
			return l.some((e) => nodeOutput(e, 'Order Created')[0]?.id === event.id) ? l : undefined;
		});
		const post = list.find((e) => nodeOutput(e, 'Order Created')[0]?.id === event.id)!;
		expect(nodeOutput(post, 'Get Order')).toMatchObject([{ id: order.id }]);
		await sleep(1500);
		const ids = ranEventIds(await webhookExecutions(WF.orderArrives));
		expect(ids).toHaveLength(ranBefore + 7);
		expect(new Set(ids).size).toBe(ids.length);
		expect(ids).toEqual(expect.arrayContaining([firstEventId, between.event.id, event.id]));
		const { empty } = await orderArrivesWebhook();
		console.log(
			`[e2e] webhook executions with no output so far (copies, the pre-restart redelivery among them): ${describeEmpty(empty)}`,
		);
	});

	test('the check at the restart runs exactly the orders made since the publication that never ran from an event; none twice, none from before it', async () => {
		const caught = nodeOutput(restartCheck, 'Order Created').map((i) => i.data.orderId as number);
		// what ran in any other published execution: from an event, or a check of the watch before the restart
		const ranFromEvents = new Set(
			(await executionsOf(api, WF.orderArrives))
				.filter((e) => e.id !== restartCheck.id && e.mode !== 'manual')
				.flatMap((e) => nodeOutput(e, 'Order Created').map((i) => i.data.orderId as number)),
		);
		// The sandbox's clock is 20 s ahead of n8n's since story (b): the order the test URL's listening ran
		// (made seconds before the publication, run by the editor, which records nothing) is in the window.
		const expected = (await sandbox.control.state<{ id: number; createdAt: string }>('orders'))
			.filter((o) => {
				const at = Date.parse(o.createdAt);
				// no upper bound, as the check has none: `until` is n8n's clock, `createdAt` the sandbox's (ahead)
				return at >= publishedAt && !ranFromEvents.has(o.id);
			})
			.map((o) => o.id);
		console.log(
			`[e2e] the check at the restart: status ${restartCheck.status}, orders caught up ${JSON.stringify(caught)} (made since the publication and never run from an event: ${JSON.stringify(expected)})`,
		);
		expect(restartCheck.status).toBe('success');
		expect(caught.sort()).toEqual(expected.sort());
		expect(caught.filter((id) => ranFromEvents.has(id))).toEqual([]);
	});

	// Each event that ran is kept in n8n's deduplication store (processed_data, written by the run's
	// execute()), which is in n8n's database: a copy after the restart starts an execution with no output.
	test('dedup survives a restart: events accepted before it, sent again after it, start no second run', async () => {
		const before = await orderArrivesWebhook();
		const resent = await Promise.all(
			acceptedBeforeRestart.map((id) =>
				sandbox.control.send(endpointId, {
					event: { id, type: 'order.created', data: { brandId: 1, orderId: orderOf.get(id)! } },
				}),
			),
		);
		expect(resent.map((r) => r.statusCode)).toEqual(acceptedBeforeRestart.map(() => 200));
		await waitFor('an execution for each copy', async () =>
			(await webhookExecutions(WF.orderArrives)).length >=
			before.runs.length + before.empty.length + acceptedBeforeRestart.length
				? true
				: undefined,
		);
		await sleep(1500);
		const after = await orderArrivesWebhook();
		const rerun = ranEventIds(after.runs.slice(before.runs.length));
		const empty = after.empty.slice(before.empty.length);
		console.log(
			`[e2e] events accepted before the restart and sent again after it: ${rerun.length} of ${acceptedBeforeRestart.length} ran again ${JSON.stringify(rerun)}; executions with no output ${describeEmpty(empty)}`,
		);
		expect(rerun).toEqual([]);
		expect(empty).toHaveLength(acceptedBeforeRestart.length);
	});

	test('polling after the restart: an order created just before it is reported exactly once', async () => {
		const t = Date.now();
		const executions = await waitFor(
			'the order created before the restart',
			async () => {
				const list = await pollExecutions();
				return list.some((e) => nodeOutput(e, 'New Orders').some((o) => o.id === betweenOrder))
					? list
					: undefined;
			},
			90_000,
			500,
		);
		timings.add('polling: waited after the restart', Date.now() - t);
		const reported = executions.flatMap((e) => nodeOutput(e, 'New Orders').map((o) => o.id));
		// The first poll after the restart re-read the window of the orders reported before it
		// (the tracked ids survived in static data), and reported none of them again.
		// the Marketplace Trigger's check at the start reads the order list too: its read is not the poll's
		const checkFrom = Date.parse(String(restartCheck.startedAt));
		const checkTo = Date.parse(String(restartCheck.stoppedAt));
		const firstPollAfter = await waitFor(
			'the first poll after the restart',
			async () =>
				(await requestsOf('listOrders', restartSeq)).find((r) => {
					const at = Date.parse(r.at);
					return at < checkFrom || at > checkTo;
				}),
			90_000,
			500,
		);
		const windowStart = Date.parse(new URLSearchParams(firstPollAfter.rawQuery).get('startDate')!);
		const orders = await sandbox.control.state<{ id: number; createdAt: string }>('orders');
		for (const id of polling.ordersAfterActivation)
			expect(Date.parse(orders.find((o) => o.id === id)!.createdAt)).toBeGreaterThanOrEqual(
				windowStart,
			);
		console.log(
			`[e2e] polling executions: ${executions.length} (${pollingBefore} before the restart); ${JSON.stringify(executions.map((e) => ({ id: e.id, startedAt: e.startedAt, orders: nodeOutput(e, 'New Orders').map((o) => o.id) })))}`,
		);
		expect(reported.filter((id) => id === betweenOrder)).toHaveLength(1);
		for (const id of polling.ordersAfterActivation)
			expect(reported.filter((x) => x === id)).toHaveLength(1);
		expect(new Set(reported).size).toBe(reported.length);
	});

	test('deactivating deletes the endpoints, and the webhook URL stops answering', async () => {
		await timings.time('deactivate three workflows', async () => {
			await api.deactivateWorkflow(WF.orderArrives);
			await api.deactivateWorkflow(WF.brandHealth);
			await api.deactivateWorkflow(WF.polling);
		});
		await waitFor(
			'the endpoints to be deleted',
			async () => ((await sandbox.control.endpoints()).length === 0 ? true : undefined),
			30_000,
		);
		const res = await fetch(webhookUrl(ORDER_ARRIVES_WORKFLOW.webhookId), {
			method: 'POST',
			body: '{}',
		});
		expect(res.status).toBe(404);
	});
});

/**
 * The Marketplace Trigger in a real n8n 2.41.1 with its opt-in Engine 2.0 on (module `engine-v2`).
 *
 * What Engine 2.0 needs, read from n8n 2.41.1's compiled source (dist/modules/engine-v2) and seen here:
 * `N8N_ENABLED_MODULES=engine-v2`, a data plane database (`N8N_ENGINE_DATABASE_URL`, PostgreSQL only:
 * @n8n/engine's data source is `type: 'postgres'`; here a second database in the suite's cluster), no
 * queue mode ("The engine-v2 module does not support queue mode."), and two listeners: the engine
 * (`N8N_ENGINE_HOST`/`N8N_ENGINE_PORT`, default 0.0.0.0:3000) and its control plane
 * (`N8N_ENGINE_CONTROL_PLANE_PORT`, default 3001), given free loopback ports here. A workflow opts in
 * with `settings.engineType: 'v2'`; for such a workflow n8n refuses every webhook whose response mode
 * is not `onReceived` (webhooks/engine-v2-webhooks.js) before the node's webhook() runs.
 *
 * One n8n (regular mode) on PostgreSQL with the engine on, the sandbox on loopback. It proves:
 * - the premise, in n8n itself: with engineType 'v2', n8n's own Webhook node set to answer from a
 *   Respond to Webhook node gets HTTP 400 naming the response mode, while one that responds
 *   immediately is answered 200 and runs on Engine 2.0 (an execution with a UUID v7 id, the engine's);
 * - a Marketplace Trigger workflow with engineType 'v2' fails to publish, and the failure n8n shows
 *   (publication-status, the activation toast's text) names Engine 2.0 and engineType; the sandbox got
 *   no write (only the delete hook's endpoint listings, GET) and has no endpoint;
 * - the same workflow, set back to engineType 'v1' as the message says and published again, registers
 *   its endpoint, and an order created in the sandbox runs once.
 *
 *   .ci/queue-services && .ci/with-node24 npx jest -c test/queue/jest.config.js test/queue/engineV2.test.ts
 *
 * (dist/ must be built: `.ci/with-node24 npm run build`.) n8n's log goes to tmp/engine-v2-n8n.log.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { executionsOf, nodeOutput, sleep, stopKeepingLog, Timings, waitFor } from '../e2e/kit';
import { freePort, startN8n, type N8nHandle, type PublicApi } from '../e2e/n8n';
import { startSandbox, type SandboxHandle } from '../sandbox';
import { startPostgres, type Service } from './services';
import type { Json } from '../json';

const repoRoot = resolve(__dirname, '..', '..');
const TRIGGER_TYPE = 'n8n-nodes-marketplace-management.marketplaceTrigger';
const WORKFLOW_ID = 'engineV2Trigger01';
const WEBHOOK_ID = '5e1d7c3a-9b2f-4a6e-8d0c-1f3b5a7c9e2d';
const CREDENTIAL_NAME = 'Marketplace sandbox (Engine 2.0 suite)';
const timings = new Timings();

let pg: Service & { user: string; database: string };
let sandbox: SandboxHandle;
let n8n: N8nHandle;
let api: PublicApi;
let credentialId: string;

const triggerUrl = () => `${n8n.baseUrl}/webhook/${WEBHOOK_ID}/webhook`;
const endpointsForTrigger = async () =>
	(await sandbox.control.endpoints()).filter((e) => e.url === triggerUrl());
const lastSeq = async () => (await sandbox.control.requests()).at(-1)?.seq ?? 0;

/** `createdb` over TCP (trust auth): the engine's data plane gets a database of its own. */
function createDatabase(name: string): void {
	const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(a) - Number(b));
	const bin = join('/usr/lib/postgresql', versions[versions.length - 1], 'bin', 'createdb');
	const r = spawnSync(bin, ['-h', '127.0.0.1', '-p', String(pg.port), '-U', pg.user, name], {
		encoding: 'utf8',
	});
	if (r.status !== 0) throw new Error(`createdb ${name} failed: ${r.stderr || r.stdout}`);
}

function triggerWorkflow(engineType: 'v1' | 'v2') {
	return {
		id: WORKFLOW_ID,
		name: 'Engine 2.0: order arrives',
		nodes: [
			{
				id: `${WORKFLOW_ID}-trigger`,
				name: 'Order Created',
				type: TRIGGER_TYPE,
				typeVersion: 2,
				position: [0, 0],
				webhookId: WEBHOOK_ID,
				credentials: { marketplaceApi: { id: credentialId, name: CREDENTIAL_NAME } },
				parameters: { eventTypes: ['order.created'] },
			},
			{
				id: `${WORKFLOW_ID}-noop`,
				name: 'Done',
				type: 'n8n-nodes-base.noOp',
				typeVersion: 1,
				position: [260, 0],
				parameters: {},
			},
		],
		connections: { 'Order Created': { main: [[{ node: 'Done', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1', engineType },
	};
}

/** n8n's own Webhook node on Engine 2.0, answering immediately or from a Respond to Webhook node. */
function webhookNodeWorkflow(
	id: string,
	path: string,
	responseMode: 'onReceived' | 'responseNode',
) {
	const nodes: Json[] = [
		{
			id: `${id}-hook`,
			name: 'Webhook',
			type: 'n8n-nodes-base.webhook',
			typeVersion: 2,
			position: [0, 0],
			webhookId: `${id}-hook`,
			parameters: { httpMethod: 'POST', path, responseMode, options: {} },
		},
	];
	if (responseMode === 'responseNode')
		nodes.push({
			id: `${id}-respond`,
			name: 'Respond',
			type: 'n8n-nodes-base.respondToWebhook',
			typeVersion: 1.1,
			position: [260, 0],
			parameters: {},
		});
	return {
		id,
		name: `Engine 2.0: n8n Webhook node, ${responseMode}`,
		nodes,
		connections:
			responseMode === 'responseNode'
				? { Webhook: { main: [[{ node: 'Respond', type: 'main', index: 0 }]] } }
				: {},
		settings: { executionOrder: 'v1', engineType: 'v2' },
	};
}

/** Polls publication-status until n8n has finished trying (published, partial or failed). */
async function publicationOutcome(workflowId: string, timeoutMs = 60_000): Promise<Json> {
	return await waitFor(
		`the publication of ${workflowId} to end`,
		async () => {
			const status = await n8n.rest<Json>('GET', `/workflows/${workflowId}/publication-status`);
			return ['published', 'partial', 'failed'].includes(String(status?.status))
				? status
				: undefined;
		},
		timeoutMs,
		250,
	);
}

beforeAll(async () => {
	await timings.time('PostgreSQL (n8n + engine data plane databases)', async () => {
		pg = await startPostgres();
		createDatabase('n8n_engine');
	});
	sandbox = await startSandbox({ port: 0, host: '127.0.0.1', allowHttpLoopback: true });
	const [enginePort, controlPlanePort] = [await freePort(), await freePort()];
	await timings.time('n8n start with engine-v2 (migrations on PostgreSQL)', async () => {
		n8n = await startN8n({
			packageRoot: repoRoot,
			env: {
				DB_TYPE: 'postgresdb',
				DB_POSTGRESDB_HOST: '127.0.0.1',
				DB_POSTGRESDB_PORT: String(pg.port),
				DB_POSTGRESDB_USER: pg.user,
				DB_POSTGRESDB_DATABASE: pg.database,
				DB_POSTGRESDB_PASSWORD: '',
				N8N_ENABLED_MODULES: 'engine-v2',
				N8N_ENGINE_DATABASE_URL: `postgres://${pg.user}@127.0.0.1:${pg.port}/n8n_engine`,
				N8N_ENGINE_HOST: '127.0.0.1',
				N8N_ENGINE_PORT: String(enginePort),
				N8N_ENGINE_CONTROL_PLANE_PORT: String(controlPlanePort),
				N8N_ENGINE_AUTH_SECRET: randomBytes(32).toString('hex'),
			},
		});
	});
	// the module logs these once its data plane database is migrated and both listeners are up
	expect(n8n.logs()).toContain(`Engine 2.0 listening on http://127.0.0.1:${enginePort}`);
	expect(n8n.logs()).toContain(
		`Engine 2.0 control plane listening on http://127.0.0.1:${controlPlanePort}`,
	);
	await timings.time('owner, login, credential, API key', async () => {
		await n8n.setupOwner();
		await n8n.login();
		credentialId = await n8n.createCredential({
			name: CREDENTIAL_NAME,
			type: 'marketplaceApi',
			data: { baseUrl: sandbox.baseUrl, apiKey: sandbox.demoApiKey },
		});
		api = await n8n.publicApi();
	});
}, 300_000);

afterAll(async () => {
	await stopKeepingLog(n8n, sandbox, 'engine-v2-n8n.log');
	await pg?.stop();
	console.log(`[engine-v2] timings:\n${timings.report()}`);
}, 120_000);

test('the premise, in n8n itself: on Engine 2.0 a webhook answered from the run gets 400, one answered at once runs', async () => {
	const ids = { immediate: 'engineV2HookNow01', fromRun: 'engineV2HookNode1' };
	const paths = {
		immediate: `engine-v2-now-${Date.now()}`,
		fromRun: `engine-v2-node-${Date.now()}`,
	};
	await timings.time('premise: two Webhook-node workflows published, one call each', async () => {
		await n8n.createWorkflow(webhookNodeWorkflow(ids.immediate, paths.immediate, 'onReceived'));
		await n8n.createWorkflow(webhookNodeWorkflow(ids.fromRun, paths.fromRun, 'responseNode'));
		for (const id of Object.values(ids)) {
			await api.activateWorkflow(id);
			await n8n.waitForActivation(id);
		}
		const call = async (path: string) => {
			const res = await fetch(`${n8n.baseUrl}/webhook/${path}`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify({ hello: 'engine' }),
			});
			return { status: res.status, body: await res.text() };
		};
		const fromRun = await call(paths.fromRun);
		const immediate = await call(paths.immediate);
		console.log(
			`[engine-v2] Webhook node on Engine 2.0: responseNode -> ${fromRun.status} ${fromRun.body}; onReceived -> ${immediate.status} ${immediate.body}`,
		);
		expect(fromRun.status).toBe(400);
		expect(fromRun.body).toContain("Engine 2.0 does not support the 'responseNode' response mode");
		expect(immediate.status).toBe(200);
		// and Engine 2.0 ran it: n8n's execution list (merged with the data plane's) shows a run of that
		// workflow with an Engine 2.0 id (a UUID v7; n8n's own engine numbers its executions)
		const run = await waitFor('the Engine 2.0 run of the immediate webhook', async () => {
			const filter = encodeURIComponent(JSON.stringify({ workflowId: ids.immediate }));
			const page = await n8n.rest<Json>('GET', `/executions?filter=${filter}`);
			return (page.results as Json[]).find((e) => e.status === 'success');
		});
		expect(String(run.id)).toMatch(
			/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
		);
		for (const id of Object.values(ids)) await api.deactivateWorkflow(id);
	});
});

test("engineType 'v2': publishing fails with a message naming Engine 2.0 and engineType, and nothing is registered", async () => {
	await n8n.createWorkflow(triggerWorkflow('v2'));
	const since = await lastSeq();
	const outcome = await timings.time(
		"publish with engineType 'v2' until n8n gives up",
		async () => {
			// the publication service activates in the background: /activate answers first, a refusing
			// checkExists is retried (1, 2, 4, 8 s apart), then publication-status says 'failed'
			let answer = '';
			try {
				await api.activateWorkflow(WORKFLOW_ID);
				answer = 'accepted';
			} catch (e) {
				answer = String(e);
			}
			const status = await publicationOutcome(WORKFLOW_ID);
			return { answer, status };
		},
	);
	console.log(
		`[engine-v2] /activate: ${outcome.answer.slice(0, 300)}; publication-status: ${JSON.stringify(outcome.status)}`,
	);
	expect(outcome.status.status).toBe('failed');
	const messages = (outcome.status.triggers as Json[]).map((t) => String(t.errorMessage ?? ''));
	const shown = [outcome.answer, ...messages].join('\n');
	expect(shown).toContain('Engine 2.0');
	expect(shown).toContain('engineType');
	expect(messages.some((m) => /Engine 2\.0.*engineType back to 'v1'.*publish again/.test(m))).toBe(
		true,
	);
	// refused before any request of checkExists/create: nothing was written to the service and it holds
	// no endpoint. n8n calls the node's delete hook after each refused attempt; it only lists the
	// endpoints (GET) and finds none at the workflow's URL.
	const requests = (await sandbox.control.requests(since)).map((r) => `${r.method} ${r.path}`);
	console.log(
		`[engine-v2] sandbox requests during the refused publication: ${requests.join(', ')}`,
	);
	expect(requests.filter((r) => r !== 'GET /v1/webhook-endpoints')).toEqual([]);
	expect(await sandbox.control.endpoints()).toEqual([]);
}, 120_000);

test("the same workflow set back to engineType 'v1' and published again: one endpoint, an order runs once", async () => {
	await timings.time("set engineType 'v1', publish, wait for publication", async () => {
		const stored = await n8n.rest<Json>('GET', `/workflows/${WORKFLOW_ID}`);
		await n8n.rest('PATCH', `/workflows/${WORKFLOW_ID}`, {
			versionId: stored.versionId,
			settings: { ...stored.settings, engineType: 'v1' },
		});
		await api.activateWorkflow(WORKFLOW_ID);
		await n8n.waitForActivation(WORKFLOW_ID);
	});
	const endpoints = await endpointsForTrigger();
	expect(endpoints.map((e) => [e.status, e.eventTypes])).toEqual([['Enabled', ['order.created']]]);
	expect(await sandbox.control.endpoints()).toHaveLength(1);

	const runs = await timings.time('order created -> its run (then 3 s quiet)', async () => {
		const { event } = await sandbox.control.createOrder({ brandId: 1 });
		const ofEvent = async () =>
			(await executionsOf(api, WORKFLOW_ID)).filter((e) =>
				nodeOutput(e, 'Order Created').some((item) => item.id === event.id),
			);
		await waitFor(
			`the run of ${String(event.id)}`,
			async () => ((await ofEvent()).length > 0 ? true : undefined),
			60_000,
			250,
		);
		await sleep(3000);
		return await ofEvent();
	});
	expect(runs.map((e) => [e.mode, e.status])).toEqual([['webhook', 'success']]);
	// before it, the activation check's test delivery: answered 401 by the trigger's route (n8n saves
	// the secret after create()), as on the default engine (test/e2e/marketplace.test.ts)
	const deliveries = await sandbox.control.deliveries();
	expect(deliveries.map((d) => [d.kind, d.eventType, d.status, d.responseStatusCode])).toEqual([
		['test', 'webhook.test', 'Failed', 401],
		['event', 'order.created', 'Delivered', 200],
	]);

	await timings.time('unpublish (endpoint deleted)', async () => {
		await api.deactivateWorkflow(WORKFLOW_ID);
		await waitFor('the endpoint to be deleted', async () =>
			(await sandbox.control.endpoints()).length === 0 ? true : undefined,
		);
	});
}, 120_000);

/**
 * The triggers in a real n8n 2.41.1 deployed as self-hosters deploy it: behind a reverse proxy
 * (test/e2e/reverseProxy.ts) that the service reaches and n8n itself cannot. N8N_WEBHOOK_URL is
 * the proxy; it forwards only the service's deliveries, chunked, with X-Forwarded-* headers, and
 * drops every other request (as a missing NAT hairpin or a company's egress rules do). Twice: n8n
 * serving http with N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true, and n8n serving https itself (its own
 * certificate, made for the public name) with n8n's default isolate settings.
 *
 *   .ci/with-node24 npm run build && .ci/with-node24 npx jest -c test/e2e/jest.config.js test/e2e/network.test.ts
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { allExecutions, bootBench, eventIdOf, PKG, triggerWorkflow } from '../bench/n8nBench';
import type { SandboxHandle } from '../sandbox';
import { USER_AGENT } from '../sandbox/sender';
import { describeEmpty, nodeOutput, sleep, splitRuns, Timings, waitFor } from './kit';
import { freePort, type N8nHandle, type PublicApi } from './n8n';
import { fromService, startReverseProxy, type ReverseProxy } from './reverseProxy';
import type { Json } from '../json';

const repoRoot = resolve(__dirname, '..', '..');
const TRIGGER_WF = 'netOrderTrigger1';
const POLLING_WF = 'netPollingSlow01';
const WEBHOOK_ID = '6c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f';
const timings = new Timings();

const CONFIGS = [
	{
		name: 'n8n serving http, N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true',
		tls: false,
		env: { N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE: 'true' },
	},
	{
		name: "n8n serving https itself, n8n's default isolate settings",
		tls: true,
		env: {} as Record<string, string>,
	},
];

/** A key and a self-signed certificate for the public name (not for the address n8n listens on). */
function certificate(dir: string): { key: string; cert: string } {
	const key = join(dir, 'key.pem');
	const cert = join(dir, 'cert.pem');
	execFileSync(
		'openssl',
		[
			'req',
			'-x509',
			'-newkey',
			'rsa:2048',
			'-nodes',
			'-keyout',
			key,
			'-out',
			cert,
			'-days',
			'2',
			'-subj',
			'/CN=n8n.example.com',
		],
		{ stdio: 'ignore' },
	);
	return { key, cert };
}

afterAll(() => console.log(`[e2e network] timings:\n${timings.report()}`));

describe.each(CONFIGS)('$name', ({ name, tls, env }) => {
	let sandbox: SandboxHandle;
	let proxy: ReverseProxy;
	let n8n: N8nHandle;
	let api: PublicApi;
	let credentialId: string;
	let dir: string;
	let endpointId: number;
	/** the next this many service deliveries get a re-indented body on their way, as a re-encoding proxy makes */
	let changeNext = 0;

	const runsOf = async (workflowId: string) => await allExecutions(api, workflowId, true);
	/** The trigger workflow's executions: runs (with output) and those with no output (copies, checks). */
	const triggerSplit = async () => splitRuns(await runsOf(TRIGGER_WF), 'Order Created');
	const triggerItem = (execution: Json) =>
		nodeOutput(execution as { data?: Json }, 'Order Created')[0] ?? {};

	beforeAll(async () => {
		dir = mkdtempSync(join(tmpdir(), 'n8n-net-'));
		const port = await freePort();
		proxy = await startReverseProxy({
			targets: () => [{ port, tls }],
			accept: fromService(USER_AGENT),
			rewriteBody: (body) => {
				if (changeNext === 0) return body;
				changeNext--;
				return Buffer.from(JSON.stringify(JSON.parse(body.toString()), null, 2));
			},
		});
		const tlsEnv: Record<string, string> = {};
		if (tls) {
			const { key, cert } = certificate(dir);
			Object.assign(tlsEnv, { N8N_PROTOCOL: 'https', N8N_SSL_KEY: key, N8N_SSL_CERT: cert });
		}
		({ sandbox, n8n, api, credentialId } = await timings.time(
			`${name}: sandbox, n8n boot, owner, credential`,
			() =>
				bootBench({
					port,
					readyTimeoutMs: 300_000,
					env: { N8N_WEBHOOK_URL: proxy.url, ...tlsEnv, ...env },
				}),
		));
		await n8n.createWorkflow({
			...triggerWorkflow(TRIGGER_WF, WEBHOOK_ID, credentialId),
			name: 'network: order arrives',
		});
		await api.activateWorkflow(TRIGGER_WF);
		await n8n.waitForActivation(TRIGGER_WF);
		const [endpoint] = await sandbox.control.endpoints();
		expect(endpoint.url).toBe(`${proxy.url}webhook/${WEBHOOK_ID}/webhook`);
		endpointId = endpoint.id;
	}, 420_000);

	afterAll(async () => {
		if (n8n) {
			mkdirSync(join(repoRoot, 'tmp'), { recursive: true });
			writeFileSync(join(repoRoot, 'tmp', `e2e-network-${tls ? 'https' : 'http'}.log`), n8n.logs());
		}
		await n8n?.stop();
		await proxy?.stop();
		await sandbox?.close();
		rmSync(dir, { recursive: true, force: true });
	}, 120_000);

	test('exactly once without n8n reaching its public URL: one event, a burst of 5, a back-to-back pair; 15 s of quiet, a restart, all sent again: none runs twice', async () => {
		const events: string[] = [];
		const ran = async (count: number) =>
			await waitFor(
				`${count} runs`,
				async () => ((await triggerSplit()).runs.length >= count ? true : undefined),
				60_000,
				300,
			);
		events.push((await sandbox.control.createOrder({ brandId: 1 })).event.id as string);
		await ran(1);
		const burst = await Promise.all(
			[1, 2, 3, 4, 5].map(async (i) => await sandbox.control.createOrder({ brandId: i })),
		);
		events.push(...burst.map((b) => b.event.id as string));
		await ran(6);
		for (let i = 0; i < 2; i++)
			events.push((await sandbox.control.createOrder({ brandId: 2 })).event.id as string);
		await ran(8);
		await sleep(15_000);
		await timings.time(`${name}: n8n restart`, () => n8n.restart());
		await n8n.login();
		const deliveries = (await sandbox.control.deliveries(endpointId)).filter((d) =>
			events.includes(d.eventId as string),
		);
		expect(deliveries.map((d) => d.status)).toEqual(events.map(() => 'Delivered'));
		const again = await Promise.all(
			deliveries.map(async (d) => await sandbox.control.redeliver(d.id)),
		);
		expect(again.map((d) => d.attemptLog.at(-1)!.statusCode)).toEqual(events.map(() => 200));
		const copies = await waitFor(
			'an execution for each copy',
			async () => {
				const empty = (await triggerSplit()).empty.filter((e) => e.mode === 'webhook');
				return empty.length >= events.length ? empty : undefined;
			},
			30_000,
		);
		await sleep(1500);
		const { runs, empty } = await triggerSplit();
		const ids = runs.map((e) => eventIdOf(e));
		console.log(
			`[e2e network] ${name}: ${ids.length} runs for ${events.length} events delivered twice; executions with no output ${describeEmpty(empty)}; proxy dropped ${proxy.dropped.length} request(s)`,
		);
		expect(ids.sort()).toEqual([...events].sort());
		// each copy: one execution with no output; the other is the check at the restart (the publication emits none)
		expect(copies).toHaveLength(events.length);
		expect(empty.filter((e) => e.mode !== 'webhook').map((e) => e.mode)).toEqual(['trigger']);
		// nothing of n8n's own went to its public address, and nothing failed to be recorded
		expect(proxy.dropped).toEqual([]);
		expect(n8n.logs()).not.toMatch(/Marketplace Trigger could not/);
	});

	test('a body changed on its way: 401, a log line saying what to check, no run, no rotation; the next event runs', async () => {
		const since = (await sandbox.control.requests()).at(-1)?.seq ?? 0;
		const executionsBefore = (await runsOf(TRIGGER_WF)).length;
		changeNext = 1;
		const changed = await sandbox.control.createOrder({ brandId: 3 });
		const refusedDelivery = await waitFor('the refused delivery', async () =>
			(await sandbox.control.deliveries(endpointId)).find(
				(d) => d.eventId === changed.event.id && d.responseStatusCode !== null,
			),
		);
		expect(refusedDelivery.responseStatusCode).toBe(401);
		expect(n8n.logs()).toMatch(
			/Marketplace Trigger refused a delivery \(401\): No v1 signature matches the signing secret\. A proxy that changes the request body, or a clock minutes off, causes this\./,
		);
		const next = await sandbox.control.createOrder({ brandId: 3 });
		const execution = await waitFor("the next event's execution", async () =>
			(await runsOf(TRIGGER_WF)).find((e) => eventIdOf(e) === next.event.id),
		);
		expect(triggerItem(execution)).toMatchObject({ id: next.event.id, type: 'order.created' });
		const rotations = (await sandbox.control.requests(since)).filter(
			(r) => r.route === 'rotateWebhookEndpointSecret',
		);
		expect(rotations).toEqual([]);
		// the refused delivery started no execution at all
		expect((await runsOf(TRIGGER_WF)).some((e) => eventIdOf(e) === changed.event.id)).toBe(false);
		expect((await runsOf(TRIGGER_WF)).length).toBe(executionsBefore + 1);
	});

	test('a poll that outlasts its interval (a service that hangs past two request timeouts) finishes; its order is reported once', async () => {
		// polls every 10 s: six cron times a minute (n8n refuses sub-minute crons, not several of them)
		const item = [0, 10, 20, 30, 40, 50].map((s) => ({
			mode: 'custom',
			cronExpression: `${s} * * * * *`,
		}));
		await n8n.createWorkflow({
			id: POLLING_WF,
			name: 'network: slow service poll',
			nodes: [
				{
					id: `${POLLING_WF}-poll`,
					name: 'New Orders',
					type: `${PKG}.marketplacePollingTrigger`,
					typeVersion: 1,
					position: [0, 0],
					credentials: {
						marketplaceApi: { id: credentialId, name: 'Marketplace sandbox (bench)' },
					},
					parameters: {
						pollTimes: { item },
						events: ['created'],
						requestOptions: { timeout: 5000, maxAttempts: 3 },
					},
				},
			],
			connections: {},
			settings: { executionOrder: 'v1' },
		});
		await api.activateWorkflow(POLLING_WF);
		await n8n.waitForActivation(POLLING_WF);
		const logFrom = n8n.logs().length;
		await sandbox.control.injectFault({
			route: 'listOrders',
			mode: 'hang',
			hangMs: 8000,
			count: 2,
		});
		const { order } = await sandbox.control.createOrder({ brandId: 4 });
		const reported = async () =>
			(await runsOf(POLLING_WF))
				.flatMap((e) => nodeOutput(e as { data?: Json }, 'New Orders'))
				.filter((o) => o.id === order.id);
		await waitFor(
			"the slow poll's report of the new order",
			async () => ((await reported()).length > 0 ? true : undefined),
			90_000,
			500,
		);
		// two more polls after it
		await sleep(21_000);
		await api.deactivateWorkflow(POLLING_WF);
		const logs = n8n.logs().slice(logFrom);
		expect(logs).toMatch(/the previous check is still running; this one waits for it/);
		expect(logs).not.toMatch(/No bridge acquired/);
		expect(await reported()).toHaveLength(1);
		expect((await sandbox.control.faults()).faults).toEqual([]);
		// no poll failed (n8n records a failed poll as an execution in error)
		expect(
			(await runsOf(POLLING_WF)).filter((e) => e.status !== 'success').map((e) => e.status),
		).toEqual([]);
	});
});

/**
 * The Marketplace Trigger in a real n8n 2.41.1 with n8n's SSRF protection on
 * (`N8N_SSRF_PROTECTION_ENABLED=true`): n8n's request helpers refuse private and loopback addresses
 * except the service's host, allowed by name (`N8N_SSRF_ALLOWED_HOSTNAMES=localhost`, the credential's
 * Base URL `http://localhost:<port>`), as in a hardened deployment. Every request the trigger makes
 * goes to the service, so each promise holds as without it:
 *
 * 1. events run once; after a restart, every event sent again starts an execution with no output,
 *    no run;
 * 2. n8n stopped while orders are created, started, nothing delivered: each runs once within 90 s of
 *    the start (the check trigger() emits at the start reads the orders from the service); the
 *    service's retries start no run.
 *
 * Executions with no output (copies, checks that found nothing) are counted apart and printed.
 *
 *   .ci/with-node24 npm run build && .ci/with-node24 npx jest -c test/e2e/jest.config.js test/e2e/ssrf.test.ts
 */
import { allExecutions, bootBench, eventIdOf, triggerWorkflow } from '../bench/n8nBench';
import type { Json } from '../json';
import type { SandboxHandle } from '../sandbox';
import {
	describeEmpty,
	nodeOutput,
	ordersWhileDown,
	sleep,
	splitRuns,
	stopKeepingLog,
	waitFor,
	type MissedOrder,
} from './kit';
import type { N8nHandle, PublicApi } from './n8n';

const BRAND = 2;
const WORKFLOW = { id: 'ssrfOnTrigger001', webhookId: '3c2b1a09-8f7e-4d6c-9b5a-4e3d2c1b0a98' };

let sandbox: SandboxHandle;
let n8n: N8nHandle;
let api: PublicApi;

type Item = { id: string; data: { orderId: number }; caughtUp?: boolean };
const executions = async () => await allExecutions(api, WORKFLOW.id, true);
const itemsOf = (e: Json) => nodeOutput(e as { data?: Json }, 'Order Created') as unknown as Item[];
const split = async () => splitRuns(await executions(), 'Order Created');
/** Order ids that ran, one entry per run of each (delivered or caught up). */
const ordersRun = async () =>
	(await split()).runs.flatMap((e) => itemsOf(e).map((i) => i.data.orderId));

beforeAll(async () => {
	let credentialId: string;
	({ sandbox, n8n, api, credentialId } = await bootBench({
		readyTimeoutMs: 300_000,
		env: { N8N_SSRF_PROTECTION_ENABLED: 'true', N8N_SSRF_ALLOWED_HOSTNAMES: 'localhost' },
	}));
	const byName = await n8n.createCredential({
		name: 'Marketplace sandbox by name',
		type: 'marketplaceApi',
		data: {
			baseUrl: sandbox.baseUrl.replace('127.0.0.1', 'localhost'),
			apiKey: sandbox.demoApiKey,
		},
	});
	void credentialId;
	const workflow = triggerWorkflow(WORKFLOW.id, WORKFLOW.webhookId, byName, true);
	(workflow.nodes[0] as { credentials: unknown }).credentials = {
		marketplaceApi: { id: byName, name: 'Marketplace sandbox by name' },
	};
	await n8n.createWorkflow({ ...workflow, name: 'ssrf protection on' });
	await api.activateWorkflow(WORKFLOW.id);
	await n8n.waitForActivation(WORKFLOW.id);
}, 420_000);

afterAll(async () => {
	const empty = await split().then(
		(s) => describeEmpty(s.empty),
		(e: Error) => e.message,
	);
	console.log(`[e2e ssrf] executions with no output over the file: ${empty}`);
	await stopKeepingLog(n8n, sandbox, 'e2e-ssrf.log');
}, 120_000);

test('events run once; after a restart every event sent again starts an execution with no output, no run', async () => {
	const made: number[] = [];
	for (let i = 0; i < 4; i++)
		made.push((await sandbox.control.createOrder({ brandId: BRAND })).order.id as number);
	await waitFor('four runs', async () => ((await ordersRun()).length >= 4 ? true : undefined));
	await sleep(3000);
	await n8n.restart();
	await n8n.login();
	const endpointId = (await sandbox.control.endpoints())[0].id;
	const originals = (await sandbox.control.deliveries(endpointId)).filter(
		(d) => d.kind !== 'redelivery' && d.eventType === 'order.created',
	);
	const again = [];
	for (const d of originals) again.push(await sandbox.control.redeliver(d.id));
	expect(again.map((d) => d.responseStatusCode)).toEqual(originals.map(() => 200));
	const copies = await waitFor('an execution for each copy', async () => {
		const empty = (await split()).empty.filter((e) => e.mode === 'webhook');
		return empty.length >= originals.length ? empty : undefined;
	});
	await sleep(1500);
	expect((await ordersRun()).sort()).toEqual([...made].sort());
	expect(copies).toHaveLength(originals.length);
	// the other execution with no output: the check at the restart (the publication emits none)
	expect((await split()).empty.filter((e) => e.mode !== 'webhook').map((e) => e.mode)).toEqual([
		'trigger',
	]);
	expect((await split()).runs.map((e) => eventIdOf(e)).filter((id) => id === undefined)).toEqual(
		[],
	);
	// the protection is on (n8n reads the setting and says so at start), and refused nothing of ours
	expect(n8n.logs()).toMatch(/N8N_SSRF_PROTECTION_ENABLED/);
	expect(n8n.logs()).not.toMatch(
		/blocked because it resolves to a restricted IP|Marketplace Trigger could not/,
	);
});

test('n8n down while orders come, started, nothing delivered: each runs once within 90 s of the start; the retries start no run', async () => {
	let missed: MissedOrder[] = [];
	let startedAt = 0;
	await n8n.restart(async () => {
		missed = (await ordersWhileDown(sandbox, BRAND, 2)).missed;
		startedAt = Date.now();
	});
	await n8n.login();
	const ids = missed.map((m) => m.orderId);
	const caught = await waitFor(
		'the missed orders caught up',
		async () => {
			const runs = (await split()).runs.flatMap((e) =>
				itemsOf(e)
					.filter((i) => i.caughtUp === true)
					.map((i) => ({ orderId: i.data.orderId, at: Date.parse(String(e.stoppedAt)) })),
			);
			return ids.every((id) => runs.some((r) => r.orderId === id)) ? runs : undefined;
		},
		90_000,
		500,
	);
	expect(caught.map((r) => r.orderId).sort()).toEqual([...ids].sort());
	for (const run of caught) expect(run.at - startedAt).toBeLessThanOrEqual(90_000);
	console.log(
		`[e2e ssrf] n8n started -> the missed orders' run ended ${((caught[0].at - startedAt) / 1000).toFixed(1)} s later, with no delivery`,
	);
	const before = await split();
	await sandbox.control.advanceClock(61);
	await waitFor('an execution for each retry', async () =>
		(await split()).empty.length >= before.empty.length + ids.length ? true : undefined,
	);
	await sleep(1500);
	const after = await split();
	expect(after.runs.length).toBe(before.runs.length);
	expect(after.empty.length - before.empty.length).toBe(ids.length);
	const ran = await ordersRun();
	for (const id of ids) expect(ran.filter((o) => o === id)).toHaveLength(1);
}, 180_000);

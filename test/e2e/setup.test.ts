/**
 * Setting up the Marketplace Trigger in a real n8n 2.41.1, against the sandbox:
 * - "Listen for test event" (POST /rest/workflows/{id}/run with triggerToStartFrom) waits; a Webhook
 *   Endpoint > Test delivery to its test URL yields the sample item (the newest order) within seconds,
 *   with no order created;
 * - activation that the sandbox can reach starts no execution: neither its reachability check's test
 *   delivery nor trigger() (the first publication emits no check);
 * - activation with N8N_WEBHOOK_URL pointing where nothing listens fails, and n8n's publication
 *   status shows the trigger's message (the URL, what the service saw, what to check).
 *
 *   .ci/with-node24 npm run --silent build && .ci/with-node24 npx jest -c test/e2e/jest.config.js test/e2e/setup.test.ts
 */
import { bootBench, triggerWorkflow, type Bench } from '../bench/n8nBench';
import { freePort, type N8nHandle } from './n8n';
import { nodeOutput, testDeliveryWhileListening, waitFor } from './kit';
import type { Json } from '../json';

const WEBHOOK_ID = '7d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const BRAND = 3;

async function executionsOf(b: Bench, workflowId: string) {
	return await b.api.listExecutions({ workflowId, includeData: true, limit: 50 });
}

async function workflowOf(b: Bench, id: string, parameters: Record<string, unknown>) {
	const workflow = triggerWorkflow(id, WEBHOOK_ID, b.credentialId) as {
		nodes: Array<{ parameters: unknown }>;
	};
	workflow.nodes[0].parameters = parameters;
	await b.n8n.createWorkflow(workflow as unknown as Record<string, unknown>);
}

describe('reachable n8n', () => {
	let b: Bench;
	beforeAll(async () => {
		b = await bootBench();
	}, 120_000);
	afterAll(async () => {
		await b?.n8n.stop();
		await b?.sandbox.close();
	});

	test('Listen for test event waits; a test delivery to its URL yields the sample (newest order, Fetch Current State) within seconds, with no order created', async () => {
		const id = 'setupSample00001';
		await workflowOf(b, id, {
			eventTypes: ['order.created'],
			options: { fetchCurrentState: true },
		});
		const ordersBefore = ((await b.sandbox.control.state('orders')) as unknown[]).length;
		const answer = await b.n8n.startManualRun(id, 'Order Created');
		expect(answer.waitingForWebhook).toBe(true);
		// listening alone gets no sample
		await new Promise((r) => setTimeout(r, 3000));
		expect(await executionsOf(b, id)).toEqual([]);
		const started = Date.now();
		const testEndpoint = await testDeliveryWhileListening(b.sandbox, WEBHOOK_ID);
		const execution = await waitFor(
			'the sample run',
			async () => (await executionsOf(b, id)).find((e) => e.status === 'success'),
			20_000,
			200,
		).catch(async (error: Error) => {
			const deliveries = (await b.sandbox.control.deliveries()).filter((d) => d.kind === 'test');
			const log = b.n8n
				.logs()
				.split('\n')
				.filter((l) => /Marketplace|sample|webhook-test|rror/i.test(l))
				.slice(-30)
				.join('\n');
			throw new Error(
				`${error.message}; test deliveries: ${JSON.stringify(deliveries.map((d) => [d.responseStatusCode, d.attempts, d.status]))}; executions: ${JSON.stringify((await executionsOf(b, id)).map((e) => e.status))}; n8n log:\n${log}`,
			);
		});
		const ms = Date.now() - started;
		const [item] = nodeOutput(execution as { data?: Json }, 'Order Created') as Array<
			Record<string, Json>
		>;
		expect(item).toMatchObject({
			type: 'order.created',
			sample: true,
			sampleSource: 'newest-order',
		});
		expect((item.current as Record<string, Json>).id).toBe(
			(item.data as Record<string, Json>).orderId,
		);
		// the node after the trigger got it too
		expect(nodeOutput(execution as { data?: Json }, 'Done')).toHaveLength(1);
		expect(((await b.sandbox.control.state('orders')) as unknown[]).length).toBe(ordersBefore);
		expect(ms).toBeLessThan(10_000);
		console.log(`sample run ${ms} ms after the test delivery was asked for`);
		// the reachability check's test delivery (no secret yet: 401), then the one asked for, answered 200
		const tests = (await b.sandbox.control.deliveries(testEndpoint)).filter(
			(d) => d.kind === 'test',
		);
		expect(tests.map((d) => d.responseStatusCode)).toEqual([401, 200]);
		// the test endpoint is removed afterwards
		await waitFor(
			'the test endpoint removed',
			async () =>
				(await b.sandbox.control.endpoints()).some((e) => e.url.includes('/webhook-test/'))
					? undefined
					: true,
			20_000,
		);
	}, 60_000);

	test('activation the sandbox can reach succeeds and starts no execution', async () => {
		const id = 'setupActive00001';
		await workflowOf(b, id, { eventTypes: ['order.created'] });
		await b.api.activateWorkflow(id);
		await b.n8n.waitForActivation(id);
		const endpoint = (await b.sandbox.control.endpoints()).find((e) =>
			e.url.includes(`/webhook/${WEBHOOK_ID}/`),
		)!;
		const tests = (await b.sandbox.control.deliveries(endpoint.id)).filter(
			(d) => d.kind === 'test',
		);
		expect(tests.map((d) => d.responseStatusCode)).toEqual([401]);
		await new Promise((r) => setTimeout(r, 1500));
		// no execution: the first publication emits no check (it reads nothing: it starts the record)
		expect(await executionsOf(b, id)).toEqual([]);
		// a real order runs once
		const { order } = await b.sandbox.control.createOrder({ brandId: BRAND });
		const execution = await waitFor(
			'the order run',
			async () =>
				(await executionsOf(b, id)).find(
					(e) =>
						e.status === 'success' && nodeOutput(e as { data?: Json }, 'Order Created').length > 0,
				),
			20_000,
			200,
		);
		const [item] = nodeOutput(execution as { data?: Json }, 'Order Created') as Array<
			Record<string, Json>
		>;
		expect(item).toMatchObject({ type: 'order.created', data: { orderId: order.id } });
		expect(item.sample).toBeUndefined();
		await b.api.deactivateWorkflow(id);
	}, 60_000);
});

describe('N8N_WEBHOOK_URL where nothing listens', () => {
	let b: Bench;
	let n8n: N8nHandle;
	let nowhere = '';
	beforeAll(async () => {
		nowhere = `http://127.0.0.1:${await freePort()}/`;
		b = await bootBench({ env: { N8N_WEBHOOK_URL: nowhere } });
		n8n = b.n8n;
	}, 120_000);
	afterAll(async () => {
		await n8n?.stop();
		await b?.sandbox.close();
	});

	test('activation fails, and the publication status shows the URL, what the service saw and what to check', async () => {
		const id = 'setupNowhere0001';
		await workflowOf(b, id, { eventTypes: ['order.created'] });
		await b.api.activateWorkflow(id).catch(() => undefined);
		const error = await n8n.waitForActivation(id, 60_000).then(
			(status) => JSON.stringify(status),
			(e: Error) => e.message,
		);
		expect(error).toContain(`${nowhere}webhook/${WEBHOOK_ID}/webhook`);
		expect(error).toMatch(/could not reach this trigger/);
		expect(error).toMatch(/no HTTP answer/);
		expect(error).toMatch(/N8N_WEBHOOK_URL/);
		console.log(`publication status: ${error.slice(0, 800)}`);
		// nothing stays registered at the service for that URL
		expect((await b.sandbox.control.endpoints()).filter((e) => e.url.startsWith(nowhere))).toEqual(
			[],
		);
	}, 90_000);
});

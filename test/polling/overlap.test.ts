/**
 * Overlapping polls under n8n 2.41.1's vm expression engine, as an active workflow polls: one
 * Workflow, hence one expression isolate, for every poll of it. A poll that starts while the
 * previous one still waits on a slow service must not release the isolate the running poll needs
 * for its next request (its Authorization header is an expression of the credential).
 */
import type { INodeExecutionData } from 'n8n-workflow';
import { Expression } from 'n8n-workflow';

import { MarketplaceApi } from '../../credentials/MarketplaceApi.credentials';
import { MarketplacePollingTrigger } from '../../nodes/MarketplacePollingTrigger/MarketplacePollingTrigger.node';
import { useSteppedClock } from '../action/clock';
import { createPollHarness } from '../engine/harness';
import { initN8nVmEngine } from '../engine/vmEngine';
import { startSandbox, type SandboxHandle } from '../sandbox';

let sandbox: SandboxHandle;
beforeAll(async () => {
	sandbox = await startSandbox();
});
afterAll(async () => await sandbox?.close());
const clock = useSteppedClock(() => sandbox.control);

describe.each([
	["n8n's default isolate settings", false],
	['N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true', true],
])('%s', (_name, lazyAcquire) => {
	beforeAll(async () => {
		await initN8nVmEngine(lazyAcquire);
	});
	afterAll(async () => await Expression.disposeExpressionEngine());

	test('a poll that outlasts its interval finishes; the overlapping one waits and reports nothing; each order once', async () => {
		const poller = createPollHarness({
			node: new MarketplacePollingTrigger(),
			credentialTypes: [new MarketplaceApi()],
			credentials: { marketplaceApi: { baseUrl: sandbox.baseUrl, apiKey: sandbox.demoApiKey } },
			parameters: { events: ['created'], requestOptions: { timeout: 300, maxAttempts: 3 } },
			shareWorkflow: true,
		});
		await poller.poll();
		const order = (await sandbox.control.createOrder({ brandId: 1 })).order;
		// the first attempt hangs past the request timeout; the retry needs the credential's header again
		await sandbox.control.injectFault({
			route: 'listOrders',
			mode: 'hang',
			hangMs: 1500,
			count: 1,
		});
		const slow = poller.poll();
		while ((await sandbox.control.faults()).faults.length > 0)
			await new Promise((r) => setImmediate(r));
		const overlapping = await poller.poll();
		expect(overlapping).toBeNull();
		const reported: INodeExecutionData[] = (await slow)?.[0] ?? [];
		expect(reported.map((i) => i.json.id)).toEqual([order.id]);
		// the slow poll retried once, after the timeout
		expect(clock().waits).toHaveLength(1);
		expect(await poller.poll()).toBeNull();
	});
});

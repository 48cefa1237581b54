/**
 * The trigger harness's responseMode 'responseNode' runs, data-deduplication store and trigger()
 * support, proven with a tiny inline node: webhook() hands the request on without answering,
 * execute() (run by n8n-core's WorkflowExecute) answers with sendResponse and dedups with
 * checkProcessedAndRecord, trigger() emits on a timer with deduplication keys.
 */
import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	ITriggerFunctions,
	ITriggerResponse,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';

import {
	createTriggerHarness,
	HarnessDatabase,
	processedDataHash,
	type TriggerHarness,
	type TriggerHarnessOptions,
} from './harness';

let ticks = 0;

const testNode: INodeType = {
	description: {
		displayName: 'Response Node Test Trigger',
		name: 'responseNodeTestTrigger',
		group: ['trigger'],
		version: 1,
		description: 'Answers from execute()',
		defaults: { name: 'Response Node Test Trigger' },
		inputs: [],
		outputs: ['main'],
		webhooks: [{ name: 'default', httpMethod: 'POST', responseMode: 'responseNode', path: 'hook' }],
		properties: [
			{ displayName: 'Max Entries', name: 'maxEntries', type: 'number', default: 3 },
			{ displayName: 'Tick (ms)', name: 'tickMs', type: 'number', default: 10 },
		],
	} as INodeType['description'],

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		const body = this.getBodyData();
		if (body.answerHere) {
			this.getResponseObject().status(202).json({ early: true });
			return { noWebhookResponse: true };
		}
		// saved before the run (noWebhookResponse), so execute() sees it
		const staticData = this.getWorkflowStaticData('node');
		staticData.requests = ((staticData.requests as number) ?? 0) + 1;
		const items: INodeExecutionData[] = body.empty ? [] : [{ json: body }];
		return { noWebhookResponse: true, workflowData: [items] };
	},

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = this.getInputData();
		const ids = items.map((item) => String(item.json.id));
		const maxEntries = this.getNodeParameter('maxEntries', 0) as number;
		const checked = await this.helpers.checkProcessedAndRecord(ids, 'node', {
			mode: 'entries',
			maxEntries,
		});
		const fresh = items.filter((item) => checked.new.includes(String(item.json.id)));
		const first = (items[0]?.json ?? {}) as IDataObject;
		if (first.writeStatic) this.getWorkflowStaticData('node').written = true;
		if (typeof first.holdMs === 'number') await sleep(first.holdMs);
		if (this.getMode() !== 'trigger' && !first.silent) {
			const answer = {
				accepted: fresh.map((item) => item.json.id),
				requests: this.getWorkflowStaticData('node').requests,
			};
			await this.sendResponse({
				body: first.objectBody ? answer : Buffer.from(JSON.stringify(answer)),
				headers: { 'content-type': 'application/json', 'x-answered-by': 'execute' },
				statusCode: 201,
			});
		}
		return [fresh];
	},

	async trigger(this: ITriggerFunctions): Promise<ITriggerResponse> {
		// keys tick-1, tick-1, tick-2, tick-2, …: every second emit repeats the previous key
		const timer = setInterval(
			() => {
				ticks++;
				const key = `tick-${Math.ceil(ticks / 2)}`;
				this.emit([[{ json: { id: `${key}#${ticks}` } }]], undefined, undefined, key);
			},
			this.getNodeParameter('tickMs', 10) as number,
		);
		return { closeFunction: async () => clearInterval(timer) };
	},
};

const open: TriggerHarness[] = [];

async function harness(opts: Partial<TriggerHarnessOptions> = {}): Promise<TriggerHarness> {
	const h = await createTriggerHarness({
		node: testNode,
		credentialTypes: [],
		parameters: {},
		...opts,
	});
	open.push(h);
	return h;
}

afterEach(async () => {
	await Promise.all(open.splice(0).map(async (h) => await h.close()));
});

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms));

describe('responseMode responseNode', () => {
	test('execute() answers with its Buffer body; runs record its output, executions every run', async () => {
		const h = await harness();
		const first = await h.deliver({ id: 'a' });
		expect(first).toMatchObject({ status: 201, body: { accepted: ['a'], requests: 1 } });
		expect(first.headers['x-answered-by']).toBe('execute');
		// applySandboxCSP, as n8n's setupResponseNodePromise applies it
		expect(first.headers['content-security-policy']).toContain('sandbox');

		const again = await h.deliver({ id: 'a' });
		expect(again).toMatchObject({ status: 201, body: { accepted: [], requests: 2 } });
		await h.settled();
		expect(h.executions.map((e) => [e.source, e.mode, e.output?.[0].length])).toEqual([
			['webhook', 'webhook', 1],
			['webhook', 'webhook', 0],
		]);
		expect(h.runs).toEqual([[[{ json: { id: 'a' }, pairedItem: { item: 0 } }]]]);
		expect(h.staticData).toEqual({ requests: 2 });

		const test = await h.deliver({ id: 'b' }, {}, { test: true });
		expect(test).toMatchObject({ status: 201, body: { accepted: ['b'] } });
		await h.settled();
		expect(h.executions[2].mode).toBe('manual');
		expect(h.errors).toEqual([]);
	});

	test('webhook() answering itself starts no run', async () => {
		const h = await harness();
		await expect(h.deliver({ answerHere: true })).resolves.toMatchObject({
			status: 202,
			body: { early: true },
		});
		await h.settled();
		expect(h.executions).toEqual([]);
	});

	test('a run without sendResponse leaves the request open (also when execute() gets no item)', async () => {
		const h = await harness();
		const silent = await h.deliver({ id: 's', silent: true }, {}, { timeoutMs: 300 });
		expect(silent).toMatchObject({ status: 0, timedOut: true });
		const empty = await h.deliver({ empty: true }, {}, { timeoutMs: 300 });
		expect(empty.timedOut).toBe(true);
		await h.settled();
		// WorkflowExecute.runNode does not call execute() when its input has no item
		expect(h.executions.map((e) => e.output)).toEqual([
			[[{ json: { id: 's', silent: true }, pairedItem: { item: 0 } }]],
			null,
		]);
		expect(h.processedData()?.value.data).toEqual([processedDataHash('s')]);
	});

	test('an object body after noWebhookResponse: n8n only ends the response (empty 200)', async () => {
		const h = await harness();
		const res = await h.deliver({ id: 'o', objectBody: true });
		expect(res).toMatchObject({ status: 200, text: '' });
		expect(res.headers['x-answered-by']).toBeUndefined();
	});

	test('static data written inside a webhook run is saved after the run (hookFunctionsSave), whole, over what was saved meanwhile; in a manual run it is dropped', async () => {
		const h = await harness();
		await h.deliver({ id: 'w', writeStatic: true });
		await h.settled();
		expect(h.executions[0].staticDataChanged).toBe(true);
		expect(h.errors).toEqual([]);
		expect(h.staticData).toEqual({ requests: 1, written: true });

		// a run that writes nothing saves nothing: what another process saved meanwhile stays
		h.staticData = { requests: 1, written: true, other: 'saved meanwhile' };
		await h.deliver({ id: 'r' });
		await h.settled();
		expect(h.executions[1].staticDataChanged).toBe(false);
		expect(h.staticData).toEqual({ requests: 2, written: true, other: 'saved meanwhile' });

		// a run that writes saves the copy it loaded at its start, over a save made during the run
		h.staticData = { requests: 2 };
		const answered = h.deliver({ id: 'x', writeStatic: true, holdMs: 300 });
		// the run loaded its copy as it was recorded (one tick); it holds 300 ms
		while (h.executions.length < 3) await sleep(5);
		expect(h.executions[2].output).toBeNull();
		h.staticData = { requests: 99, other: 'saved during the run' };
		await answered;
		await h.settled();
		expect(h.executions[2].staticDataChanged).toBe(true);
		expect(h.staticData).toEqual({ requests: 3, written: true });

		// manual: webhook()'s own write is saved before the run (it answered itself), the run's is not
		h.staticData = { requests: 5 };
		await h.deliver({ id: 'm', writeStatic: true }, {}, { test: true });
		await h.settled();
		expect(h.executions[3]).toMatchObject({ mode: 'manual', staticDataChanged: false });
		expect(h.staticData).toEqual({ requests: 6 });
		expect(h.errors).toEqual([]);
	});
});

describe('data deduplication store', () => {
	test('two harnesses on one database see each other’s entries; another database does not', async () => {
		const database = new HarnessDatabase();
		const a = await harness({ database });
		const b = await harness({ database });
		const other = await harness();

		expect((await a.deliver({ id: 'x' })).body).toMatchObject({ accepted: ['x'] });
		expect((await b.deliver({ id: 'x' })).body).toMatchObject({ accepted: [] });
		expect((await other.deliver({ id: 'x' })).body).toMatchObject({ accepted: ['x'] });
		// static data is in the database too: both "processes" counted into one row
		expect(b.staticData.requests).toBe(2);
		expect(a.processedData()).toEqual({
			workflowId: 'harness-trigger-workflow',
			context: 'n:trigger-under-test-id',
			value: { mode: 'entries', data: [processedDataHash('x')] },
		});

		// maxEntries 3 keeps the newest three hashes: x falls out and is new again
		for (const id of ['y', 'z', 'w']) await a.deliver({ id });
		expect(b.processedData()?.value.data).toEqual(['y', 'z', 'w'].map(processedDataHash));
		expect((await b.deliver({ id: 'x' })).body).toMatchObject({ accepted: ['x'] });
	});
});

describe('trigger()', () => {
	test('an emit whose deduplication key was used starts no run; closeFunction stops the timer', async () => {
		ticks = 0;
		const h = await harness();
		await h.startTrigger();
		const deadline = Date.now() + 5000;
		while (ticks < 6 && Date.now() < deadline) await sleep(5);
		await h.stopTrigger();
		const stoppedAt = ticks;
		await sleep(60);
		expect(ticks).toBe(stoppedAt);
		await h.settled();

		const keys = h.executions.map((e) => e.deduplicationKey);
		expect(new Set(keys).size).toBe(keys.length);
		expect(keys).toEqual(
			Array.from({ length: Math.ceil(stoppedAt / 2) }, (_, i) => `tick-${i + 1}`),
		);
		expect(h.duplicateEmits.map((d) => d.deduplicationKey)).toEqual(
			Array.from({ length: Math.floor(stoppedAt / 2) }, (_, i) => `tick-${i + 1}`),
		);
		// execute() ran on the emitted items (mode 'trigger') and recorded them as processed
		expect(h.executions.every((e) => e.source === 'trigger' && e.mode === 'trigger')).toBe(true);
		expect(h.runs).toHaveLength(keys.length);
		expect(h.runs[0][0][0].json.id).toBe('tick-1#1');
		expect(h.processedData()?.value.data).toHaveLength(3);
		expect(h.errors).toEqual([]);
	});
});

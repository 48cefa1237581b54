/**
 * End-to-end: the Marketplace node as a tool of n8n's AI Agent in a real n8n 2.41.1. The example
 * workflow `workflows/order-assistant.json` (Chat Trigger -> AI Agent with an OpenAI Chat Model and
 * three Marketplace tools) is imported with n8n's CLI and published; its chat webhook is called as a
 * chat client calls it. The chat model is a scripted OpenAI-compatible server on loopback
 * (fakeChatModel.ts) that records every request, so the tests read exactly what the model was given.
 *
 *   .ci/with-node24 npm run build && .ci/with-node24 npx jest -c test/e2e/jest.config.js test/e2e/agent.test.ts
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { startSandbox, type SandboxHandle } from '../sandbox';
import type { Json } from '../json';
import { DEMO_CREDENTIAL } from './dev';
import { startFakeChatModel, type FakeChatModel, type ModelTurn } from './fakeChatModel';
import { executionsOf, Timings, waitFor } from './kit';
import { startN8n, type N8nHandle, type PublicApi } from './n8n';

const repoRoot = resolve(__dirname, '..', '..');
const WORKFLOW_ID = 'mktOrderAssist01';
const CHAT_WEBHOOK_ID = '5b8d2e14-7c3a-4f19-a0d6-2e9c4b7a6f33';
/** The credential order-assistant.json names for its chat model. */
const OPENAI_CREDENTIAL = {
	id: 'mktOpenAiModel01',
	name: 'OpenAI (or an OpenAI-compatible server)',
	type: 'openAiApi',
};
const OPENAI_KEY = 'sk-fake-model-key-e2e';

const timings = new Timings();
let sandbox: SandboxHandle;
let model: FakeChatModel;
let n8n: N8nHandle;
let api: PublicApi;

/** Text of a chat message whose content is a string or a list of parts. */
const textOf = (content: Json): string =>
	typeof content === 'string'
		? content
		: Array.isArray(content)
			? content.map((p: Json) => p?.text ?? '').join('')
			: '';

/**
 * The scripted model: reads the newest message. A user asking for a brand's orders of today gets a
 * List Orders call (today's date taken from the system message, as a real model would); "mark order
 * X packed" gets a Mark Orders Packed call with X as given, even when X is no ID; a tool's answer is
 * quoted back as the final text.
 */
function decide(body: Json): ModelTurn {
	const messages: Json[] = body.messages ?? [];
	const last = messages[messages.length - 1];
	const toolNamed = (name: string): string => {
		const tool = (body.tools ?? []).find((t: Json) => t.function?.name === name);
		if (!tool)
			throw new Error(
				`no tool ${name} among ${JSON.stringify((body.tools ?? []).map((t: Json) => t.function?.name))}`,
			);
		return tool.function.name;
	};
	if (last?.role === 'tool') return { text: `Tool answer: ${textOf(last.content)}` };
	const said = textOf(last?.content);
	const list = /list today's orders of brand (\d+)/i.exec(said);
	if (list) {
		const system = textOf(messages.find((m) => m.role === 'system')?.content);
		const today = /Today is (\d{4}-\d{2}-\d{2})/.exec(system)?.[1];
		if (!today) throw new Error(`no date in the system message: ${system}`);
		return {
			toolCalls: [
				{ name: toolNamed('List_Orders'), args: { brandIds: list[1], startDate: today } },
			],
		};
	}
	const show = /show order (\d+)/i.exec(said);
	if (show)
		return { toolCalls: [{ name: toolNamed('Get_Order'), args: { orderId: Number(show[1]) } }] };
	if (/mark the first of them packed/i.test(said)) {
		// Only the conversation so far can say which orders "them" are: the memory must have kept it.
		const earlier = messages.filter((m) => m.role === 'assistant').map((m) => textOf(m.content));
		const firstId = /"id":(\d+)/.exec(earlier[earlier.length - 1] ?? '')?.[1];
		if (!firstId) throw new Error('no earlier answer listing orders in the conversation');
		return { toolCalls: [{ name: toolNamed('Mark_Orders_Packed'), args: { orderIds: firstId } }] };
	}
	const pack = /mark order (\S+) packed/i.exec(said);
	if (pack)
		return { toolCalls: [{ name: toolNamed('Mark_Orders_Packed'), args: { orderIds: pack[1] } }] };
	return { text: 'I can list orders and mark them packed.' };
}

let sessions = 0;
let chats = 0;

/** One chat message through the published Chat Trigger, as the chat widget sends it (a new session unless given). */
async function chat(
	chatInput: string,
	sessionId = `e2e-session-${++sessions}`,
): Promise<{ status: number; body: Json; requestsBefore: number }> {
	const requestsBefore = model.requests.length;
	chats++;
	const res = await fetch(`${n8n.baseUrl}/webhook/${CHAT_WEBHOOK_ID}/chat`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ action: 'sendMessage', sessionId, chatInput }),
	});
	const text = await res.text();
	let body: Json = text;
	try {
		body = JSON.parse(text);
	} catch {}
	return { status: res.status, body, requestsBefore };
}

/** The tool messages the model received after a given request index. */
const toolMessagesSince = (index: number): Json[] =>
	model.requests
		.slice(index)
		.flatMap((r) => (r.body.messages ?? []).filter((m: Json) => m.role === 'tool'))
		.filter((m, i, all) => all.findIndex((o) => o.tool_call_id === m.tool_call_id) === i);

/** The execution of the last chat message (n8n may answer the chat before it has saved the run). */
const latestExecution = async () =>
	await waitFor('the execution of every chat message', async () => {
		const list = await executionsOf(api, WORKFLOW_ID);
		return list.length >= chats ? list[list.length - 1] : undefined;
	});

beforeAll(async () => {
	sandbox = await timings.time('sandbox start', () =>
		startSandbox({ port: 0, host: '127.0.0.1', allowHttpLoopback: true }),
	);
	model = await startFakeChatModel(decide);
	n8n = await timings.time('n8n boot', () => startN8n({ packageRoot: repoRoot }));
	await n8n.setupOwner();
	await n8n.login();
	await timings.time(
		'CLI import:credentials (Marketplace demo key + OpenAI at the fake model)',
		() =>
			n8n.importCredential([
				{ ...DEMO_CREDENTIAL, data: { baseUrl: sandbox.baseUrl, apiKey: sandbox.demoApiKey } },
				{ ...OPENAI_CREDENTIAL, data: { apiKey: OPENAI_KEY, url: model.baseUrl, header: false } },
			]),
	);
	await timings.time('CLI import:workflow (test/e2e/workflows)', () =>
		n8n.importWorkflows(join(__dirname, 'workflows')),
	);
	api = await n8n.publicApi();
	await timings.time('publish the order assistant', async () => {
		await api.activateWorkflow(WORKFLOW_ID);
		await n8n.waitForActivation(WORKFLOW_ID);
	});
}, 240_000);

afterAll(async () => {
	if (n8n) {
		mkdirSync(join(repoRoot, 'tmp'), { recursive: true });
		writeFileSync(join(repoRoot, 'tmp', 'e2e-agent-n8n.log'), n8n.logs());
		writeFileSync(
			join(repoRoot, 'tmp', 'e2e-agent-model-requests.json'),
			JSON.stringify(model?.requests.map((r) => r.body) ?? [], null, '\t'),
		);
	}
	await n8n?.stop();
	await model?.close();
	await sandbox?.close();
	console.log(`[e2e agent] timings:\n${timings.report()}`);
});

describe('the Marketplace node as an AI Agent tool (example workflow order-assistant.json)', () => {
	test('the model is offered the three Marketplace tools with their descriptions and the $fromAI arguments', async () => {
		const reply = await chat('hello');
		expect(reply.status).toBe(200);
		const tools = model.requests[reply.requestsBefore].body.tools as Json[];
		const byName = Object.fromEntries(tools.map((t) => [t.function.name, t.function]));
		expect(Object.keys(byName).sort()).toEqual(['Get_Order', 'List_Orders', 'Mark_Orders_Packed']);
		expect(Object.keys(byName.List_Orders.parameters.properties).sort()).toEqual([
			'brandIds',
			'startDate',
		]);
		expect(byName.List_Orders.parameters.properties.brandIds).toEqual({
			type: 'string',
			description: 'Comma-separated brand IDs, e.g. 2 or 1,3',
		});
		// n8n 2.41.1 makes every $fromAI() argument required.
		expect(byName.List_Orders.parameters.required.sort()).toEqual(['brandIds', 'startDate']);
		expect(byName.Mark_Orders_Packed.parameters.properties.orderIds).toMatchObject({
			type: 'string',
		});
		expect(byName.Get_Order.parameters.properties.orderId).toMatchObject({ type: 'number' });
		// n8n's automatic tool description: the operation's `action` + " in " + the node's default name.
		expect(Object.fromEntries(tools.map((t) => [t.function.name, t.function.description]))).toEqual(
			{
				List_Orders: 'Get many orders of given brands and statuses since a date in Marketplace',
				Get_Order: 'Get an order by ID in Marketplace',
				Mark_Orders_Packed: 'Mark orders packed by order ID in Marketplace',
			},
		);
		console.log(
			`[e2e agent] tool descriptions the model sees:\n${Object.values(byName)
				.map((t: Json) => `  ${t.name}: ${t.description}`)
				.join('\n')}`,
		);
	});

	test('"list today\'s orders of brand 2": the call reaches the node with the model\'s arguments; the orders go back to the model', async () => {
		const created = [
			await sandbox.control.createOrder({ brandId: 2 }),
			await sandbox.control.createOrder({ brandId: 2 }),
		].map((r: Json) => r.order);
		await sandbox.control.createOrder({ brandId: 3 });
		const since = (await sandbox.control.requests()).length;

		const reply = await timings.time("chat: list today's orders of brand 2", () =>
			chat("Please list today's orders of brand 2"),
		);
		expect(reply.status).toBe(200);

		// The model's call, as it chose it.
		const call = model.requests[reply.requestsBefore].body;
		expect(call.messages[call.messages.length - 1].role).toBe('user');
		// What reached the service: one list request with exactly those filters.
		const reads = (await sandbox.control.requests())
			.slice(since)
			.filter((r: Json) => r.route === 'listOrders');
		expect(reads).toHaveLength(1);
		const query = new URLSearchParams(reads[0].rawQuery);
		expect(query.get('brandIds')).toBe('2');
		expect(query.get('startDate')).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/);

		// What went back to the model: the orders the node read, the ones just created among them.
		const toolMessages = toolMessagesSince(reply.requestsBefore);
		expect(toolMessages).toHaveLength(1);
		const returned = JSON.parse(textOf(toolMessages[0].content)) as Json[];
		expect(returned.map((o) => o.id)).toEqual(
			expect.arrayContaining(created.map((o: Json) => o.id)),
		);
		expect(returned.every((o) => o.brandId === 2)).toBe(true);
		expect(String(reply.body.output)).toContain(`"id":${created[0].id}`);

		// In n8n's execution: the tool node ran once with the model's arguments as its input.
		const ex = await latestExecution();
		expect(ex.status).toBe('success');
		const runs = ex.data.resultData.runData['List Orders'];
		expect(runs).toHaveLength(1);
		const input = runs[0].inputOverride.ai_tool[0][0].json;
		expect(input).toMatchObject({ brandIds: '2' });
		expect(input.startDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
		console.log(
			`[e2e agent] List Orders called with ${JSON.stringify(input)}; ${returned.length} order(s) went back to the model`,
		);
	});

	test('"mark order N packed": one mark-packed request with an Idempotency-Key; the result goes back to the model', async () => {
		const order = ((await sandbox.control.createOrder({ brandId: 2 })) as Json).order;
		const since = (await sandbox.control.requests()).length;
		const reply = await timings.time('chat: mark order packed', () =>
			chat(`mark order ${order.id} packed`),
		);
		expect(reply.status).toBe(200);

		const writes = (await sandbox.control.requests())
			.slice(since)
			.filter((r: Json) => r.route === 'markOrdersPacked');
		expect(writes).toHaveLength(1);
		expect(writes[0].headers['idempotency-key']).toMatch(/\S{8,}/);
		expect(JSON.parse(writes[0].body)).toEqual({ orderIds: [order.id] });
		const stored = (await sandbox.control.state<{ id: number; status: string }>('orders')).find(
			(o) => o.id === order.id,
		);
		expect(stored?.status).toBe('Packed');

		const toolMessages = toolMessagesSince(reply.requestsBefore);
		expect(toolMessages).toHaveLength(1);
		expect(JSON.parse(textOf(toolMessages[0].content))).toEqual([
			expect.objectContaining({ orderId: order.id, success: true, status: 'Packed' }),
		]);
		console.log(`[e2e agent] mark packed: Idempotency-Key ${writes[0].headers['idempotency-key']}`);
	});

	test('a 500 inside a tool call is retried with the same Idempotency-Key and body; the model gets the success', async () => {
		const order = ((await sandbox.control.createOrder({ brandId: 2 })) as Json).order;
		await sandbox.control.injectFault({ route: 'markOrdersPacked', mode: '500', count: 1 });
		const since = (await sandbox.control.requests()).length;
		const reply = await chat(`mark order ${order.id} packed`);
		expect(reply.status).toBe(200);

		const writes = (await sandbox.control.requests())
			.slice(since)
			.filter((r: Json) => r.route === 'markOrdersPacked');
		expect(writes.map((w) => w.status)).toEqual([500, 200]);
		expect(writes[1].headers['idempotency-key']).toBe(writes[0].headers['idempotency-key']);
		expect(writes[1].body).toBe(writes[0].body);
		expect(JSON.parse(textOf(toolMessagesSince(reply.requestsBefore)[0].content))).toEqual([
			expect.objectContaining({ orderId: order.id, success: true, status: 'Packed', attempts: 1 }),
		]);
	});

	test('bad arguments ("mark order seven packed") come back to the model as a clear error; the run does not crash and nothing is sent', async () => {
		const since = (await sandbox.control.requests()).length;
		const reply = await chat('mark order seven packed');
		expect(reply.status).toBe(200);
		expect(
			(await sandbox.control.requests())
				.slice(since)
				.filter((r: Json) => r.route === 'markOrdersPacked'),
		).toHaveLength(0);

		const toolMessages = toolMessagesSince(reply.requestsBefore);
		expect(toolMessages).toHaveLength(1);
		const content = textOf(toolMessages[0].content);
		// n8n hands a failed tool's error message to the model as the tool's answer.
		expect(JSON.parse(content)).toEqual([
			{ error: 'Invalid parameter "Order IDs": must be a whole number of 1 or more, got "seven"' },
		]);
		// The model had its say after the error: a final answer reached the chat.
		expect(String(reply.body.output)).toContain('Invalid parameter');
		const ex = await latestExecution();
		expect(ex.status).toBe('success');
		console.log(`[e2e agent] the model received: ${content}`);
	});

	test("a service error (an order that does not exist) comes back to the model with the service's reason and request id", async () => {
		const reply = await chat('show order 999999');
		expect(reply.status).toBe(200);
		const toolMessages = toolMessagesSince(reply.requestsBefore);
		expect(toolMessages).toHaveLength(1);
		const [answer] = JSON.parse(textOf(toolMessages[0].content)) as Json[];
		expect(Object.keys(answer)).toEqual(['error']);
		expect(answer.error).toMatch(/not.found|404/i);
		expect(answer.error).toMatch(/request id \S+/);
		expect((await latestExecution()).status).toBe('success');
		console.log(`[e2e agent] unknown order, the model received: ${answer.error}`);
	});

	test('an order that cannot be packed (already Packed) comes back as a per-order failure the model can read', async () => {
		const order = ((await sandbox.control.createOrder({ brandId: 2, status: 'Packed' })) as Json)
			.order;
		const reply = await chat(`mark order ${order.id} packed`);
		expect(reply.status).toBe(200);
		const [result] = JSON.parse(
			textOf(toolMessagesSince(reply.requestsBefore)[0].content),
		) as Json[];
		expect(result).toMatchObject({
			orderId: order.id,
			success: false,
			error: { type: expect.stringMatching(/conflict$/) },
		});
		console.log(`[e2e agent] already packed, the model received: ${JSON.stringify(result)}`);
	});

	test('a conversation: "list today\'s orders of brand 2", then "mark the first of them packed" (Simple Memory keeps the first answer)', async () => {
		const order = ((await sandbox.control.createOrder({ brandId: 2 })) as Json).order;
		await chat("list today's orders of brand 2", 'e2e-conversation');
		const since = (await sandbox.control.requests()).length;
		const reply = await chat('mark the first of them packed', 'e2e-conversation');
		expect(reply.status).toBe(200);

		// n8n 2.41.1's memory keeps the first turn whole: question, tool call, tool answer, final answer.
		const sent = model.requests[reply.requestsBefore].body.messages as Json[];
		expect(sent.map((m) => m.role)).toEqual([
			'system',
			'user',
			'assistant',
			'tool',
			'assistant',
			'user',
		]);
		const writes = (await sandbox.control.requests())
			.slice(since)
			.filter((r: Json) => r.route === 'markOrdersPacked');
		expect(writes).toHaveLength(1);
		const firstListed = Number(/"id":(\d+)/.exec(textOf(sent[4].content))?.[1]);
		expect(JSON.parse(writes[0].body)).toEqual({ orderIds: [firstListed] });
		expect(writes[0].headers['idempotency-key']).toMatch(/\S{8,}/);
		expect(
			(await sandbox.control.state<{ id: number; status: string }>('orders')).find(
				(o) => o.id === firstListed,
			)?.status,
		).toBe('Packed');
		console.log(
			`[e2e agent] conversation: first listed order ${firstListed} (newest created ${order.id}) marked packed`,
		);
	});

	test('the Marketplace API key never reaches the model', () => {
		expect(model.requests.length).toBeGreaterThan(4);
		for (const r of model.requests) {
			expect(r.raw).not.toContain(sandbox.demoApiKey);
			expect(JSON.stringify(r.headers)).not.toContain(sandbox.demoApiKey);
		}
		console.log(
			`[e2e agent] ${model.requests.length} model requests checked, none holds the Marketplace API key`,
		);
	});
});

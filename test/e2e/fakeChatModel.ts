/**
 * A scripted OpenAI-compatible chat model on loopback for the AI Agent tests: n8n's OpenAI Chat
 * Model node (credential `openAiApi` with its Base URL `url` pointing here) posts
 * `/v1/chat/completions`; `decide` picks the answer (text or tool calls) from what the agent sent,
 * and every request is recorded, so a test can read exactly what the model was given.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { Json } from '../json';

/** One chat-completions request as the model received it. */
export interface ModelRequest {
	path: string;
	headers: IncomingHttpHeaders;
	/** The raw body, for checks over everything the model was sent. */
	raw: string;
	body: Json;
}

/** What the model answers: a text, or calls of tools it was offered (arguments as an object). */
export type ModelTurn =
	| { text: string }
	| { toolCalls: Array<{ name: string; args: Record<string, unknown> }> };

export interface FakeChatModel {
	/** Base URL for the OpenAI credential's `url` (ends in /v1, as n8n's default does). */
	readonly baseUrl: string;
	readonly requests: ModelRequest[];
	close(): Promise<void>;
}

let callSeq = 0;

function completion(model: string, turn: ModelTurn) {
	const message =
		'text' in turn
			? { role: 'assistant', content: turn.text }
			: {
					role: 'assistant',
					content: null,
					tool_calls: turn.toolCalls.map((c) => ({
						id: `call_${++callSeq}`,
						type: 'function',
						function: { name: c.name, arguments: JSON.stringify(c.args) },
					})),
				};
	return {
		id: `chatcmpl-${callSeq}-${Date.now()}`,
		object: 'chat.completion',
		created: Math.floor(Date.now() / 1000),
		model,
		choices: [
			{ index: 0, message, logprobs: null, finish_reason: 'text' in turn ? 'stop' : 'tool_calls' },
		],
		usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
	};
}

/** The same answer as server-sent chunks, for a client that asks for `stream: true`. */
function streamChunks(model: string, turn: ModelTurn): string {
	const full = completion(model, turn);
	const message = full.choices[0].message as Json;
	const delta =
		'text' in turn
			? { role: 'assistant', content: message.content }
			: {
					role: 'assistant',
					content: null,
					tool_calls: message.tool_calls.map((c: Json, index: number) => ({ index, ...c })),
				};
	const base = { id: full.id, object: 'chat.completion.chunk', created: full.created, model };
	return [
		{ ...base, choices: [{ index: 0, delta, finish_reason: null }] },
		{
			...base,
			choices: [{ index: 0, delta: {}, finish_reason: full.choices[0].finish_reason }],
			usage: full.usage,
		},
	]
		.map((c) => `data: ${JSON.stringify(c)}\n\n`)
		.concat('data: [DONE]\n\n')
		.join('');
}

export async function startFakeChatModel(
	decide: (body: Json) => ModelTurn,
): Promise<FakeChatModel> {
	const requests: ModelRequest[] = [];
	const server: Server = createServer((req, res) => {
		let raw = '';
		req.on('data', (d: Buffer) => (raw += d.toString()));
		req.on('end', () => {
			const path = (req.url ?? '').split('?')[0];
			if (req.method === 'GET' && path.endsWith('/models')) {
				res.writeHead(200, { 'content-type': 'application/json' });
				res.end(
					JSON.stringify({
						object: 'list',
						data: [{ id: 'fake-order-model', object: 'model', owned_by: 'test' }],
					}),
				);
				return;
			}
			if (req.method !== 'POST' || !path.endsWith('/chat/completions')) {
				res.writeHead(404, { 'content-type': 'application/json' });
				res.end(JSON.stringify({ error: { message: `no route ${req.method} ${path}` } }));
				return;
			}
			let body: Json;
			try {
				body = JSON.parse(raw);
			} catch {
				res.writeHead(400).end();
				return;
			}
			requests.push({ path, headers: req.headers, raw, body });
			let turn: ModelTurn;
			try {
				turn = decide(body);
			} catch (e) {
				// A script that cannot answer is a test bug: say so to n8n, which fails the run visibly.
				res.writeHead(500, { 'content-type': 'application/json' });
				res.end(JSON.stringify({ error: { message: `fake model: ${(e as Error).message}` } }));
				return;
			}
			const model = String(body.model ?? 'fake-order-model');
			if (body.stream === true) {
				res.writeHead(200, { 'content-type': 'text/event-stream' });
				res.end(streamChunks(model, turn));
				return;
			}
			res.writeHead(200, { 'content-type': 'application/json' });
			res.end(JSON.stringify(completion(model, turn)));
		});
	});
	await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
	const { port } = server.address() as AddressInfo;
	return {
		baseUrl: `http://127.0.0.1:${port}/v1`,
		requests,
		close: async () =>
			await new Promise<void>((resolveClose) => server.close(() => resolveClose())),
	};
}

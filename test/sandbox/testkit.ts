import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type SandboxHandle, type SandboxOptions, startSandbox } from './index';
import type { Json } from '../json';

/** Helpers the sandbox's own tests share (not a test file). */

export interface CallResult {
	status: number;
	headers: Headers;
	text: string;
	body: Json;
}

export interface CallOptions {
	key?: string | null;
	body?: unknown;
	rawBody?: string;
	headers?: Record<string, string>;
}

/** One request to the sandbox over HTTP; `key` defaults to the demo key, null sends none. */
export async function call(
	sandbox: SandboxHandle,
	method: string,
	path: string,
	options: CallOptions = {},
): Promise<CallResult> {
	const headers: Record<string, string> = { ...options.headers };
	const key = options.key === undefined ? sandbox.demoApiKey : options.key;
	if (key !== null) headers.authorization = `Bearer ${key}`;
	let body: string | undefined = options.rawBody;
	if (options.body !== undefined) body = JSON.stringify(options.body);
	if (body !== undefined) headers['content-type'] ??= 'application/json';
	const response = await fetch(`${sandbox.baseUrl}${path}`, { method, headers, body });
	const text = await response.text();
	let parsed: unknown;
	try {
		parsed = text ? JSON.parse(text) : undefined;
	} catch {
		parsed = undefined;
	}
	return { status: response.status, headers: response.headers, text, body: parsed };
}

export const get = (sandbox: SandboxHandle, path: string, options?: CallOptions) =>
	call(sandbox, 'GET', path, options);

/** `count` requests at once with the demo key, as another client of the same key spends its quota; their statuses. */
export async function spendQuota(sandbox: SandboxHandle, count: number): Promise<number[]> {
	return await Promise.all(
		Array.from({ length: count }, async () => (await get(sandbox, '/v1/brands')).status),
	);
}

export async function withSandbox(options?: SandboxOptions): Promise<SandboxHandle> {
	return startSandbox(options);
}

export interface ReceivedRequest {
	headers: http.IncomingHttpHeaders;
	body: string;
	receivedAt: number;
}

export interface Receiver {
	url: string;
	received: ReceivedRequest[];
	/** status (or function of the request) answered from now on */
	respondWith(status: number | ((r: ReceivedRequest) => number)): void;
	close(): Promise<void>;
}

/** A loopback HTTP receiver that records what the delivery engine sends. */
export async function startReceiver(status: number = 200): Promise<Receiver> {
	const received: ReceivedRequest[] = [];
	let answer: number | ((r: ReceivedRequest) => number) = status;
	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (c: Buffer) => chunks.push(c));
		req.on('end', () => {
			const record = {
				headers: req.headers,
				body: Buffer.concat(chunks).toString('utf8'),
				receivedAt: Date.now(),
			};
			received.push(record);
			res.writeHead(typeof answer === 'function' ? answer(record) : answer);
			res.end();
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}/hook`,
		received,
		respondWith: (s) => (answer = s),
		close: () =>
			new Promise((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}

/** Polls `check` until it returns a truthy value (real time, short). */
export async function waitFor<T>(
	check: () => T | Promise<T>,
	timeoutMs = 3000,
): Promise<Exclude<T, false | null | undefined | 0 | ''>> {
	const until = Date.now() + timeoutMs;
	for (;;) {
		const value = await check();
		if (value) return value as Exclude<T, false | null | undefined | 0 | ''>;
		if (Date.now() > until) throw new Error('waitFor timed out');
		await new Promise((r) => setTimeout(r, 20));
	}
}

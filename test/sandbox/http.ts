import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** What a handler answers. */
export interface HandlerResult {
	status: number;
	body?: unknown;
	contentType?: string;
	headers?: Record<string, string>;
}

/** A response ready to be written (also what idempotency stores). */
export interface WireResponse {
	status: number;
	headers: Record<string, string>;
	body: string;
}

const REQUEST_ID = /^[A-Za-z0-9._:+=\/-]{1,128}$/;

/** Echoes a well-formed client X-Request-Id (up to 128 characters), otherwise generates one. */
export function requestIdFor(header: string | string[] | undefined): string {
	if (typeof header === 'string' && REQUEST_ID.test(header)) return header;
	return `req_${randomUUID()}`;
}

export function toWire(result: HandlerResult): WireResponse {
	const headers: Record<string, string> = { ...result.headers };
	if (result.body === undefined) return { status: result.status, headers, body: '' };
	headers['content-type'] = result.contentType ?? 'application/json; charset=utf-8';
	return { status: result.status, headers, body: JSON.stringify(result.body) };
}

export function writeWire(res: ServerResponse, wire: WireResponse): void {
	if (res.destroyed) return;
	res.writeHead(wire.status, {
		...wire.headers,
		'content-length': String(Buffer.byteLength(wire.body)),
	});
	res.end(wire.body);
}

/** Reads the body up to `maxBytes`; beyond that the rest is drained and `tooLarge` set. */
export function readBody(
	req: IncomingMessage,
	maxBytes: number,
): Promise<{ text: string; tooLarge: boolean }> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		let size = 0;
		req.on('data', (chunk: Buffer) => {
			size += chunk.length;
			if (size <= maxBytes) chunks.push(chunk);
		});
		req.on('end', () =>
			resolve({ text: Buffer.concat(chunks).toString('utf8'), tooLarge: size > maxBytes }),
		);
		req.on('error', reject);
	});
}

export function sleep(ms: number): Promise<void> {
	return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

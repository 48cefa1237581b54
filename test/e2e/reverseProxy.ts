/**
 * A reverse proxy on loopback that stands for the public address of a self-hosted n8n as many
 * deployments have it: the service reaches n8n through it, n8n itself cannot (no NAT hairpin, or a
 * company network's egress rules). It forwards only the requests `accept` lets through (the
 * service's deliveries) and drops every other one (the connection is closed: "socket hang up"),
 * sends bodies on with `Transfer-Encoding: chunked`, adds `X-Forwarded-*` headers, and may change a
 * body on its way (`rewriteBody`), as a proxy that re-encodes JSON does.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

export interface ProxyTarget {
	port: number;
	/** the target serves https (n8n with N8N_PROTOCOL=https and its own certificate) */
	tls?: boolean;
}

export interface ReverseProxyOptions {
	/** where to forward, round robin (read per request, so targets may restart on new ports) */
	targets: () => ProxyTarget[];
	/** which requests to forward; the others are dropped */
	accept: (req: http.IncomingMessage) => boolean;
	/** the body sent on, from the body received; the body as it came by default */
	rewriteBody?: (body: Buffer, req: http.IncomingMessage) => Buffer;
}

export interface DroppedRequest {
	method: string;
	path: string;
	userAgent: string;
	webhookId: string;
}

export interface ReverseProxy {
	port: number;
	/** the public base URL, as N8N_WEBHOOK_URL */
	url: string;
	forwarded: number[];
	dropped: DroppedRequest[];
	stop(): Promise<void>;
}

const HOP_BY_HOP = new Set([
	'connection',
	'keep-alive',
	'transfer-encoding',
	'content-length',
	'upgrade',
	'proxy-connection',
	'te',
	'trailer',
]);

/** Accepts the requests that carry the service's User-Agent (its product token), as its deliveries do. */
export const fromService = (userAgent: string) => (req: http.IncomingMessage) =>
	req.headers['user-agent'] === userAgent;

export async function startReverseProxy(options: ReverseProxyOptions): Promise<ReverseProxy> {
	let next = 0;
	const forwarded: number[] = [];
	const dropped: DroppedRequest[] = [];
	const server = http.createServer((req, res) => {
		if (!options.accept(req)) {
			dropped.push({
				method: req.method ?? '',
				path: req.url ?? '',
				userAgent: String(req.headers['user-agent'] ?? ''),
				webhookId: String(req.headers['webhook-id'] ?? ''),
			});
			req.socket.destroy();
			return;
		}
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			const received = Buffer.concat(chunks);
			const body = options.rewriteBody ? options.rewriteBody(received, req) : received;
			const targets = options.targets();
			const target = targets[next++ % targets.length];
			forwarded.push(target.port);
			const headers: http.OutgoingHttpHeaders = {};
			for (const [name, value] of Object.entries(req.headers))
				if (!HOP_BY_HOP.has(name)) headers[name] = value;
			headers['transfer-encoding'] = 'chunked';
			headers['x-forwarded-for'] = req.socket.remoteAddress ?? '';
			headers['x-forwarded-proto'] = 'https';
			headers['x-forwarded-host'] = req.headers.host ?? '';
			const request = target.tls ? https.request : http.request;
			const upstream = request(
				{
					host: '127.0.0.1',
					port: target.port,
					method: req.method,
					path: req.url,
					headers,
					rejectUnauthorized: false,
				},
				(answer) => {
					res.writeHead(answer.statusCode ?? 502, answer.headers);
					answer.pipe(res);
				},
			);
			upstream.on('error', () => {
				if (!res.headersSent) res.writeHead(502).end();
			});
			// two chunks, so the receiver sees a body in pieces as a proxy streams it
			const half = Math.floor(body.length / 2);
			upstream.write(body.subarray(0, half));
			upstream.end(body.subarray(half));
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const port = (server.address() as AddressInfo).port;
	return {
		port,
		url: `http://127.0.0.1:${port}/`,
		forwarded,
		dropped,
		stop: async () => {
			server.closeAllConnections();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}

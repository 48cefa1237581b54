import http from 'node:http';
import type { Socket } from 'node:net';
import { handleApi } from './api';
import { handleControl } from './controlApi';
import { readBody, requestIdFor, writeWire } from './http';
import type { SandboxState } from './state';

/** HTTP plumbing: reads each request, sends /_sandbox/* to the control API and the rest to the service. */
export class SandboxServer {
	private readonly server: http.Server;
	private readonly sockets = new Set<Socket>();

	constructor(private readonly state: SandboxState) {
		this.server = http.createServer((req, res) => {
			this.handle(req, res).catch((error) => {
				console.error('[sandbox] request failed:', error);
				if (!res.headersSent) res.writeHead(500);
				res.end();
			});
		});
		this.server.on('connection', (socket) => {
			this.sockets.add(socket);
			socket.on('close', () => this.sockets.delete(socket));
		});
	}

	listen(port: number, host: string): Promise<string> {
		return new Promise((resolve, reject) => {
			this.server.once('error', reject);
			this.server.listen(port, host, () => {
				const address = this.server.address();
				if (!address || typeof address === 'string') return reject(new Error('no address'));
				const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
				resolve(`http://${shownHost}:${address.port}`);
			});
		});
	}

	close(): Promise<void> {
		return new Promise((resolve) => {
			this.server.close(() => resolve());
			for (const socket of this.sockets) socket.destroy();
		});
	}

	private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
		const requestId = requestIdFor(req.headers['x-request-id']);
		const target = req.url ?? '/';
		const q = target.indexOf('?');
		const path = q === -1 ? target : target.slice(0, q);
		const rawQuery = q === -1 ? '' : target.slice(q + 1);
		const { text, tooLarge } = await readBody(req, this.state.options.maxBodyBytes);
		const method = req.method ?? 'GET';

		if (path.startsWith('/_sandbox/')) {
			writeWire(res, await handleControl(this.state, method, path, rawQuery, text, requestId));
			return;
		}
		const logged = this.state.log.add({
			method,
			path,
			rawQuery,
			headers: { ...req.headers },
			body: text,
			requestId,
		});
		await handleApi(this.state, {
			req,
			res,
			path,
			rawQuery,
			body: text,
			tooLarge,
			requestId,
			logged,
		});
	}
}

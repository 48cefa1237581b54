import http from 'node:http';
import https from 'node:https';
import { Webhook } from 'standardwebhooks';

export const USER_AGENT = 'MarketplaceManagement-Webhooks/1';

/** webhook-signature value: one `v1,<sig>` entry per secret, made by the standardwebhooks library. */
export function signatureHeader(
	secrets: string[],
	msgId: string,
	timestampSeconds: number,
	payload: string,
): string {
	return secrets
		.map((secret) => new Webhook(secret).sign(msgId, new Date(timestampSeconds * 1000), payload))
		.join(' ');
}

export interface PostOutcome {
	statusCode: number | null;
	error: string | null;
	durationMs: number;
}

/**
 * One POST of a delivery to `url`, connecting to the already checked `address` (so a DNS change
 * between check and send cannot redirect it). Redirects are not followed.
 */
export function postOnce(
	url: string,
	address: { address: string; family: number },
	headers: Record<string, string>,
	payload: string,
	timeoutMs: number,
): Promise<PostOutcome> {
	const started = Date.now();
	const target = new URL(url);
	const client = target.protocol === 'https:' ? https : http;
	return new Promise((resolve) => {
		let settled = false;
		const done = (statusCode: number | null, error: string | null) => {
			if (settled) return;
			settled = true;
			clearTimeout(timer);
			resolve({ statusCode, error, durationMs: Date.now() - started });
		};
		const req = client.request(
			target,
			{
				method: 'POST',
				headers: { ...headers, 'content-length': String(Buffer.byteLength(payload)) },
				lookup: (_host, opts, cb) => {
					const done = cb as (e: null, a: unknown, f?: number) => void;
					if ((opts as { all?: boolean }).all) done(null, [address]);
					else done(null, address.address, address.family);
				},
				agent: false,
			},
			(res) => {
				res.resume();
				res.on('end', () => done(res.statusCode ?? null, null));
				res.on('error', () => done(res.statusCode ?? null, null));
			},
		);
		const timer = setTimeout(() => {
			done(null, 'timeout');
			req.destroy();
		}, timeoutMs);
		req.on('error', (err: NodeJS.ErrnoException) => done(null, err.code ?? err.message));
		req.end(payload);
	});
}

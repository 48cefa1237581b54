import { createHash } from 'node:crypto';

/** A response as stored for replay. */
export interface StoredResponse {
	status: number;
	contentType: string | undefined;
	body: string;
}

type Entry =
	| { fingerprint: string; running: true }
	| { fingerprint: string; running: false; response: StoredResponse; storedAt: number };

export type Claim =
	| { kind: 'new' }
	| { kind: 'replay'; response: StoredResponse }
	| { kind: 'in-progress' }
	| { kind: 'reused' };

export const IDEMPOTENCY_RETENTION_MS = 24 * 3_600_000;

/** Idempotency-Key bookkeeping, per API key, retention on the virtual clock. */
export class IdempotencyStore {
	private entries = new Map<string, Entry>();

	constructor(private readonly now: () => number) {}

	static fingerprint(method: string, path: string, rawQuery: string, body: string): string {
		return createHash('sha256')
			.update(`${method}\n${path}\n${rawQuery}\n`)
			.update(body)
			.digest('hex');
	}

	claim(apiKey: string, key: string, fingerprint: string): Claim {
		const id = `${apiKey}\n${key}`;
		const entry = this.entries.get(id);
		if (entry && !entry.running && this.now() - entry.storedAt >= IDEMPOTENCY_RETENTION_MS)
			this.entries.delete(id);
		const current = this.entries.get(id);
		if (!current) {
			this.entries.set(id, { fingerprint, running: true });
			return { kind: 'new' };
		}
		if (current.fingerprint !== fingerprint) return { kind: 'reused' };
		if (current.running) return { kind: 'in-progress' };
		return { kind: 'replay', response: current.response };
	}

	/** Stores a response below 500; a 5xx releases the key so a retry executes again. */
	finish(apiKey: string, key: string, fingerprint: string, response: StoredResponse): void {
		if (response.status >= 500) this.release(apiKey, key);
		else
			this.entries.set(`${apiKey}\n${key}`, {
				fingerprint,
				running: false,
				response,
				storedAt: this.now(),
			});
	}

	release(apiKey: string, key: string): void {
		this.entries.delete(`${apiKey}\n${key}`);
	}

	reset(): void {
		this.entries.clear();
	}
}

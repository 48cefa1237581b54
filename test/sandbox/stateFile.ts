/**
 * The sandbox's data in a JSON file, for `npm run dev`: restarting the dev command must not forget
 * the webhook endpoints (and their secrets) that published trigger workflows registered, or those
 * workflows would stay published in n8n and receive nothing. Written when the data changed (checked
 * every second) and on close; idempotency records, in-flight delivery attempts and the rate-limit
 * windows are not kept.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

import type { SandboxState } from './state';
import { Store, type StoreSnapshot } from './store';

interface Saved {
	version: 1;
	/** virtual ms at the save, so the clock never runs backwards over stored timestamps */
	clockNow: number;
	store: StoreSnapshot;
}

export function loadState(file: string): { store: Store; clockNow: number } | undefined {
	if (!file || !existsSync(file)) return undefined;
	const saved = JSON.parse(readFileSync(file, 'utf8')) as Saved;
	if (saved.version !== 1)
		throw new Error(`${file}: unknown sandbox state version ${String(saved.version)}`);
	return { store: Store.restore(saved.store), clockNow: saved.clockNow };
}

export class StateFile {
	private timer: NodeJS.Timeout | undefined;
	private written = '';

	constructor(
		private readonly file: string,
		private readonly state: SandboxState,
	) {}

	start(everyMs = 1000): void {
		this.save();
		this.timer = setInterval(() => this.save(), everyMs);
		this.timer.unref();
	}

	/** Writes the data if it changed since the last write (atomically: a temp file, then rename). */
	save(): void {
		const store = JSON.stringify(this.state.store.snapshot());
		if (store === this.written) return;
		const tmp = `${this.file}.tmp`;
		writeFileSync(tmp, `{"version":1,"clockNow":${this.state.clock.now()},"store":${store}}`);
		renameSync(tmp, this.file);
		this.written = store;
	}

	stop(): void {
		clearInterval(this.timer);
		this.save();
	}
}

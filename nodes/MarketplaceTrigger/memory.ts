/**
 * What this n8n process knows of one endpoint (one workflow and webhook URL) beyond the workflow's
 * static data: n8n loads that copy anew for every request and may overwrite it with an older one
 * (see settle.ts), so what this process accepted, refused or was doing is held here, in one object
 * per endpoint, and forgotten in one place (as an n8n restart forgets it).
 */
import type { VerifyFailure } from '../shared/webhookVerifier';
import type { SyncLoop } from './settle';

/** A key this process accepted and has not yet seen settled in the static data (settle.ts). */
export interface PendingKey {
	key: string;
	/** `ids`: a webhook-id or a caught-up order, kept until `untilMs`; `orders`: an order whose event was accepted, created at `untilMs` */
	kind: 'ids' | 'orders';
	untilMs: number;
	acceptedAt: number;
	/** a sync has stored it (or found it stored) */
	stored: boolean;
	/** syncs that failed or found it missing; a sync that found it stored is no reason to give up */
	syncs: number;
	/** once stored: the last request of this process begun by then (those may hold a copy without it) */
	storedSeq?: number;
}

/** Deliveries refused since the last accepted event (reported on that event's item). */
export interface Refusals {
	count: number;
	since: string;
	lastAt: string;
	lastReason: VerifyFailure;
	lastMessage: string;
}

export class EndpointMemory {
	constructor(readonly url: string) {}

	/**
	 * Keys this process accepted and has not seen settled in the static data, by `kind:key`: a save of
	 * another request or process may still drop them, so duplicate checks and saves take them in too.
	 */
	readonly pending = new Map<string, PendingKey>();
	/** the newest catch-up cursor this process wrote (the service's clock, Unix ms) */
	caughtUpTo = -Infinity;
	/** deliveries and orders being processed now, by key: a concurrent copy (or catch-up) waits for the first */
	readonly inFlight = new Map<string, Promise<void>>();
	/** missed-events notices this process has put on an item (by re-enable time) */
	readonly shownNotices = new Set<string>();
	/** when this process last rotated the secret to recover from a rotation elsewhere */
	lastRecoveryAt = 0;
	/** when this process last verified a delivery of the service (its own clock) */
	lastVerifiedAt?: number;
	/** whether this process has caught up since it started */
	caughtUpSinceStart = false;
	/** the last catch-up stopped at the most orders one run brings: the next delivery goes on */
	backlog = false;
	refusals?: Refusals;
	/** the loop that stores accepted ids (settle.ts), while one runs */
	sync?: SyncLoop;

	/** requests of this process under way, by the sequence number they began with */
	private readonly open = new Set<number>();
	/** the sequence number of the last request begun */
	lastSeq = 0;

	/** Notes a request that began (and loads the static data now); returns what notes its end. */
	begin(): () => void {
		const seq = ++this.lastSeq;
		this.open.add(seq);
		return () => this.open.delete(seq);
	}

	/** True when a request of this process that began at or before `seq` is still under way. */
	busySince(seq: number): boolean {
		for (const open of this.open) if (open <= seq) return true;
		return false;
	}

	/** True when this process accepted `key` of `kind` and has not settled it (an id only until it expires). */
	holds(kind: PendingKey['kind'], key: string, nowMs: number): boolean {
		const entry = this.pending.get(pendingName(kind, key));
		return entry !== undefined && (kind === 'orders' || entry.untilMs > nowMs);
	}
}

/** The name a key is held under in `pending`: the same key may be held as an id and as an order. */
export function pendingName(kind: PendingKey['kind'], key: string): string {
	return `${kind}:${key}`;
}

const endpoints = new Map<string, EndpointMemory>();

/** The memory of the endpoint at `url` of workflow `workflowId`, made on first use. */
export function memoryOf(workflowId: string, url: string): EndpointMemory {
	const scope = `${workflowId}|${url}`;
	let memory = endpoints.get(scope);
	if (!memory) endpoints.set(scope, (memory = new EndpointMemory(url)));
	return memory;
}

/** Every endpoint's memory (for the sync loops' counts in tests). */
export function allMemories(): Iterable<EndpointMemory> {
	return endpoints.values();
}

/** Forgets everything this process knows, as an n8n restart does (for tests). */
export function forgetProcessMemory(): void {
	for (const memory of endpoints.values()) memory.sync?.stop();
	endpoints.clear();
}

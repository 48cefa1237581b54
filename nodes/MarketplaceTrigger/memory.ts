/**
 * What this n8n process knows of one endpoint (one workflow and webhook URL) beyond the workflow's
 * static data: n8n loads that copy anew for every request and may overwrite it with an older one
 * (see settle.ts), so what this process accepted, refused or was doing is held here, in one object
 * per endpoint, and forgotten in one place (as an n8n restart forgets it).
 */
import type { VerifyFailure } from '../shared/webhookVerifier';
import { DedupStore } from './dedup';
import type { SyncLoop } from './settle';

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

	/** webhook-ids (and keys of caught-up orders) this process accepted, bounded like the stored ones */
	accepted = new DedupStore();
	/** keys of orders whose order.created event this process accepted, kept until a catch-up window passed them */
	acceptedOrders = new DedupStore();
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

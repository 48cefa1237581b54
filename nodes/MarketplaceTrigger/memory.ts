/**
 * What this n8n process holds for the Marketplace Trigger beyond the workflow's static data (which
 * n8n loads anew for every request and may overwrite with an older copy, see saveViaOwnWebhook.ts):
 * the trigger's settings (schedules and clock, injected through the node's constructor) and one
 * registry of endpoint memories. n8n keeps one instance of a node type per process, so the registry
 * lives on that instance; an endpoint's memory is forgotten when its workflow is deactivated, and all
 * of it when the process ends.
 */
import type { IHookFunctions, IWebhookFunctions } from 'n8n-workflow';

import { transportClock } from '../shared/transport/clock';
import type { VerifyFailure } from '../shared/webhookVerifier';

/** The sections of the store a key belongs to (store.ts): `seen` (what ran) and `orders` (orders that ran). */
export type KeySection = 'seen' | 'orders';

/** When things happen; every wait and time of the trigger's own schedules goes through here. */
export interface TriggerSettings {
	clock: { now(): number; sleep(ms: number): Promise<void> };
	/**
	 * The save loop of an endpoint sends at most one save request this often, carrying every pending
	 * key: each is a webhook request as costly as a delivery, and the service's shortest retry gap is a
	 * minute, so a second is soon enough.
	 */
	saveEveryMs: number;
	/**
	 * ...but after a quiet moment the keys are saved once their burst pauses this long (at the latest
	 * saveEveryMs after its first key): a restart of n8n right after an event loses less
	 */
	firstSaveMs: number;
	/** a save request this long after a key's acceptance confirms it: longer than any request of the trigger */
	confirmAfterMs: number;
	/** when every pending key is saved, a request only to confirm some goes out at most this often (it confirms every key due by then) */
	confirmEveryMs: number;
	/** save requests that may fail, or find a key missing, before it is given up on */
	maxFailedSaves: number;
	/** the sample of "Listen for test event": first asked for `firstMs` after create(), then every `retryMs`, `attempts` times */
	sample: { firstMs: number; retryMs: number; attempts: number };
	/** a test delivery the service has not attempted yet is read again `pendingReads` times, `pendingWaitMs` apart */
	probe: { pendingReads: number; pendingWaitMs: number };
	/**
	 * the trigger's own catch-up (catchUpRequests.ts): the first catch-up request `firstMs` after
	 * activation or n8n's start (orders created up to the in-flight margin before it are in its
	 * window); one that failed is sent again `retryMs` later. `firstMs` Infinity: none (tests)
	 */
	catchUpRequest: { firstMs: number; retryMs: number };
}

export const DEFAULT_SETTINGS: TriggerSettings = {
	// the transport's clock: the one signatures are checked against
	clock: {
		now: () => transportClock().now(),
		sleep: async (ms) => await transportClock().sleep(ms),
	},
	saveEveryMs: 1_000,
	firstSaveMs: 250,
	confirmAfterMs: 10_000,
	confirmEveryMs: 5_000,
	maxFailedSaves: 8,
	sample: { firstMs: 500, retryMs: 1_000, attempts: 6 },
	probe: { pendingReads: 5, pendingWaitMs: 1_000 },
	catchUpRequest: { firstMs: 20_000, retryMs: 60_000 },
};

/** A key this process added and has not yet seen confirmed in the static data. */
export interface PendingKey {
	section: KeySection;
	key: string;
	/** `seen`: kept until then; `orders`: the order's creation time (kept until the cursor passes it) */
	untilMs: number;
	acceptedAt: number;
	/** a save request wrote it or found it written */
	saved: boolean;
	/** save requests that failed or found it missing; one that found it written is no reason to give up */
	failedSaves: number;
	/** once saved: the last request of this process begun by then (those may hold a copy without it) */
	savedAtSeq?: number;
}

/** Where this process's own listener is: the address a delivery arrived on, with the path it was served at. */
export interface OwnListener {
	url: string;
	/** the listener serves https (N8N_PROTOCOL=https): its certificate names the public host, not this address */
	tls: boolean;
}

/** How this process reaches its own webhook for one endpoint (saveViaOwnWebhook.ts): the newest of each part. */
export interface OwnWebhook {
	/** the newest request's or activation hook's context: the loops send with its `helpers.httpRequest` after it ended */
	ctx?: IWebhookFunctions | IHookFunctions;
	/** the listener the newest production request of this endpoint arrived on (never the public URL) */
	listener?: OwnListener;
	/** the endpoint's signing secret, as the newest request or hook read it */
	secret?: string;
}

/** The save loop of one endpoint (saveViaOwnWebhook.ts). */
export interface SaveLoop {
	running: boolean;
	/** why the last save request failed, if it did; cleared by the next one that works */
	lastError?: string;
	/** keys given up on since an item last reported it */
	givenUp: number;
	/** when the last save request went out, and when the last key was queued (the settings' clock) */
	lastSentAt: number;
	lastQueuedAt: number;
}

/** Deliveries refused since the last accepted event (reported on that event's item). */
export interface Refusals {
	count: number;
	since: string;
	lastAt: string;
	lastReason: VerifyFailure;
	lastMessage: string;
}

/** What this process knows of one endpoint (one workflow and webhook URL). */
export class EndpointMemory {
	constructor(readonly url: string) {}

	/** keys added and not yet confirmed, by `section:key`: duplicate checks and writes take them in too */
	readonly pending = new Map<string, PendingKey>();
	/** the newest cursor this process reached (the service's clock, Unix ms) */
	cursor = -Infinity;
	/** deliveries and orders being processed now, by key: a concurrent copy (or catch-up) waits for the first */
	readonly inFlight = new Map<string, Promise<void>>();
	/** missed-events notices this process has put on an item (by re-enable time) */
	readonly shownNotices = new Set<string>();
	/** when this process last rotated the secret to recover from a rotation elsewhere */
	lastRecoveryAt = 0;
	/** when this process last verified a delivery of the service */
	lastVerifiedAt?: number;
	/** whether this process has caught up since it started */
	caughtUpSinceStart = false;
	/** the last catch-up stopped at the most orders one run brings: the next delivery goes on */
	backlog = false;
	refusals?: Refusals;
	readonly saveLoop: SaveLoop = {
		running: false,
		givenUp: 0,
		lastSentAt: -Infinity,
		lastQueuedAt: -Infinity,
	};
	/** how the loops of this endpoint reach this process's webhook */
	readonly own: OwnWebhook = {};
	/** the loop of catch-up requests (catchUpRequests.ts) */
	readonly catchUpLoop = { running: false };
	/** when this process last read the order list to catch up (the transport's clock) */
	lastReadAt = -Infinity;
	/** order keys that last read found after its window and not run: the next catch-up request reads again for them */
	marginKeys: string[] = [];
	/** set when the workflow was deactivated: the loops stop */
	forgotten = false;

	/** requests of this process under way, by the sequence number they began with (TriggerProcess.beginRequest) */
	readonly open = new Set<number>();
	/** the sequence number of the last request begun */
	lastSeq = 0;

	/** True when a request of this process that began at or before `seq` is still under way. */
	busySince(seq: number): boolean {
		for (const open of this.open) if (open <= seq) return true;
		return false;
	}

	/** True when this process added `key` to `section` and it is not confirmed (a `seen` key only until it expires). */
	holds(section: KeySection, key: string, nowMs: number): boolean {
		const entry = this.pending.get(pendingName(section, key));
		return entry !== undefined && (section === 'orders' || entry.untilMs > nowMs);
	}
}

/** The name a key is pending under: the same key may be pending in both sections. */
export function pendingName(section: KeySection, key: string): string {
	return `${section}:${key}`;
}

/** This process's part of the trigger: its settings and the memory of every endpoint it served. */
export class TriggerProcess {
	readonly settings: TriggerSettings;
	private readonly endpoints = new Map<string, EndpointMemory>();
	/** sample deliveries being asked for, by endpoint id (listening.ts) */
	readonly listenings = new Map<number, Promise<void>>();

	constructor(settings: Partial<TriggerSettings> = {}) {
		this.settings = { ...DEFAULT_SETTINGS, ...settings };
	}

	/**
	 * A request to the endpoint at `url` of workflow `workflowId` begins (and reads the static data
	 * now): the endpoint's memory, made on first use, and what notes the request's end.
	 */
	beginRequest(workflowId: string, url: string): { memory: EndpointMemory; end: () => void } {
		const memory = this.memoryOf(workflowId, url);
		const seq = ++memory.lastSeq;
		memory.open.add(seq);
		return { memory, end: () => memory.open.delete(seq) };
	}

	/** The memory of the endpoint at `url` of workflow `workflowId`, made on first use. */
	memoryOf(workflowId: string, url: string): EndpointMemory {
		const scope = `${workflowId}|${url}`;
		let memory = this.endpoints.get(scope);
		if (!memory) this.endpoints.set(scope, (memory = new EndpointMemory(url)));
		return memory;
	}

	/** The memory of the endpoint at `url` of workflow `workflowId`, if there is one, taken out of the registry. */
	forget(workflowId: string, url: string): EndpointMemory | undefined {
		const scope = `${workflowId}|${url}`;
		const memory = this.endpoints.get(scope);
		this.endpoints.delete(scope);
		if (memory) memory.forgotten = true;
		return memory;
	}

	/** Forgets every endpoint, as the end of the process does (tests: a restart). */
	forgetAll(): void {
		for (const memory of this.endpoints.values()) memory.forgotten = true;
		this.endpoints.clear();
	}

	/** Keys of `section` pending in this process, at `url` or at every URL. */
	pendingCount(section: KeySection, url?: string): number {
		let count = 0;
		for (const memory of this.endpoints.values()) {
			if (url !== undefined && memory.url !== url) continue;
			for (const entry of memory.pending.values()) if (entry.section === section) count++;
		}
		return count;
	}

	/** Waits until the sample deliveries being asked for are done. */
	async listeningsDone(): Promise<void> {
		while (this.listenings.size) await Promise.allSettled([...this.listenings.values()]);
	}
}

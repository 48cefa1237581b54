/**
 * What this n8n process holds for the Marketplace Trigger beyond the workflow's static data (which
 * n8n loads anew for every request, and which a save of another process may overwrite with an older
 * copy): the trigger's settings (schedules and clock, injected through the node's constructor) and one
 * registry of endpoint memories. n8n keeps one instance of a node type per process, so the registry
 * lives on that instance; an endpoint's memory is forgotten when its workflow is deactivated, and all
 * of it when the process ends.
 */
import type { KeyObject } from 'node:crypto';

import type { ITriggerFunctions } from 'n8n-workflow';

import { transportClock } from '../shared/transport/clock';
import type { VerifyFailure } from '../shared/webhookVerifier';
import { KeySet } from './keySet';

/** The static data sections a key is accepted into (once.ts): `known` (accepted events and caught-up orders) and `deliveredOrders` (delivered orders). */
export type KeySection = 'known' | 'deliveredOrders';

/** When things happen; every wait and time of the trigger's own schedules goes through here. */
export interface TriggerSettings {
	clock: { now(): number; sleep(ms: number): Promise<void> };
	/** the sample of "Listen for test event": first asked for `firstMs` after create(), then every `retryMs`, `attempts` times */
	sample: { firstMs: number; retryMs: number; attempts: number };
	/** a test delivery the service has not attempted yet is read again `pendingReads` times, `pendingWaitMs` apart */
	probe: { pendingReads: number; pendingWaitMs: number };
	/**
	 * the catch-up check of trigger() (catchUpCheck.ts): the first `firstMs` after activation or n8n's
	 * start; one that failed is tried again `retryMs` later. `firstMs` Infinity: none (tests)
	 */
	catchUpCheck: { firstMs: number; retryMs: number };
	/** registers trigger()'s wake-up (n8n's cron by default); returns what stops it besides n8n */
	wake: (ctx: ITriggerFunctions, onWake: () => Promise<void>) => () => void;
}

export const DEFAULT_SETTINGS: TriggerSettings = {
	// the transport's clock: the one signatures are checked against
	clock: {
		now: () => transportClock().now(),
		sleep: async (ms) => await transportClock().sleep(ms),
	},
	sample: { firstMs: 500, retryMs: 1_000, attempts: 6 },
	probe: { pendingReads: 5, pendingWaitMs: 1_000 },
	catchUpCheck: { firstMs: 20_000, retryMs: 60_000 },
	wake: (ctx, onWake) => {
		// n8n removes the cron on deactivation, shutdown and when this main stops leading
		ctx.helpers.registerCron({ expression: WAKE_EXPRESSION }, () => void onWake());
		return () => {};
	},
};

/** n8n's cron wakes trigger()'s catch-up check this often; most wakes find nothing due and send nothing. */
export const WAKE_EXPRESSION = '*/20 * * * * *';

/**
 * A key to accept: into `known` until it expires, or into `deliveredOrders` with its order's creation time
 * (kept until the cursor passes it).
 */
export type KeyToSave =
	| { section: 'known'; key: string; expiresAt: number }
	| { section: 'deliveredOrders'; key: string; createdAt: number };

/** Deliveries refused since the last accepted event (reported on that event's item). */
export interface Refusals {
	count: number;
	since: string;
	lastAt: string;
	lastReason: VerifyFailure;
	lastMessage: string;
}

/** The sample delivery of a test listening being asked for (listening.ts). */
export interface Listening {
	done: Promise<void>;
	/** set when n8n ended the listening (its delete hook): nothing more is asked */
	ended: boolean;
}

/** What this process knows of one endpoint (one workflow and webhook URL). */
export class EndpointMemory {
	constructor(readonly url: string) {}

	/**
	 * This process's copy of the endpoint's key sections: every request joins the static
	 * data it loaded into them and writes them back whole (store.ts), so a save of another process
	 * that read an older copy cannot make this process forget a key; keys leave only when they expire.
	 */
	readonly known = new KeySet();
	readonly deliveredOrders = new KeySet();
	/** this process's copy of the cursor: the newest it reached (the service's clock, Unix ms) */
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
	/** the last catch-up stopped at the most orders one run brings: the next check reads again a minute later */
	backlog = false;
	refusals?: Refusals;
	/** when this process last read the order list to catch up (the transport's clock) */
	lastReadAt = -Infinity;
	/** the HMAC keys of the secrets the record held at the last request, set up (store.ts `verificationKeys`) */
	signingKeys = new Map<string, KeyObject>();

	/** Marks `keys` as being processed (a delivery of one of them waits); returns what ends that. */
	hold(keys: string[]): () => void {
		let release: () => void = () => {};
		const held = new Promise<void>((resolve) => (release = resolve));
		for (const key of keys) this.inFlight.set(key, held);
		return () => {
			for (const key of keys) this.inFlight.delete(key);
			release();
		};
	}
}

/** This process's part of the trigger: its settings and the memory of every endpoint it served. */
export class TriggerProcess {
	readonly settings: TriggerSettings;
	private readonly endpoints = new Map<string, EndpointMemory>();
	/** sample deliveries being asked for, by endpoint id (listening.ts) */
	readonly listenings = new Map<number, Listening>();
	/** the last recording of run keys in this process (once.ts `recordRunKeys`): the next waits for it */
	runKeysRecorded: Promise<void> = Promise.resolve();
	/** URLs whose activation hook is checking reachability now: its test delivery is no catch-up check */
	readonly activating = new Set<string>();
	/** the production endpoint of each active workflow, as its activation hook left it: where trigger() checks */
	readonly activeEndpoints = new Map<string, { url: string; endpointId: number }>();

	constructor(settings: Partial<TriggerSettings> = {}) {
		this.settings = { ...DEFAULT_SETTINGS, ...settings };
	}

	/** The memory of the endpoint at `url` of workflow `workflowId`, made on first use. */
	memoryOf(workflowId: string, url: string): EndpointMemory {
		const scope = `${workflowId}|${url}`;
		let memory = this.endpoints.get(scope);
		if (!memory) this.endpoints.set(scope, (memory = new EndpointMemory(url)));
		return memory;
	}

	/** Forgets the endpoint at `url` of workflow `workflowId` (its workflow was deactivated). */
	forget(workflowId: string, url: string): void {
		this.endpoints.delete(`${workflowId}|${url}`);
	}

	/** Forgets every endpoint, as the end of the process does (tests: a restart). */
	forgetAll(): void {
		this.endpoints.clear();
	}

	/** Waits until the sample deliveries being asked for are done. */
	async listeningsDone(): Promise<void> {
		while (this.listenings.size)
			await Promise.allSettled([...this.listenings.values()].map((l) => l.done));
	}
}

/**
 * Shared set-up of the Marketplace Trigger engine tests: the node in n8n-core's engine (harness)
 * against the sandbox over real HTTP. Each test gets its own sandbox user, so endpoint counts
 * and event scopes never mix between tests.
 */
import type { IDataObject, INodeParameters, IWorkflowSettings } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { MarketplaceApi } from '../../credentials/MarketplaceApi.credentials';
import { MarketplaceTrigger } from '../../nodes/MarketplaceTrigger/MarketplaceTrigger.node';
import type { TriggerSettings } from '../../nodes/MarketplaceTrigger/memory';
import { parseSecret, signWebhook } from '../../nodes/shared/webhookVerifier';
import { createTriggerHarness, type TriggerHarness } from '../engine/harness';
import { WORKFLOW_ID } from '../engine/triggers';
import { startSandbox, type SandboxHandle, type SandboxOptions } from '../sandbox';
import { setTransportClock, transportClock } from '../transportClock';

export type { TriggerHarness };

/** trigger()'s wake-ups registered by the harnesses: a test wakes them (`wakeChecks`) instead of n8n's cron. */
const wakes = new Set<() => Promise<void>>();

/** Wakes every registered catch-up check once, as n8n's cron would, and waits for each. */
export async function wakeChecks(): Promise<void> {
	await Promise.all([...wakes].map(async (wake) => await wake()));
}

/**
 * The trigger's settings in the engine tests, injected through the node's constructor: the sample
 * is asked for at once (the harness saves create()'s static data as it returns), and trigger()'s
 * check is woken by the test. The clock stays the transport's, so a
 * stepped clock moves the trigger's waits too. Tests of a schedule pass their own settings.
 */
export const HARNESS_SETTINGS: Partial<TriggerSettings> = {
	sample: { firstMs: 0, retryMs: 0, attempts: 6 },
	wake: (_ctx, onWake) => {
		wakes.add(onWake);
		return () => wakes.delete(onWake);
	},
};

/** The node instance of a harness: this "process"'s part of the trigger. */
export function triggerOf(harness: TriggerHarness): MarketplaceTrigger {
	return harness.nodeType as MarketplaceTrigger;
}

/** Keys of `section` this harness's process holds in its memory of the endpoint at `url`. */
export function heldInMemory(
	harness: TriggerHarness,
	url: string,
	section: 'known' | 'deliveredOrders' = 'known',
): number {
	return triggerOf(harness).triggerProcess.memoryOf(WORKFLOW_ID, url)[section].size;
}

/** A restart of n8n: the process's memory of every endpoint is gone, the static data stays. */
export function restart(harness: TriggerHarness): void {
	triggerOf(harness).triggerProcess.forgetAll();
}

/** Waits until every request and run under way ended: what they changed is saved (as a restart test needs). */
export async function idsStored(harness: TriggerHarness): Promise<void> {
	await harness.settled();
}

export class TriggerBench {
	sandbox!: SandboxHandle;
	private harnesses: TriggerHarness[] = [];
	private brand = 0;

	constructor(private readonly options: SandboxOptions = { allowHttpLoopback: true }) {}

	get control() {
		return this.sandbox.control;
	}

	async start(): Promise<void> {
		this.sandbox = await startSandbox(this.options);
	}

	async close(): Promise<void> {
		await this.closeHarnesses();
		await this.sandbox.close();
	}

	async closeHarnesses(): Promise<void> {
		const open = this.harnesses.splice(0);
		await Promise.all(
			open.map(async (h) => {
				await triggerOf(h).triggerProcess.listeningsDone();
				triggerOf(h).triggerProcess.forgetAll();
				await h.close();
			}),
		);
	}

	/**
	 * A fresh user with every permission and one in-scope brand of its own (1..5, cycling), so
	 * events of one test reach only that test's endpoints as long as tests clean up.
	 */
	async user(brandIds?: number[]): Promise<{ userId: number; apiKey: string; brandId: number }> {
		const brandId = (this.brand++ % 5) + 1;
		const { userId, apiKey } = await this.control.createUser({ brandIds: brandIds ?? [brandId] });
		return { userId, apiKey, brandId: (brandIds ?? [brandId])[0] };
	}

	async trigger(
		apiKey: string,
		parameters: INodeParameters = {},
		extra: {
			workflowStaticData?: IDataObject;
			webhookBaseUrl?: string;
			settings?: Partial<TriggerSettings>;
			/** another harness's database: a second n8n process on the same database */
			database?: TriggerHarness['database'];
			workflowSettings?: IWorkflowSettings;
		} = {},
	): Promise<TriggerHarness> {
		const { settings, ...harnessExtra } = extra;
		const harness = await createTriggerHarness({
			node: new MarketplaceTrigger({ ...HARNESS_SETTINGS, ...settings }),
			credentialTypes: [new MarketplaceApi()],
			credentials: { marketplaceApi: { baseUrl: this.sandbox.baseUrl, apiKey } },
			parameters: { eventTypes: ['order.created'], options: {}, ...parameters },
			...harnessExtra,
		});
		this.harnesses.push(harness);
		return harness;
	}

	/** The user's endpoints as the sandbox holds them (secrets included). */
	async endpointsOf(userId: number) {
		return (await this.control.endpoints()).filter((e) => e.ownerUserId === userId);
	}

	/** Requests the sandbox received with this API key, after `since` (a request log seq). */
	async requestsOf(apiKey: string, since = 0) {
		return (await this.control.requests(since)).filter(
			(r) => r.headers.authorization === `Bearer ${apiKey}`,
		);
	}

	async lastSeq(): Promise<number> {
		return (await this.control.requests()).at(-1)?.seq ?? 0;
	}
}

/** The endpoint record the trigger keeps for `url` in its static data. */
export function recordOf(harness: TriggerHarness, url: string): IDataObject | undefined {
	return (harness.staticData.endpoints as IDataObject | undefined)?.[url] as
		| IDataObject
		| undefined;
}

/**
 * Forgets the requests, answers and runs the harness recorded so far, once the sample delivery of a
 * manual activation is done: the activation check's test delivery (answered 401 while create()
 * runs, before n8n saved the secret) and the sample are not deliveries the tests that follow count.
 */
export async function forgetActivationTraffic(harness: TriggerHarness): Promise<void> {
	await triggerOf(harness).triggerProcess.listeningsDone();
	await harness.settled();
	harness.requests.length = 0;
	harness.responses.length = 0;
	harness.runs.length = 0;
	harness.executions.length = 0;
}

/**
 * The Standard Webhooks headers of `event` signed by hand with `secrets` over `signedBody`, at the
 * transport's clock unless `timestamp` (Unix seconds) is given, as the service would sign it.
 */
export function signedHeaders(
	event: IDataObject,
	secrets: string[],
	signedBody = JSON.stringify(event),
	timestamp = Math.floor(transportClock().now() / 1000),
): Record<string, string> {
	const id = String(event.id);
	return {
		'content-type': 'application/json',
		'webhook-id': id,
		'webhook-timestamp': String(timestamp),
		'webhook-signature': secrets
			.map((s) => signWebhook(id, timestamp, Buffer.from(signedBody), parseSecret(s)))
			.join(' '),
	};
}

/**
 * An event signed by hand with the trigger's current secret, as the service would sign it now: to
 * `t`'s production URL, or to the same path at the process `via` (a second n8n process on the same
 * database).
 */
export async function deliverWithSecret(t: TriggerHarness, event: IDataObject, via = t) {
	const secret = String(recordOf(t, t.webhookUrl)!.secret);
	const url =
		via === t ? undefined : `http://127.0.0.1:${via.listenPort}${new URL(t.webhookUrl).pathname}`;
	return await via.deliver(JSON.stringify(event), signedHeaders(event, [secret]), { url });
}

/** Polls until `check` returns a truthy value (real time), or fails after `timeoutMs`. */
export async function eventually<T>(
	check: () => Promise<T | undefined | false> | T | undefined | false,
	timeoutMs = 5000,
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await check();
		if (value) return value;
		if (Date.now() > deadline) throw new Error('condition not met in time');
		await new Promise((r) => setTimeout(r, 25));
	}
}

/** Lets in-flight deliveries and runs settle, then returns how many runs the harness saw. */
export async function settledRuns(harness: TriggerHarness, ms = 300): Promise<number> {
	await new Promise((r) => setTimeout(r, ms));
	return harness.runs.length;
}

/**
 * One clock for the trigger and the sandbox, for tests of trigger()'s catch-up check: the trigger's
 * (injected, and the transport's) reads the sandbox's virtual clock, and the sandbox signs its attempts
 * at that time too (timestampSkewSeconds), so a test moves minutes and days in steps and sees what the
 * trigger does at each. `install` in beforeEach, `uninstall` in afterEach.
 */
export class SharedClock {
	/** how far the shared clock is ahead of real time (the sandbox's offset) */
	private offsetMs = 0;

	constructor(private readonly bench: TriggerBench) {}

	readonly now = () => Date.now() + this.offsetMs;

	readonly clock = {
		now: this.now,
		// a wait ends when the shared clock passed its end: in real time, or at once when a test moves the clock
		sleep: async (ms: number) => {
			const until = this.now() + ms;
			while (this.now() < until) await sleep(Math.min(until - this.now(), 10));
		},
	};

	/** The trigger's settings on this clock: the first check 20 s after the start, as n8n's defaults. */
	readonly settings: Partial<TriggerSettings> = {
		clock: this.clock,
		catchUpCheck: { firstMs: 20_000, retryMs: 60_000 },
		// the sandbox makes a test delivery's one attempt before it answers the Test call
		probe: { pendingReads: 0, pendingWaitMs: 0 },
	};

	install(): void {
		setTransportClock({ ...this.clock, random: Math.random });
	}

	uninstall(): void {
		setTransportClock();
	}

	/** Moves the shared clock by `ms`: the sandbox runs every attempt that became due, signed at its time. */
	async advance(ms: number): Promise<void> {
		this.offsetMs += ms;
		await this.bench.control.settings({ timestampSkewSeconds: Math.round(this.offsetMs / 1000) });
		await this.bench.control.advanceClockMs(ms);
	}
}

/** Wakes the check as n8n's cron does, then lets the trigger act on the time it now reads: until every request and run ended. */
export async function settle(t: TriggerHarness): Promise<void> {
	await wakeChecks();
	await sleep(10);
	await eventually(() => t.requests.length === t.responses.length);
	await t.settled();
}

/** The order ids of the caught-up items of every run so far. */
export const caughtUp = (t: TriggerHarness) =>
	t.runs
		.flatMap((run) => run[0].map((item) => item.json))
		.filter((json) => json.caughtUp === true)
		.map((json) => (json.data as IDataObject).orderId as number);

const DAY_MS = 24 * 3_600_000;

/**
 * An active trigger on `clock` (its check started) that received one order and checked once; then
 * n8n stops for over a week: the service's attempts fail, it disables the endpoint after 5 days, and
 * three orders come meanwhile. n8n has not started again (`startAgain`).
 */
export async function outageOf(
	bench: TriggerBench,
	clock: SharedClock,
	parameters: INodeParameters,
) {
	const { userId, apiKey, brandId } = await bench.user();
	const t = await bench.trigger(apiKey, parameters, { settings: clock.settings });
	await t.activate();
	await t.startTrigger();
	const [endpoint] = await bench.endpointsOf(userId);
	const before = await bench.control.createOrder({ brandId });
	await t.waitForRuns(1);
	await clock.advance(25_000);
	await settle(t);
	restart(t);
	await t.stopTrigger();
	await bench.control.setEndpointUrl(endpoint.id, 'http://127.0.0.1:1/n8n-is-down');
	await clock.advance(5 * DAY_MS + 60_000);
	const missed = [(await bench.control.createOrder({ brandId })).order.id as number];
	await clock.advance(2 * DAY_MS);
	const [disabled] = await bench.endpointsOf(userId);
	if (disabled.status !== 'Disabled')
		throw new Error(`the sandbox did not disable endpoint ${endpoint.id}: ${disabled.status}`);
	for (let i = 0; i < 2; i++)
		missed.push((await bench.control.createOrder({ brandId })).order.id as number);
	await bench.control.setEndpointUrl(endpoint.id, t.webhookUrl);
	return { userId, apiKey, brandId, t, endpoint, before: before.order.id as number, missed };
}

/** n8n starts again: the activation hook ('init'), then trigger(), and its first check 20 s on. Returns what checkExists said. */
export async function startAgain(t: TriggerHarness, clock: SharedClock): Promise<boolean> {
	const found = await t.checkExists('init');
	await t.startTrigger('init');
	await clock.advance(25_000);
	await settle(t);
	return found;
}

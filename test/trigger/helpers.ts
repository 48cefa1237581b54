/**
 * Shared set-up of the Marketplace Trigger engine tests: the node in n8n-core's engine (harness)
 * against the sandbox over real HTTP. Each test gets its own sandbox user, so endpoint counts
 * and event scopes never mix between tests.
 */
import { Container } from '@n8n/di';
import { ScheduledTaskManager } from 'n8n-core';
import type { IDataObject, INodeParameters, IWorkflowSettings } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { MarketplaceApi } from '../../credentials/MarketplaceApi.credentials';
import { MarketplaceTrigger } from '../../nodes/MarketplaceTrigger/MarketplaceTrigger.node';
import { parseSecret, signWebhook } from '../../nodes/shared/webhookVerifier';
import { createTriggerHarness, type TriggerHarness } from '../engine/harness';
import { startSandbox, type SandboxHandle, type SandboxOptions } from '../sandbox';
import { setTransportClock, transportClock } from '../transportClock';

export type { TriggerHarness };

/**
 * n8n's cron, as trigger() registers it through `helpers.registerCron`: n8n-core's
 * ScheduledTaskManager is replaced in n8n's container by one that keeps each registration, so a test
 * runs a tick (`tickCrons`) instead of waiting for the minute. Only n8n's scheduler is replaced.
 */
const crons: Array<{ expression: string; workflowId: string; onTick: () => void }> = [];
Container.set(ScheduledTaskManager, {
	register: (ctx: { expression: string; group: { id: string } }, onTick: () => void) => {
		crons.push({ expression: ctx.expression, workflowId: ctx.group.id, onTick });
	},
	deregisterGroup: () => {},
	deregisterTarget: () => {},
	deregisterGroups: () => {},
} as unknown as ScheduledTaskManager);

/** The cron expressions registered so far (and not forgotten by `forgetCrons`). */
export const registeredCrons = () => crons.map((c) => c.expression);

/** Runs every registered cron's tick once, as n8n's scheduler would at its time. */
export function tickCrons(): void {
	for (const cron of crons) cron.onTick();
}

/** A deactivation: n8n removes the workflow's crons. */
export function forgetCrons(): void {
	crons.length = 0;
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
			/** another harness's database: a second n8n process on the same database */
			database?: TriggerHarness['database'];
			workflowSettings?: IWorkflowSettings;
		} = {},
	): Promise<TriggerHarness> {
		const harness = await createTriggerHarness({
			node: new MarketplaceTrigger(),
			credentialTypes: [new MarketplaceApi()],
			credentials: { marketplaceApi: { baseUrl: this.sandbox.baseUrl, apiKey } },
			parameters: { eventTypes: ['order.created'], options: {}, ...parameters },
			...extra,
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
 * Forgets the requests, answers and runs the harness recorded so far: the activation check's test
 * delivery (answered 401 while create() runs, before n8n saved the secret) is not a delivery the
 * tests that follow count.
 */
export async function forgetActivationTraffic(harness: TriggerHarness): Promise<void> {
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
 * One clock for the trigger and the sandbox, for tests of the catch-up check: the transport reads the
 * sandbox's virtual clock, and the sandbox signs its attempts at that time too (timestampSkewSeconds),
 * so a test moves minutes and days in steps and sees what the trigger does at each. `install` in
 * beforeEach, `uninstall` in afterEach.
 */
export class SharedClock {
	/** how far the shared clock is ahead of real time (the sandbox's offset) */
	private offsetMs = 0;

	constructor(private readonly bench: TriggerBench) {}

	readonly now = () => Date.now() + this.offsetMs;

	install(): void {
		setTransportClock({
			now: this.now,
			// a wait ends when the shared clock passed its end: in real time, or at once when a test moves the clock
			sleep: async (ms: number) => {
				const until = this.now() + ms;
				while (this.now() < until) await sleep(Math.min(until - this.now(), 10));
			},
			random: Math.random,
		});
	}

	uninstall(): void {
		setTransportClock();
	}

	/**
	 * Moves the shared clock by `ms`: the sandbox runs every attempt that became due, signed at its time
	 * (or `signedAheadSeconds` after it: the service's clock ahead of this n8n's).
	 */
	async advance(ms: number, signedAheadSeconds = 0): Promise<void> {
		this.offsetMs += ms;
		await this.bench.control.settings({
			timestampSkewSeconds: Math.round(this.offsetMs / 1000) + signedAheadSeconds,
		});
		await this.bench.control.advanceClockMs(ms);
	}
}

/** Lets every request and run under way end. */
export async function settle(t: TriggerHarness): Promise<void> {
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

/**
 * The set-up of a suite on the shared clock: one sandbox for the suite, the clock installed for each
 * test and moved a day on (no order of an earlier test is within a check's window: brands repeat),
 * and after each test every harness closed, n8n's crons forgotten and spies restored.
 */
export function sharedClockSuite(): { bench: TriggerBench; shared: SharedClock } {
	const bench = new TriggerBench();
	const shared = new SharedClock(bench);
	beforeAll(async () => await bench.start());
	afterAll(async () => await bench.close());
	beforeEach(async () => {
		shared.install();
		await shared.advance(24 * 3_600_000);
	});
	afterEach(async () => {
		jest.restoreAllMocks();
		await bench.closeHarnesses();
		forgetCrons();
		shared.uninstall();
	});
	return { bench, shared };
}

/** A published trigger of a fresh user, its activation traffic forgotten. */
export async function publishedTrigger(bench: TriggerBench, parameters: IDataObject = {}) {
	const user = await bench.user();
	const t = await bench.trigger(user.apiKey, parameters);
	await t.activate();
	await forgetActivationTraffic(t);
	const [endpoint] = await bench.endpointsOf(user.userId);
	return { ...user, t, endpoint };
}

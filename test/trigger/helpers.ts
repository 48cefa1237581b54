/**
 * Shared set-up of the Marketplace Trigger engine tests: the node in n8n-core's engine (harness)
 * against the sandbox over real HTTP. Each test gets its own sandbox user, so endpoint counts
 * and event scopes never mix between tests.
 */
import type { IDataObject, INodeParameters, IWorkflowSettings } from 'n8n-workflow';

import { MarketplaceApi } from '../../credentials/MarketplaceApi.credentials';
import { MarketplaceTrigger } from '../../nodes/MarketplaceTrigger/MarketplaceTrigger.node';
import type { TriggerSettings } from '../../nodes/MarketplaceTrigger/memory';
import { parseSecret, signWebhook } from '../../nodes/shared/webhookVerifier';
import { createTriggerHarness, type TriggerHarness } from '../engine/harness';
import { WORKFLOW_ID } from '../engine/triggers';
import { startSandbox, type SandboxHandle, type SandboxOptions } from '../sandbox';

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
	section: 'seen' | 'orders' = 'seen',
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

/** An event signed by hand with the trigger's current secret at `t`'s production URL, as the service would sign it now. */
export async function deliverWithSecret(t: TriggerHarness, event: IDataObject) {
	const secret = String(recordOf(t, t.webhookUrl)!.secret);
	const body = JSON.stringify(event);
	const timestamp = Math.floor(Date.now() / 1000);
	return await t.deliver(body, {
		'content-type': 'application/json',
		'webhook-id': String(event.id),
		'webhook-timestamp': String(timestamp),
		'webhook-signature': signWebhook(
			String(event.id),
			timestamp,
			Buffer.from(body),
			parseSecret(secret),
		),
	});
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

const DAY_S = 24 * 3600;

/**
 * An active trigger that received one order; then its deliveries fail for over 5 days (one order
 * meanwhile, on the sandbox's clock), the service disables the endpoint, and two more orders come.
 */
export async function outageOf(bench: TriggerBench, parameters: INodeParameters) {
	const { userId, apiKey, brandId } = await bench.user();
	const t = await bench.trigger(apiKey, parameters);
	await t.activate();
	const [endpoint] = await bench.endpointsOf(userId);
	const before = await bench.control.createOrder({ brandId });
	await t.waitForRuns(1);
	await idsStored(t);
	await bench.control.setEndpointUrl(endpoint.id, 'http://127.0.0.1:1/unreachable');
	await bench.control.advanceClock(5 * DAY_S + 60);
	const missed = [(await bench.control.createOrder({ brandId })).order.id as number];
	await bench.control.advanceClock(2 * DAY_S);
	const [disabled] = await bench.endpointsOf(userId);
	if (disabled.status !== 'Disabled')
		throw new Error(`the sandbox did not disable endpoint ${endpoint.id}: ${disabled.status}`);
	for (let i = 0; i < 2; i++)
		missed.push((await bench.control.createOrder({ brandId })).order.id as number);
	await bench.control.setEndpointUrl(endpoint.id, t.webhookUrl);
	return { userId, apiKey, brandId, t, endpoint, before: before.order.id as number, missed };
}

/**
 * trigger() of the Marketplace Trigger: the catch-up check, so that missed orders run without
 * waiting for a delivery (after n8n starts, or while a proxy drops every delivery). n8n runs trigger()
 * after the activation hooks, on the one main process that runs triggers, and stops what it
 * registered (its cron) on deactivation and shutdown.
 *
 *     n8n's cron, every 20 s --> the first check (catchUpCheck.firstMs after the start), then only
 *        when one is due (catchUp.ts `checkDue`) --> read the credential as it is now --> ask the
 *        service for a test delivery
 *        reached: webhook() catches up the window due with the static data as saved (receive.ts
 *                 `catchUpOnCheckDelivery`) and hands the missed orders to a run
 *        not reached (deliveries fail), in a process that receives deliveries (regular mode): this
 *                 process reads the orders itself and emits the ones it does not know as a run; the
 *                 run's check of n8n's `processed_data` table (run.ts) keeps out any that ran already
 *        failed for a reason the user must fix (a revoked key): a failed execution says so, once
 *
 * The close function n8n calls on deactivation and shutdown stops the cron, waits for a check under
 * way, and nothing is emitted after it.
 *
 * trigger() never writes the static data: its copy is the one read at activation, and n8n would
 * save it whole over what requests saved since. What `catchUpHere` catches up (its cursor and keys)
 * goes into this process's memory only (the store it reads is never written back), and the next
 * request of this process writes it into the static data.
 */
import type { ITriggerFunctions, ITriggerResponse } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { normaliseEventTypes } from '../shared/routes';
import { CREDENTIAL_TYPE, type TransportSettings } from '../shared/transport/request';
import { isTransient, readFailure } from '../shared/transport/transportErrors';
import { catchUpApplies, catchUpOrders, checkDue, dueWindow, QUIET_CHECK_MS } from './catchUp';
import { LIFECYCLE_TRANSPORT } from './lifecycle';
import type { EndpointMemory, TriggerProcess } from './memory';
import { judgeDelivery, testDelivery } from './reachability';
import { caughtUpKeys, keepInMemory } from './once';
import { EndpointStore } from './store';

interface CheckOptions {
	catchUpMissedOrders?: boolean;
	emitTestEvents?: boolean;
	fetchCurrentState?: boolean;
}

/** What one trigger() keeps between its checks. */
interface CheckState {
	firstAt: number;
	lastCheckAt: number;
	/** the check under way, which the close function waits for */
	running?: Promise<void>;
	/** set by the close function: nothing is emitted or kept after it */
	closed: boolean;
	/** the kind of the last failure told in the workflow's executions: told again only after a check that succeeded */
	told?: string;
}

/** trigger() of the node: registers the check's wake-up with n8n (none where there is nothing to catch up). */
export function catchUpCheckWith(getTriggerProcess: () => TriggerProcess) {
	return async function trigger(this: ITriggerFunctions): Promise<ITriggerResponse> {
		const options = this.getNodeParameter('options', {}) as CheckOptions;
		const subscribed = normaliseEventTypes(this.getNodeParameter('eventTypes', []));
		if (!catchUpApplies(this.getMode(), options, subscribed)) return {};
		const triggerProcess = getTriggerProcess();
		const state: CheckState = {
			firstAt: triggerProcess.settings.clock.now() + triggerProcess.settings.catchUpCheck.firstMs,
			lastCheckAt: -Infinity,
			closed: false,
		};
		const wake = async () => {
			if (state.running || state.closed) return;
			state.running = checkIfDue(this, triggerProcess, state, options);
			try {
				await state.running;
			} finally {
				state.running = undefined;
			}
		};
		const stop = triggerProcess.settings.wake(this, wake);
		return {
			closeFunction: async () => {
				state.closed = true;
				stop();
				await state.running;
			},
		};
	};
}

/** One wake-up of the cron: the check, when one is due. */
async function checkIfDue(
	ctx: ITriggerFunctions,
	triggerProcess: TriggerProcess,
	state: CheckState,
	options: CheckOptions,
): Promise<void> {
	const now = triggerProcess.settings.clock.now();
	const workflowId = ctx.getWorkflow().id ?? '';
	const endpoint = triggerProcess.activeEndpoints.get(workflowId);
	if (!endpoint || now < state.firstAt) return;
	const memory = triggerProcess.memoryOf(workflowId, endpoint.url);
	// the first check of this trigger() is due whatever a request caught up meanwhile
	const first = state.lastCheckAt === -Infinity;
	if (!first && !checkDue(memory, now, state.lastCheckAt)) return;
	state.lastCheckAt = now;
	await check(ctx, triggerProcess, state, options, endpoint, memory, now);
}

/** The check: the credential as it is now, the round trip through the service, or the catch-up here. */
async function check(
	ctx: ITriggerFunctions,
	triggerProcess: TriggerProcess,
	state: CheckState,
	options: CheckOptions,
	endpoint: { url: string; endpointId: number },
	memory: EndpointMemory,
	now: number,
): Promise<void> {
	const { clock, catchUpCheck } = triggerProcess.settings;
	try {
		// read at every check: a key the user rotated in n8n is used from the next check on
		const credential = await ctx.getCredentials(CREDENTIAL_TYPE);
		// with Emit Test Events on, a test delivery would start a run of its own
		if (options.emitTestEvents !== true) {
			const verdict = judgeDelivery(
				await testDelivery(ctx, endpoint.endpointId, triggerProcess.settings, credential),
			);
			state.told = undefined;
			if (verdict.reached) return;
			ctx.logger.warn(
				`Marketplace Trigger: the service's test delivery did not reach ${endpoint.url} (${verdict.saw})`,
			);
		}
		// only a process that receives the deliveries knows what ran (queue mode: the webhook processors)
		if (memory.lastVerifiedAt === undefined)
			return void checkAgainIn(state, now, catchUpCheck.retryMs);
		const store = EndpointStore.read(ctx.getWorkflowStaticData('node'), endpoint.url, memory);
		await catchUpHere(
			ctx,
			store,
			memory,
			state,
			options,
			{ ...LIFECYCLE_TRANSPORT, credential },
			clock.now(),
		);
		state.told = undefined;
	} catch (error) {
		checkAgainIn(state, now, catchUpCheck.retryMs);
		const failure = readFailure(error);
		ctx.logger.warn(`Marketplace Trigger could not check for missed orders: ${failure.message}`);
		tellInExecutions(ctx, state, error, failure);
	}
}

/**
 * A check that failed for a reason the user must fix (the key revoked or lacking a permission, the
 * credential gone) is told where the user looks, as a failed execution of the workflow, once until a
 * check succeeds again; a transient failure is only logged, as the next check retries it.
 */
function tellInExecutions(
	ctx: ITriggerFunctions,
	state: CheckState,
	error: unknown,
	failure: ReturnType<typeof readFailure>,
): void {
	// the kind of failure, not its message, which carries a request id of its own each time
	const kind = `${failure.status ?? ''} ${failure.slug ?? ''}`;
	if (isTransient(failure) || state.told === kind || state.closed) return;
	state.told = kind;
	// n8n 2.0 and 1.x do not offer it: there the log line above is all
	if (typeof ctx.saveFailedExecution !== 'function') return;
	const cause = error instanceof Error ? error : new Error(failure.message);
	ctx.saveFailedExecution(
		error instanceof NodeApiError || error instanceof NodeOperationError
			? error
			: new NodeOperationError(ctx.getNode(), cause),
	);
}

/**
 * Deliveries do not reach this n8n: the orders of the window due are read here and the ones this
 * process does not know are emitted as one run; the cursor and their keys stay in this process's
 * memory, which its next request writes into the static data.
 */
async function catchUpHere(
	ctx: ITriggerFunctions,
	store: EndpointStore,
	memory: EndpointMemory,
	state: CheckState,
	options: CheckOptions,
	transport: TransportSettings,
	nowMs: number,
): Promise<void> {
	const window = dueWindow(store, memory, { nowMs, serviceNowMs: nowMs }, undefined);
	if (!window) return;
	let release = () => {};
	try {
		const result = await catchUpOrders(
			ctx,
			window,
			store,
			memory,
			nowMs,
			transport,
			options.fetchCurrentState === true,
			(keys) => (release = memory.hold(keys)),
		);
		memory.caughtUpSinceStart = true;
		// closed meanwhile (deactivation, shutdown): the next activation's check brings these orders
		if (state.closed) return;
		// into this process's memory only: this store is never written back (see the file comment)
		store.setCursor(result.to);
		keepInMemory(store, caughtUpKeys(result.events, nowMs));
		if (result.events.length > 0) ctx.emit([result.events.map((json) => ({ json }))]);
	} finally {
		release();
	}
}

/** The next check comes `retryMs` after `nowMs` (not at the next wake). */
function checkAgainIn(state: CheckState, nowMs: number, retryMs: number): void {
	state.lastCheckAt = nowMs - QUIET_CHECK_MS + retryMs;
}

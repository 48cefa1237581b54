/**
 * trigger() of the Marketplace Trigger: the catch-up check, so that missed orders run without
 * waiting for a delivery (after n8n starts, or while a proxy drops every delivery). n8n runs trigger()
 * after the activation hooks, on the one main process that runs triggers, and stops what it
 * registered (its cron) on deactivation and shutdown.
 *
 *     n8n's cron, every 20 s --> due? (catchUp.ts `checkDue`) --> ask the service for a test delivery
 *        reached: webhook() catches up the window due with the static data as saved (receive.ts
 *                 `catchUpNow`) and hands the missed orders to a run
 *        not reached (deliveries fail), in a process that receives deliveries (regular mode): this
 *                 process reads the orders itself and emits the ones it does not know as a run; the
 *                 run's check of n8n's deduplication store (run.ts) keeps out any that ran already
 *
 * trigger() never writes the static data: its copy is the one read at activation, and n8n would
 * save it whole over what requests saved since. What it catches up itself is this process's memory
 * until a request of this process saves it.
 */
import type {
	ICredentialDataDecryptedObject,
	ITriggerFunctions,
	ITriggerResponse,
} from 'n8n-workflow';

import { normaliseEventTypes } from '../shared/routes';
import { CREDENTIAL_TYPE, type TransportSettings } from '../shared/transport/request';
import { readFailure } from '../shared/transport/transportErrors';
import { catchUpOrders, caughtUpKeys, checkDue, dueWindow, QUIET_CHECK_MS } from './catchUp';
import { LIFECYCLE_TRANSPORT } from './lifecycle';
import type { EndpointMemory, TriggerProcess } from './memory';
import { judgeDelivery, testDelivery } from './reachability';
import { EndpointStore, ORDER_CREATED } from './store';

interface CheckOptions {
	catchUpMissedOrders?: boolean;
	emitTestEvents?: boolean;
	fetchCurrentState?: boolean;
}

/** trigger() of the node: registers the check's wake-up with n8n (none where there is nothing to catch up). */
export function catchUpCheckWith(process: () => TriggerProcess) {
	return async function trigger(this: ITriggerFunctions): Promise<ITriggerResponse> {
		const options = this.getNodeParameter('options', {}) as CheckOptions;
		const subscribed = normaliseEventTypes(this.getNodeParameter('eventTypes', []));
		if (this.getMode() === 'manual' || options.catchUpMissedOrders === false) return {};
		if (!subscribed.includes(ORDER_CREATED)) return {};
		const trigger = process();
		// read now: n8n 2.41 holds an expression isolate while it starts trigger(), not at its cron's ticks
		const credential = await this.getCredentials(CREDENTIAL_TYPE);
		const state = {
			firstAt: trigger.settings.clock.now() + trigger.settings.catchUpCheck.firstMs,
			lastCheckAt: -Infinity,
			running: false,
		};
		const wake = async () => {
			if (state.running) return;
			state.running = true;
			try {
				await checkOnce(this, trigger, state, options, credential);
			} finally {
				state.running = false;
			}
		};
		const stop = trigger.settings.wake(this, wake);
		return { closeFunction: async () => stop() };
	};
}

/** One wake-up: the check, when one is due. */
async function checkOnce(
	ctx: ITriggerFunctions,
	process: TriggerProcess,
	state: { firstAt: number; lastCheckAt: number },
	options: CheckOptions,
	credential: ICredentialDataDecryptedObject,
): Promise<void> {
	const { clock, catchUpCheck } = process.settings;
	const now = clock.now();
	const workflowId = ctx.getWorkflow().id ?? '';
	const endpoint = process.activeEndpoints.get(workflowId);
	if (!endpoint || now < state.firstAt) return;
	const memory = process.memoryOf(workflowId, endpoint.url);
	const store = EndpointStore.read(ctx.getWorkflowStaticData('node'), endpoint.url, memory);
	// the first check of this trigger() is due whatever a request caught up meanwhile
	const first = state.lastCheckAt === -Infinity;
	if (!first && !checkDue(store, memory, now, state.lastCheckAt)) return;
	state.lastCheckAt = now;
	try {
		// with Emit Test Events on, a test delivery would start a run of its own
		if (options.emitTestEvents !== true) {
			const verdict = judgeDelivery(
				await testDelivery(ctx, endpoint.endpointId, process.settings, credential),
			);
			if (verdict.reached) return;
			ctx.logger.warn(
				`Marketplace Trigger: the service's test delivery did not reach ${endpoint.url} (${verdict.saw})`,
			);
		}
		// only a process that receives the deliveries knows what ran (queue mode: the webhook processors)
		if (memory.lastVerifiedAt === undefined)
			return void retryLater(state, now, catchUpCheck.retryMs);
		await catchUpHere(
			ctx,
			store,
			memory,
			options,
			{ ...LIFECYCLE_TRANSPORT, credential },
			clock.now(),
		);
	} catch (error) {
		retryLater(state, now, catchUpCheck.retryMs);
		ctx.logger.warn(
			`Marketplace Trigger could not check for missed orders: ${readFailure(error).message}`,
		);
	}
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
	options: CheckOptions,
	transport: TransportSettings,
	nowMs: number,
): Promise<void> {
	const window = dueWindow(store, memory, { eventAt: nowMs, selfStarted: true }, undefined);
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
		if (!result.ran) return;
		memory.cursor = Math.max(memory.cursor, result.to);
		memory.accept(caughtUpKeys(result.events, nowMs), nowMs);
		if (result.events.length > 0) ctx.emit([result.events.map((json) => ({ json }))]);
	} finally {
		release();
	}
}

/** The next check comes `retryMs` after `nowMs` (not at the next wake). */
function retryLater(state: { lastCheckAt: number }, nowMs: number, retryMs: number): void {
	state.lastCheckAt = nowMs - QUIET_CHECK_MS + retryMs;
}

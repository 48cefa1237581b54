/**
 * The trigger's own catch-up: missed orders run without waiting for a delivery. A delivery catches
 * up only when one arrives, and after n8n starts, or while a proxy drops every delivery, none may
 * come. So from the activation hook on (n8n runs it at activation and at every start, the latter
 * on n8n 2.x because the node has a trigger method), each process the service reaches sends
 * catch-up requests, signed like save requests, to its own webhook; webhook() catches up the
 * window that is due and emits the missed orders as a run (receive.ts `catchUpNow`). A run starts
 * only from a request to the webhook, as for a delivery, so the static data is saved the same way.
 *
 *     activation hook --> startCatchUpRequests --+
 *     a verified request of the service ---------+--> ensureCatchUpRequests: one loop per endpoint
 *     loop: wait firstMs --- catch-up request ---> webhook(): due? read, claim, emit (catchUp.ts)
 *                        <-- { nextCheckInMs } --  a minute after a read that saw orders too recent
 *                                                  for its window, else five minutes after the cursor
 *           wait, then the next request ...
 *
 * Cost, out of the key's 120 requests a minute: one order-list read after each start, then one every
 * five minutes when quiet; in steady traffic deliveries catch up (at most once a minute) and the
 * requests find nothing due. The test URL never starts a loop; with Catch Up Missed Orders off, or
 * without Order Created, there is none. Deactivation forgets the endpoint's memory, which ends it.
 */
import type { IHookFunctions } from 'n8n-workflow';

import { normaliseEventTypes } from '../shared/routes';
import { CATCH_UP_REQUEST_TYPE } from './catchUp';
import type { EndpointMemory, TriggerProcess, TriggerSettings } from './memory';
import { postToOwnWebhook } from './saveViaOwnWebhook';
import { ORDER_CREATED } from './store';

/** While it waits, a loop looks this often whether its endpoint was forgotten (deactivation). */
const FORGOTTEN_CHECK_MS = 1_000;

/**
 * After the activation hook at `url` succeeded with `secret`: makes sure this process sends catch-up
 * requests for the endpoint when the activation check's test delivery arrived in this process (its
 * listener is known). In queue mode it arrives at a webhook processor, which starts its own loop.
 */
export function startCatchUpRequests(
	ctx: IHookFunctions,
	process: TriggerProcess,
	url: string,
	secret: string | undefined,
): void {
	if (ctx.getMode() === 'manual' || !secret) return;
	const options = ctx.getNodeParameter('options', {}) as { catchUpMissedOrders?: boolean };
	if (options.catchUpMissedOrders === false) return;
	if (!normaliseEventTypes(ctx.getNodeParameter('eventTypes', [])).includes(ORDER_CREATED)) return;
	const memory = process.memoryOf(ctx.getWorkflow().id ?? '', url);
	// never the public URL: behind a proxy or NAT n8n often cannot reach it (the process the check reached starts its own)
	if (!memory.own.listener) return;
	Object.assign(memory.own, { ctx, secret });
	ensureCatchUpRequests(process.settings, memory);
}

/**
 * Starts the endpoint's loop of catch-up requests in this process unless it runs: from the
 * activation hook, and from a verified production request of the service with the catch-up on (the
 * activation check's test delivery at a webhook processor; any delivery, should a loop have ended).
 */
export function ensureCatchUpRequests(settings: TriggerSettings, memory: EndpointMemory): void {
	const loop = memory.catchUpLoop;
	if (loop.running || memory.forgotten || !Number.isFinite(settings.catchUpRequest.firstMs)) return;
	loop.running = true;
	void runCatchUpRequests(settings, memory).finally(() => (loop.running = false));
}

/** Sends a catch-up request when the previous answer said the next one is worth it, until forgotten. */
async function runCatchUpRequests(
	settings: TriggerSettings,
	memory: EndpointMemory,
): Promise<void> {
	let wait = settings.catchUpRequest.firstMs;
	while (await waitUnlessForgotten(settings, memory, wait)) {
		const { ctx, listener, secret } = memory.own;
		if (!ctx || !listener || !secret) return;
		try {
			const answer = (await postToOwnWebhook(ctx, listener, secret, {
				idPrefix: 'catch_up',
				type: CATCH_UP_REQUEST_TYPE,
				data: {},
			})) as { nextCheckInMs?: unknown; stop?: unknown } | undefined;
			// the workflow's settings changed under this loop (option off, Order Created gone)
			if (answer?.stop === true) return;
			const next = answer?.nextCheckInMs;
			wait =
				typeof next === 'number' && Number.isFinite(next) && next >= 0
					? next
					: settings.catchUpRequest.retryMs;
		} catch (error) {
			ctx.logger.warn(
				`Marketplace Trigger could not send its own catch-up request to ${listener.url}: ${(error as Error).message}; ` +
					'missed orders wait for the next delivery. If n8n cannot reach that address, allow it (NO_PROXY, SSRF settings).',
				{ url: memory.url },
			);
			wait = settings.catchUpRequest.retryMs;
		}
	}
}

/** Waits `ms` on the settings' clock; false, at once, when the endpoint was forgotten meanwhile. */
async function waitUnlessForgotten(
	settings: TriggerSettings,
	memory: EndpointMemory,
	ms: number,
): Promise<boolean> {
	const { clock } = settings;
	const until = clock.now() + ms;
	for (let now = clock.now(); now < until && !memory.forgotten; now = clock.now())
		await clock.sleep(Math.min(until - now, FORGOTTEN_CHECK_MS));
	return !memory.forgotten;
}

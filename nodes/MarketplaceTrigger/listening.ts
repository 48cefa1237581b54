/**
 * "Listen for test event" (n8n's test URL, mode 'manual'), the activation side: create()/checkExists()
 * start `startSampleDelivery` once they return; it asks the service for a test delivery to the test
 * URL (Webhook Endpoint > Test), which sample.ts answers with a sample item. It cannot be asked inside
 * create(): n8n 2.41.1 (TestWebhooks.needsWebhook) registers the test route, calls create(), and only
 * then registers it again with the static data create() wrote (the secret), so a delivery made
 * meanwhile is refused 401 ("no secret"). While the record shows 401 it asks again, a bounded number
 * of times. When the service cannot deliver, the reason goes to n8n's log and the listening ends at
 * n8n's own timeout. This is the one place the trigger works past a hook: n8n runs no node code for
 * a test listening after create() returns, and a request made inside create() would be refused
 * (CONTRIBUTING.md, Verification). It ends, at the latest, when n8n ends the listening: the delete
 * hook stops it and waits for a request under way (`endSampleDelivery`). Its requests read the credential as any hook's do (the
 * credential's `authenticate` is a function, which needs no expression isolate).
 */
import type { IHookFunctions } from 'n8n-workflow';

import { readFailure } from '../shared/transport/transportErrors';
import type { Listening, TriggerProcess } from './memory';
import {
	judgeDelivery,
	testDelivery,
	unreachableMessage,
	type DeliveryOutcome,
} from './reachability';

/**
 * Ends the listening with `message`, in n8n's log: nothing else can reach the editor once create()
 * returned (n8n ends the listening at its own timeout).
 */
function endListening(ctx: IHookFunctions, url: string, endpointId: number, message: string): void {
	ctx.logger.warn(message, { url, endpointId });
}

/**
 * Starts, without waiting, the request for the sample delivery to the test URL `url`. Called by
 * create()/checkExists() in manual mode after the activation check passed; a second listening on
 * the same endpoint does not start another.
 */
export function startSampleDelivery(
	ctx: IHookFunctions,
	triggerProcess: TriggerProcess,
	endpointId: number,
	url: string,
): void {
	if (triggerProcess.listenings.has(endpointId)) return;
	const listening: Listening = { done: Promise.resolve(), ended: false };
	listening.done = requestSampleDelivery(ctx, triggerProcess, listening, endpointId, url)
		.catch((error) =>
			ctx.logger.warn(
				`Marketplace Trigger: the sample delivery failed: ${(error as Error).message}`,
			),
		)
		.finally(() => triggerProcess.listenings.delete(endpointId));
	triggerProcess.listenings.set(endpointId, listening);
}

/**
 * n8n ended the listening (its delete hook): the sample is asked for no more, and the hook returns
 * only once a request under way has ended, so nothing of the listening outlives it.
 */
export async function endSampleDelivery(
	triggerProcess: TriggerProcess,
	endpointId: number,
): Promise<void> {
	const listening = triggerProcess.listenings.get(endpointId);
	if (!listening) return;
	listening.ended = true;
	await listening.done;
}

async function requestSampleDelivery(
	ctx: IHookFunctions,
	triggerProcess: TriggerProcess,
	listening: Listening,
	endpointId: number,
	url: string,
): Promise<void> {
	const { clock, sample } = triggerProcess.settings;
	await clock.sleep(sample.firstMs);
	let last: DeliveryOutcome | undefined;
	let problem: string | undefined;
	for (let attempt = 1; attempt <= sample.attempts; attempt++) {
		if (attempt > 1) await clock.sleep(sample.retryMs);
		if (listening.ended) return;
		try {
			last = await testDelivery(ctx, endpointId, triggerProcess.settings);
			problem = undefined;
		} catch (error) {
			const failure = readFailure(error);
			// the listening ended meanwhile (n8n deleted the endpoint): nothing to deliver to
			if (failure.status === 404) return;
			problem = `Webhook Endpoint > Test failed (${failure.message})`;
			continue;
		}
		const code = last.httpStatus;
		if (code !== null && code >= 200 && code < 300) return;
		// 401: n8n has not registered the test route with the secret yet; anything else: not reached
		if (code === 401) continue;
		const verdict = judgeDelivery(last);
		if (!verdict.reached && verdict.final) {
			endListening(ctx, url, endpointId, `No sample: ${unreachableMessage(url, verdict)}`);
			return;
		}
	}
	const saw =
		problem ??
		(last?.httpStatus === 401
			? `its test deliveries were still refused (HTTP 401) after ${sample.attempts} tries: n8n did not give the test URL the secret this listening registered`
			: 'the service did not attempt the test delivery');
	endListening(
		ctx,
		url,
		endpointId,
		`No sample: the Marketplace service could not deliver a test event to ${url}: ${saw}. Listen for a test event again; if it keeps failing, activate the workflow, which checks the address.`,
	);
}

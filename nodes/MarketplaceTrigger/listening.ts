/**
 * "Listen for test event" (n8n's test URL, mode 'manual'), the activation side: the sample is asked
 * for by the hooks of a second webhook, `setup`, which n8n runs after those of `default`. By then n8n
 * has stored the test route with the static data default's create() wrote (the secret), so the test
 * delivery the service makes (Webhook Endpoint > Test) is verified, and sample.ts answers it with a
 * sample item. (A delivery made inside default's create() would be refused: n8n 2.41.1's
 * TestWebhooks.needsWebhook registers the route, calls the hooks, and only then stores the route
 * again with the static data they wrote.) When the service cannot deliver, setup's create() throws
 * the reason, and n8n stops the listening with it, in the editor.
 */
import type { IHookFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { readFailure } from '../shared/transport/transportErrors';
import type { TriggerProcess } from './memory';
import {
	judgeDelivery,
	testDelivery,
	unreachableMessage,
	type DeliveryOutcome,
} from './reachability';
import { EndpointStore } from './store';

/**
 * create() of the `setup` webhook in manual mode: asks the service for the sample delivery to the
 * test URL, up to `sample.attempts` times while it is refused (401) or not attempted; throws, with
 * what the service saw, when none arrives.
 */
export async function requestSample(
	ctx: IHookFunctions,
	process: TriggerProcess,
): Promise<boolean> {
	const url = ctx.getNodeWebhookUrl('default') ?? '';
	const record = EndpointStore.read(ctx.getWorkflowStaticData('node'), url).record;
	if (!record) return true;
	await requestSampleDelivery(ctx, process, record.endpointId, url);
	return true;
}

async function requestSampleDelivery(
	ctx: IHookFunctions,
	process: TriggerProcess,
	endpointId: number,
	url: string,
): Promise<void> {
	const { clock, sample } = process.settings;
	await clock.sleep(sample.firstMs);
	let last: DeliveryOutcome | undefined;
	let problem: string | undefined;
	for (let attempt = 1; attempt <= sample.attempts; attempt++) {
		if (attempt > 1) await clock.sleep(sample.retryMs);
		try {
			last = await testDelivery(ctx, endpointId, process.settings);
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
		if (!verdict.reached && verdict.final)
			throw endListening(ctx, url, endpointId, `No sample: ${unreachableMessage(url, verdict)}`);
	}
	const saw =
		problem ??
		(last?.httpStatus === 401
			? `its test deliveries were still refused (HTTP 401) after ${sample.attempts} tries: n8n did not give the test URL the secret this listening registered`
			: 'the service did not attempt the test delivery');
	throw endListening(
		ctx,
		url,
		endpointId,
		`No sample: the Marketplace service could not deliver a test event to ${url}: ${saw}. Listen for a test event again; if it keeps failing, activate the workflow, which checks the address.`,
	);
}

/** The error that ends the listening with `message` (n8n shows it in the editor), logged too. */
function endListening(
	ctx: IHookFunctions,
	url: string,
	endpointId: number,
	message: string,
): NodeOperationError {
	ctx.logger.warn(message, { url, endpointId });
	return new NodeOperationError(ctx.getNode(), message);
}

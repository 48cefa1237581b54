/**
 * The sample item a builder gets from "Listen for test event": filled in by issue 28's work.
 */
import type { IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

import type { EventEnvelope } from './events';

/**
 * Answers a verified webhook.test delivery on a test URL with a sample item, or returns undefined
 * when the delivery is not one to answer with a sample (the trigger then handles it as before).
 */
export async function answerWithSample(
	ctx: IWebhookFunctions,
	event: EventEnvelope,
	subscribed: readonly string[],
	options: { fetchCurrentState?: boolean },
): Promise<IWebhookResponseData | undefined> {
	void ctx;
	void event;
	void subscribed;
	void options;
	return undefined;
}

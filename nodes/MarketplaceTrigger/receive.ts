/**
 * webhook() of the Marketplace Trigger: one delivery, read top-down in `receive`. It writes nothing,
 * at the service or in n8n (the static data is only read), and n8n answers the service 2xx as soon
 * as the run it returns is registered (responseMode 'onReceived').
 *
 * 1. verify: the Standard Webhooks signature over the raw body bytes, with the endpoint's secret(s)
 *    (secrets.ts); a failure is answered 401, logged, and starts nothing.
 * 2. what kind of message: webhook.test on the test URL ("Listen for test event") gets a sample
 *    (sample.ts); on the production URL it runs only with Emit Test Events on; types not subscribed
 *    get 2xx and start nothing.
 * 3. the current state (option): a transient failure to read it is answered 503, so the service
 *    delivers the event again later.
 * 4. hand over: one item for the run. Whether it runs the workflow is decided in execute() (once.ts).
 */
import type { KeyObject } from 'node:crypto';

import type {
	IDataObject,
	INodeExecutionData,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';

import { normaliseEventTypes } from '../shared/routes';
import { transportClock } from '../shared/transport/clock';
import { apiRequest } from '../shared/transport/request';
import { isTransient, readFailure } from '../shared/transport/transportErrors';
import { signingKey, verifyWebhook } from '../shared/webhookVerifier';
import { WITHIN_ANSWER_LIMIT } from './answerLimit';
import { sampleItems } from './sample';
import { readRecord, verificationSecrets } from './secrets';

const TEST_EVENT_TYPE = 'webhook.test';

/** The event envelope the service delivers. */
export interface EventEnvelope {
	id: string;
	type: string;
	createdAt: string;
	data: Record<string, unknown>;
}

interface ReceiveOptions {
	emitTestEvents?: boolean;
	fetchCurrentState?: boolean;
	includeHeaders?: boolean;
}

type RawRequest = ReturnType<IWebhookFunctions['getRequestObject']> & {
	rawBody?: Buffer;
	readRawBody?: () => Promise<void>;
};

/** webhook() of the node: the steps of the file comment. */
export async function receive(ctx: IWebhookFunctions): Promise<IWebhookResponseData> {
	const http = ctx.getRequestObject() as RawRequest;
	const now = transportClock().now();

	// 1. verify
	if (!Buffer.isBuffer(http.rawBody) && typeof http.readRawBody === 'function')
		await http.readRawBody();
	const rawBody = Buffer.isBuffer(http.rawBody) ? http.rawBody : undefined;
	if (!rawBody) return answer(ctx, 500, { error: 'raw-body-unavailable' });
	const record = readRecord(ctx.getWorkflowStaticData('node'), servedUrl(ctx));
	const verdict = verifyWebhook({
		headers: http.headers,
		rawBody,
		secrets: hmacKeys(verificationSecrets(record, now)),
		nowSeconds: Math.floor(now / 1000),
	});
	if (!verdict.ok) {
		// the activation's reachability check arrives before n8n saved the secret: expected, not worth a warning
		const probe =
			verdict.reason === 'no-secret' && parseEnvelope(rawBody)?.type === TEST_EVENT_TYPE;
		if (!probe)
			ctx.logger.warn(
				`Marketplace Trigger refused a delivery (401): ${verdict.message}. A proxy that changes the request body, or a clock minutes off, causes this.`,
				{ reason: verdict.reason, webhookId: String(http.headers['webhook-id'] ?? '') },
			);
		return answer(ctx, 401, { error: 'invalid-signature', reason: verdict.reason });
	}
	const event = parseEnvelope(rawBody);
	if (!event) return answer(ctx, 400, { error: 'malformed-event' });

	// 2. what kind of message
	const options = ctx.getNodeParameter('options', {}) as ReceiveOptions;
	const subscribed: string[] = normaliseEventTypes(ctx.getNodeParameter('eventTypes', []));
	if (event.type === TEST_EVENT_TYPE) {
		const sample = await sampleItems(ctx, event, subscribed, options);
		if (sample) return { workflowData: [sample] };
		if (options.emitTestEvents !== true)
			return ignored('test-event', 'Turn on "Emit Test Events" to run the workflow for it');
	} else if (!subscribed.includes(event.type)) {
		return ignored('event-type-not-subscribed', event.type);
	}

	// 3. the current state
	const state = options.fetchCurrentState === true ? await readCurrentState(ctx, event) : {};
	if (state.retryLater) {
		ctx.logger.warn(
			`Marketplace Trigger could not read the current state of ${event.id}; asking the service to deliver it again`,
			state.retryLater,
		);
		return answer(ctx, 503, { error: 'current-state-unavailable', retry: true });
	}

	// 4. hand over
	const json: IDataObject = {
		id: event.id,
		type: event.type,
		createdAt: event.createdAt,
		data: event.data as IDataObject,
	};
	if (state.current !== undefined) json.current = state.current as IDataObject;
	if (state.currentError !== undefined) json.currentError = state.currentError;
	if (options.includeHeaders === true) json.headers = http.headers as IDataObject;
	const item: INodeExecutionData = { json };
	return { workflowData: [[item]] };
}

/**
 * HMAC keys of the secrets, each made once per process: making the key object was most of the HMAC's
 * cost per delivery (test/bench/results/trigger-profile.md). A malformed stored secret verifies nothing
 * (the other one may still do).
 */
const hmacKeysBySecret = new Map<string, KeyObject>();
const HMAC_KEYS_KEPT = 64;

function hmacKeys(secrets: string[]): KeyObject[] {
	return secrets.flatMap((secret) => {
		let key = hmacKeysBySecret.get(secret);
		if (key === undefined) {
			try {
				key = signingKey(secret);
			} catch {
				return [];
			}
			if (hmacKeysBySecret.size >= HMAC_KEYS_KEPT) hmacKeysBySecret.clear();
			hmacKeysBySecret.set(secret, key);
		}
		return [key];
	});
}

/** Answers the request now; it starts no run. */
function answer(ctx: IWebhookFunctions, status: number, body: IDataObject): IWebhookResponseData {
	ctx.getResponseObject().status(status).json(body);
	return { noWebhookResponse: true };
}

/** 2xx for a verified delivery that starts nothing (n8n sends `webhookResponse`). */
function ignored(reason: string, detail: string): IWebhookResponseData {
	return { webhookResponse: { received: true, ignored: reason, detail } };
}

/** Reads the envelope from the raw body; undefined when it is not a JSON object with the envelope's fields. */
function parseEnvelope(rawBody: Buffer): EventEnvelope | undefined {
	let parsed: unknown;
	try {
		parsed = JSON.parse(rawBody.toString('utf8'));
	} catch {
		return undefined;
	}
	if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
	const { id, type, createdAt, data } = parsed as Record<string, unknown>;
	if (typeof id !== 'string' || typeof type !== 'string' || typeof createdAt !== 'string')
		return undefined;
	if (!data || typeof data !== 'object' || Array.isArray(data)) return undefined;
	return { id, type, createdAt, data: data as Record<string, unknown> };
}

interface CurrentState {
	current?: unknown;
	currentError?: IDataObject;
	retryLater?: IDataObject;
}

const positiveInteger = (value: unknown): value is number =>
	typeof value === 'number' && Number.isSafeInteger(value) && value > 0;

/** Step 3b's current state: what the event names, read as the service advises for its type (order or brand health). */
async function readCurrentState(
	ctx: IWebhookFunctions,
	event: EventEnvelope,
): Promise<CurrentState> {
	const { orderId, brandId } = event.data;
	const read =
		event.type.startsWith('order.') && positiveInteger(orderId)
			? ({ route: 'getOrder', pathParams: { id: orderId } } as const)
			: event.type.startsWith('brand_health.') && positiveInteger(brandId)
				? ({ route: 'getBrandHealth', query: { brandId } } as const)
				: undefined;
	if (!read) return {};
	try {
		const { body } = await apiRequest.call(ctx, read, WITHIN_ANSWER_LIMIT);
		return { current: body };
	} catch (error) {
		const failure = readFailure(error);
		const described: IDataObject = {
			route: read.route,
			message: failure.message,
			...(failure.status !== undefined ? { status: failure.status } : {}),
			...(failure.slug !== undefined ? { type: failure.slug } : {}),
		};
		return isTransient(failure) ? { retryLater: described } : { currentError: described };
	}
}

/**
 * The URL this request arrived on, which the static data is keyed by. getNodeWebhookUrl is always
 * the production URL in webhook(); getWebhookResourceUrl (n8n 2.x) is the test URL on a test run.
 * n8n 1.x lacks it, so on its test runs (mode manual) the production URL's endpoint segment is
 * swapped for the one the request came in on (n8n serves both on one base URL).
 */
function servedUrl(ctx: IWebhookFunctions): string {
	const served =
		typeof ctx.getWebhookResourceUrl === 'function'
			? ctx.getWebhookResourceUrl('default')
			: undefined;
	const production = ctx.getNodeWebhookUrl('default') ?? '';
	if (served !== undefined || ctx.getMode() !== 'manual') return served ?? production;
	const request = ctx.getRequestObject() as { originalUrl?: string; url?: string };
	return testUrlOf(production, (request.originalUrl ?? request.url ?? '').split('?')[0]);
}

/** `production` with the segment before the tail it shares with `arrivedPath` (webhook id and path) taken from `arrivedPath`. */
function testUrlOf(production: string, arrivedPath: string): string {
	const prod = production.split('/');
	const arrived = arrivedPath.split('/');
	let shared = 0;
	while (
		shared < arrived.length - 2 &&
		shared < prod.length - 4 &&
		arrived[arrived.length - 1 - shared] === prod[prod.length - 1 - shared]
	)
		shared++;
	if (shared === 0) return production;
	prod[prod.length - 1 - shared] = arrived[arrived.length - 1 - shared];
	return prod.join('/');
}

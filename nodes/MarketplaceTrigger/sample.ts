/**
 * The sample item a builder gets from "Listen for test event" (n8n's test URL, mode 'manual').
 *
 * 1. create()/checkExists() on the test URL start `requestSampleDelivery` once they return: it asks
 *    the service for a test delivery to the test URL (Webhook Endpoint > Test). It cannot be asked
 *    inside create(): n8n 2.41.1 (TestWebhooks.needsWebhook) registers the test route, calls create(),
 *    and only then registers it again with the static data create() wrote (the secret), so a delivery
 *    made meanwhile is refused 401 ("no secret"). While the record shows 401 it asks again, a bounded
 *    number of times.
 * 2. The verified webhook.test arrives on the test URL; `answerWithSample` answers it with one item
 *    shaped like the items of the first subscribed event type, from the newest real record (the
 *    newest order; a brand's health), else synthetic, marked `sample: true`. Production deliveries
 *    (mode 'webhook') never get a sample.
 * 3. When the service cannot deliver, the listening ends with the reason: the trigger posts a
 *    webhook.test of its own, signed with the endpoint's secret, to the test URL, and webhook() fails
 *    the test run with the message (n8n shows a webhook() error on the trigger node and stops
 *    listening). If n8n cannot reach its own test URL either, the message is in n8n's log and the
 *    listening ends at n8n's own timeout.
 */
import { randomUUID } from 'node:crypto';

import type {
	IDataObject,
	IHookFunctions,
	INodeExecutionData,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { latestOrder, type OrderRecord } from '../shared/orders';
import { transportClock } from '../shared/transport/clock';
import { readAll } from '../shared/transport/pagination';
import { isoSeconds } from '../shared/transport/queryEncoding';
import { apiRequest } from '../shared/transport/request';
import { readFailure } from '../shared/transport/transportErrors';
import { parseSecret, signWebhook } from '../shared/webhookVerifier';
import { TEST_EVENT_TYPE, type EventEnvelope } from './events';
import {
	judgeDelivery,
	testDelivery,
	unreachableMessage,
	type DeliveryOutcome,
} from './reachability';
import { getRecord } from './state';
import { WITHIN_ANSWER_LIMIT } from './answerLimit';

/**
 * When the sample delivery is asked for: `firstMs` after create() returned (n8n registers the
 * route again right after it), then every `retryMs` while the record shows 401, `attempts` times.
 */
export const SAMPLE_SCHEDULE = { firstMs: 500, retryMs: 1_000, attempts: 6 };

/** How far back the newest order is looked for, widening until one is found (the list has no pages). */
const ORDER_WINDOWS_DAYS = [1, 7, 30, 365];
const DAY_MS = 86_400_000;

/** The field a workflow checks: true only on a sample. */
export const SAMPLE_FIELD = 'sample';

interface SampleOptions {
	fetchCurrentState?: boolean;
	includeHeaders?: boolean;
}

type Ctx = IWebhookFunctions;

async function newestOrder(ctx: Ctx): Promise<IDataObject | undefined> {
	const now = transportClock().now();
	for (const days of ORDER_WINDOWS_DAYS) {
		const orders = await readAll.call(ctx, {
			route: 'listOrders',
			query: { startDate: isoSeconds(now - days * DAY_MS) },
			returnAll: true,
			settings: WITHIN_ANSWER_LIMIT,
		});
		const newest = latestOrder(orders as OrderRecord[], []);
		if (newest) return newest as unknown as IDataObject;
	}
	return undefined;
}

async function readCurrent(
	ctx: Ctx,
	read: () => Promise<unknown>,
	route: string,
): Promise<IDataObject> {
	try {
		return { current: (await read()) as IDataObject };
	} catch (error) {
		const failure = readFailure(error);
		return {
			currentError: {
				route,
				message: failure.message,
				...(failure.status !== undefined ? { status: failure.status } : {}),
				...(failure.slug !== undefined ? { type: failure.slug } : {}),
			},
		};
	}
}

const positive = (value: unknown): value is number =>
	typeof value === 'number' && Number.isSafeInteger(value) && value > 0;

/** The fields of an order event's item: data, createdAt, and current as set. */
async function orderSample(
	ctx: Ctx,
	type: string,
	event: EventEnvelope,
	options: SampleOptions,
): Promise<IDataObject> {
	let order: IDataObject | undefined;
	let readProblem: string | undefined;
	try {
		order = await newestOrder(ctx);
	} catch (error) {
		readProblem = readFailure(error).message;
	}
	if (order && positive(order.id) && positive(order.brandId)) {
		const orderId = order.id;
		const createdAt = String(
			(type === 'order.created' ? order.createdAt : order.updatedAt) ??
				order.createdAt ??
				event.createdAt,
		);
		const current = options.fetchCurrentState
			? await readCurrent(
					ctx,
					async () =>
						(
							await apiRequest.call(
								ctx,
								{ route: 'getOrder', pathParams: { id: orderId } },
								WITHIN_ANSWER_LIMIT,
							)
						).body,
					'getOrder',
				)
			: {};
		return {
			createdAt,
			data: { brandId: order.brandId, orderId },
			...current,
			sampleSource: 'newest-order',
			sampleNote: `A sample ${type} event made from your newest order (${orderId}); it did not happen. Production runs never carry "${SAMPLE_FIELD}".`,
		};
	}
	const now = new Date(transportClock().now()).toISOString();
	return {
		createdAt: event.createdAt,
		data: { brandId: 0, orderId: 0 },
		...(options.fetchCurrentState
			? { current: { id: 0, brandId: 0, status: 'Created', createdAt: now, updatedAt: now } }
			: {}),
		sampleSource: 'synthetic',
		sampleNote:
			`A made-up ${type} event: ${readProblem ? `the orders could not be read (${readProblem})` : 'your account has no order yet'}, ` +
			'so the IDs are 0 and name no real order. Production runs never carry "sample".',
	};
}

/** The fields of a brand health event's item, from the first brand the key may read. */
async function bandSample(
	ctx: Ctx,
	type: string,
	event: EventEnvelope,
	options: SampleOptions,
): Promise<IDataObject> {
	let readProblem: string | undefined;
	try {
		const brands = await readAll.call(ctx, {
			route: 'listBrands',
			returnAll: true,
			settings: WITHIN_ANSWER_LIMIT,
		});
		let brandId = brands.map((b) => b.id).find(positive);
		if (brandId === undefined) {
			const order = await newestOrder(ctx);
			brandId = positive(order?.brandId) ? order.brandId : undefined;
		}
		if (brandId !== undefined) {
			const { body } = await apiRequest.call(
				ctx,
				{ route: 'getBrandHealth', query: { brandId } },
				WITHIN_ANSWER_LIMIT,
			);
			const health = (body ?? {}) as IDataObject;
			const dimensions = Array.isArray(health.dimensions)
				? (health.dimensions as IDataObject[])
				: [];
			const first = dimensions.find(
				(d) => typeof d.dimension === 'string' && typeof d.band === 'string',
			);
			if (first) {
				return {
					createdAt: typeof health.updatedAt === 'string' ? health.updatedAt : event.createdAt,
					data: { brandId, dimension: first.dimension, band: first.band },
					...(options.fetchCurrentState ? { current: health } : {}),
					sampleSource: 'brand-health',
					sampleNote: `A sample ${type} event made from the current health of brand ${brandId} (${String(first.dimension)} is ${String(first.band)}); it did not happen. Production runs never carry "${SAMPLE_FIELD}".`,
				};
			}
		}
	} catch (error) {
		readProblem = readFailure(error).message;
	}
	return {
		createdAt: event.createdAt,
		data: { brandId: 0, dimension: 'SampleDimension', band: 'SampleBand' },
		...(options.fetchCurrentState
			? {
					current: {
						brandId: 0,
						categories: [],
						dimensions: [{ dimension: 'SampleDimension', band: 'SampleBand' }],
						updatedAt: event.createdAt,
					},
				}
			: {}),
		sampleSource: 'synthetic',
		sampleNote:
			`A made-up ${type} event: ${readProblem ? `the brand health could not be read (${readProblem})` : 'no brand health could be found for your brands'}, ` +
			'so brandId is 0 and the dimension and band are placeholders. Production runs never carry "sample".',
	};
}

/** The sample item for the first subscribed event type, from the verified test delivery `event`. */
export async function buildSample(
	ctx: IWebhookFunctions,
	event: EventEnvelope,
	subscribed: readonly string[],
	options: SampleOptions,
): Promise<IDataObject> {
	const type = subscribed[0] ?? 'order.created';
	const fields = type.startsWith('brand_health.')
		? await bandSample(ctx, type, event, options)
		: await orderSample(ctx, type, event, options);
	const { sampleSource, sampleNote, ...eventFields } = fields;
	const json: IDataObject = { id: event.id, type, ...eventFields };
	if (options.includeHeaders === true) json.headers = ctx.getRequestObject().headers as IDataObject;
	json[SAMPLE_FIELD] = true;
	json.sampleSource = sampleSource;
	json.sampleNote = sampleNote;
	return json;
}

/**
 * Answers a verified webhook.test delivery on a test URL with a sample item, or returns undefined
 * when the delivery is not one to answer with a sample (the trigger then handles it as before):
 * every delivery outside a test URL, so a production run never carries a sample.
 */
export async function answerWithSample(
	ctx: IWebhookFunctions,
	event: EventEnvelope,
	subscribed: readonly string[],
	options: { fetchCurrentState?: boolean },
): Promise<IWebhookResponseData | undefined> {
	if (ctx.getMode() !== 'manual') return undefined;
	// the trigger's own notice that the service could not deliver the sample (signed with the secret)
	const problem = event.data.sampleProblem;
	if (typeof problem === 'string') throw new NodeOperationError(ctx.getNode(), problem);
	const json = await buildSample(ctx, event, subscribed, options as SampleOptions);
	const items: INodeExecutionData[] = [{ json }];
	return { webhookResponse: { received: true, id: event.id, sample: true }, workflowData: [items] };
}

/** Ends the listening with `message`: a signed webhook.test of the trigger's own to the test URL. */
async function endListening(
	ctx: IHookFunctions,
	url: string,
	endpointId: number,
	secret: string | undefined,
	message: string,
): Promise<void> {
	ctx.logger.warn(message, { url, endpointId });
	if (!secret) return;
	const id = `msg_sample_${randomUUID()}`;
	// signed at the time the receiving request verifies with (the transport's clock)
	const now = transportClock().now();
	const timestamp = Math.floor(now / 1000);
	const body = JSON.stringify({
		id,
		type: TEST_EVENT_TYPE,
		createdAt: new Date(now).toISOString(),
		data: { webhookEndpointId: endpointId, sampleProblem: message },
	});
	try {
		await ctx.helpers.httpRequest({
			method: 'POST',
			url,
			body,
			headers: {
				'content-type': 'application/json',
				'webhook-id': id,
				'webhook-timestamp': String(timestamp),
				'webhook-signature': signWebhook(id, timestamp, Buffer.from(body), parseSecret(secret)),
			},
			timeout: 5_000,
		});
	} catch (error) {
		// a 500 is the answer n8n gives for the failed test run: the message reached the editor
		const failure = readFailure(error);
		if (!/status code 500/.test(failure.message))
			ctx.logger.warn(
				`Marketplace Trigger could not post the notice to its own test URL ${url}: ${failure.message}`,
			);
	}
}

/**
 * Runs `fn` holding an expression isolate of the hook's workflow. n8n 2.x evaluates expressions,
 * credentials and their authentication included, in an isolate that TestWebhooks.needsWebhook holds
 * only while create() runs (2.41.1: acquireIsolate before, releaseIsolate in its finally); a request
 * made after create() returned fails with "No bridge acquired for this context". n8n-core keeps the
 * Workflow on the context (`workflow`), whose Expression offers `withIsolate` (acquire, run, release
 * only what it acquired). Rests on those internals: n8n without them (1.x) needs no isolate.
 */
async function withIsolateOf<T>(ctx: IHookFunctions, fn: () => Promise<T>): Promise<T> {
	const expression = (
		ctx as unknown as {
			workflow?: { expression?: { withIsolate?: (run: () => Promise<T>) => Promise<T> } };
		}
	).workflow?.expression;
	return typeof expression?.withIsolate === 'function'
		? await expression.withIsolate(fn)
		: await fn();
}

/** Sample deliveries being requested, by endpoint id (a second listening on the same endpoint does not start another). */
const requesting = new Map<number, Promise<void>>();

/** Waits for the sample requests under way (tests). */
export async function sampleRequestsSettled(): Promise<void> {
	while (requesting.size) await Promise.allSettled([...requesting.values()]);
}

/**
 * Starts, without waiting, the request for the sample delivery to the test URL `url` (see the file
 * comment). Called by create()/checkExists() in manual mode after the activation check passed.
 */
export function startSampleDelivery(ctx: IHookFunctions, endpointId: number, url: string): void {
	if (requesting.has(endpointId)) return;
	const run = requestSampleDelivery(ctx, endpointId, url)
		.catch((error) =>
			ctx.logger.warn(
				`Marketplace Trigger: the sample delivery failed: ${(error as Error).message}`,
			),
		)
		.finally(() => requesting.delete(endpointId));
	requesting.set(endpointId, run);
}

async function requestSampleDelivery(
	ctx: IHookFunctions,
	endpointId: number,
	url: string,
): Promise<void> {
	const clock = transportClock();
	const secret = getRecord(ctx.getWorkflowStaticData('node'), url)?.secret;
	await clock.sleep(SAMPLE_SCHEDULE.firstMs);
	let last: DeliveryOutcome | undefined;
	let problem: string | undefined;
	for (let attempt = 1; attempt <= SAMPLE_SCHEDULE.attempts; attempt++) {
		if (attempt > 1) await clock.sleep(SAMPLE_SCHEDULE.retryMs);
		try {
			last = await withIsolateOf(ctx, async () => await testDelivery(ctx, endpointId));
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
			await endListening(
				ctx,
				url,
				endpointId,
				secret,
				`No sample: ${unreachableMessage(url, verdict)}`,
			);
			return;
		}
	}
	const saw =
		problem ??
		(last?.httpStatus === 401
			? `its test deliveries were still refused (HTTP 401) after ${SAMPLE_SCHEDULE.attempts} tries: n8n did not give the test URL the secret this listening registered`
			: 'the service did not attempt the test delivery');
	await endListening(
		ctx,
		url,
		endpointId,
		secret,
		`No sample: the Marketplace service could not deliver a test event to ${url}: ${saw}. Listen for a test event again; if it keeps failing, activate the workflow, which checks the address.`,
	);
}

/**
 * webhook() of the Marketplace Trigger: one incoming request, read top-down in `receive`:
 *
 * 1. verify: the Standard Webhooks signature over the raw body bytes, with the record's secret(s);
 *    a failure is answered 401 and starts nothing (refusals.ts says what to check).
 * 2. what kind of message: webhook.test on a test URL gets a sample (sample.ts); on the production
 *    URL it is the check delivery: the round trip through the service that trigger()'s catch-up check
 *    asks for (catchUpCheck.ts), so that the orders a gap lost are read here, in a request, whose
 *    static data n8n loads and saves (`catchUpOnCheckDelivery`); types not subscribed get 2xx.
 * 3. the event (`acceptEvent`):
 *    a. known? (once.ts `knownAs`): its delivery key, or an order.created's order key as a caught-up
 *       order; concurrent copies in this process wait for the first (`waitAndHold`). 2xx, no run.
 *    b. enrich: the current state (option). A transient failure is answered 503 and nothing is
 *       added, so the service's retry is processed.
 *    c. accept (once.ts `keepInMemory`): the keys go into this process's copy of the static data,
 *       which the request writes back at its end (`resultSavedThenRun`).
 *    d. hand over: the item goes to a run, and the run answers the service once it has started
 *       (run.ts), so the service is paced to what n8n can start.
 *
 * Every request ends in once.ts `resultSavedThenRun`: n8n saves the static data the request changed,
 * then starts the run with its items, if any.
 */
import type { IDataObject, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

import { normaliseEventTypes } from '../shared/routes';
import { transportClock } from '../shared/transport/clock';
import { apiRequest } from '../shared/transport/request';
import { isTransient, readFailure } from '../shared/transport/transportErrors';
import { verifyWebhook, type VerifyFailure } from '../shared/webhookVerifier';
import { WITHIN_ANSWER_LIMIT } from './answerLimit';
import {
	catchUpApplies,
	catchUpOrders,
	dueWindow,
	IN_FLIGHT_MS,
	type CatchUpWindow,
} from './catchUp';
import type { EndpointMemory, TriggerProcess } from './memory';
import {
	caughtUpKeys,
	deliveryKey,
	deliveryKeptUntil,
	keepInMemory,
	keysToAccept,
	knownAs,
	ORDER_CREATED,
	orderKey,
	resultSavedThenRun,
	waitAndHold,
} from './once';
import { recoverSecret, refuse } from './refusals';
import { sampleItems } from './sample';
import { EndpointStore, SECRET_OVERLAP_MS, type MissedEventsNotice } from './store';

export const TEST_EVENT_TYPE = 'webhook.test';

/** The event envelope the service delivers. */
export interface EventEnvelope {
	id: string;
	type: string;
	createdAt: string;
	data: Record<string, unknown>;
}

interface ReceiveOptions {
	catchUpMissedOrders?: boolean;
	emitTestEvents?: boolean;
	fetchCurrentState?: boolean;
	includeHeaders?: boolean;
}

type RawRequest = ReturnType<IWebhookFunctions['getRequestObject']> & {
	rawBody?: Buffer;
	readRawBody?: () => Promise<void>;
};

/** One request: what every step reads, read once. */
interface WebhookRequest {
	ctx: IWebhookFunctions;
	/** the HTTP request as n8n hands it over */
	http: RawRequest;
	/** the transport's clock, read once for the whole request */
	now: number;
	store: EndpointStore;
	memory: EndpointMemory;
	/** what this request holds among this process's in-flight keys (once.ts), released when it ends */
	held: Array<() => void>;
}

/**
 * webhook() of the node: `receive`, with this process's part of the trigger. One request, the steps
 * of the file comment.
 */
export function receiveWith(getTriggerProcess: () => TriggerProcess) {
	return async function receive(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		const url = servedUrl(this);
		const triggerProcess = getTriggerProcess();
		const memory = triggerProcess.memoryOf(this.getWorkflow().id ?? '', url);
		const now = transportClock().now();
		const req: WebhookRequest = {
			ctx: this,
			http: this.getRequestObject() as RawRequest,
			now,
			memory,
			store: EndpointStore.read(this.getWorkflowStaticData('node'), url, memory),
			held: [],
		};

		// 1. verify
		if (!Buffer.isBuffer(req.http.rawBody) && typeof req.http.readRawBody === 'function')
			await req.http.readRawBody();
		const rawBody = Buffer.isBuffer(req.http.rawBody) ? req.http.rawBody : undefined;
		if (!rawBody)
			return answer(req, 500, {
				error: 'raw-body-unavailable',
				message: 'The request body could not be read',
			});
		const verdict = verifyWebhook({
			headers: req.http.headers,
			rawBody,
			secrets: req.store.verificationKeys(req.now),
			nowSeconds: Math.floor(req.now / 1000),
		});
		if (!verdict.ok) {
			// the activation check's test delivery, before n8n saved the secret: it proves n8n is reachable, refused as expected
			if (isActivationProbe(rawBody, verdict.reason))
				return answer(req, 401, { error: 'invalid-signature', reason: verdict.reason });
			const webhookId = req.http.headers['webhook-id'];
			const refusal = await refuse(
				this,
				req.store,
				memory,
				verdict,
				webhookId,
				req.now,
				WITHIN_ANSWER_LIMIT,
			);
			return answer(req, 401, refusal);
		}
		const event = parseEnvelope(rawBody);
		if (!event)
			return answer(req, 400, {
				error: 'malformed-event',
				message: 'The body is not an event envelope',
			});

		// 2. what kind of message
		memory.lastVerifiedAt = req.now;
		req.store.verifiedAt(req.now);
		// authentic, and also signed with a secret the trigger does not hold: rotated elsewhere (for 24
		// hours after the trigger's own recovery, the other holder's secret is the service's previous one)
		const record = req.store.record;
		if (
			verdict.unknownSignatures > 0 &&
			record !== undefined &&
			!(req.now - (record.recoveredAt ?? 0) < SECRET_OVERLAP_MS)
		)
			await recoverSecret(this, req.store, memory, req.now, WITHIN_ANSWER_LIMIT);
		const options = this.getNodeParameter('options', {}) as ReceiveOptions;
		const subscribed: string[] = normaliseEventTypes(this.getNodeParameter('eventTypes', []));
		if (event.type === TEST_EVENT_TYPE) {
			const sample = await sampleItems(this, event, subscribed, options);
			if (sample) return resultSavedThenRun(req.store, req.now, sample);
			if (options.emitTestEvents !== true)
				return await catchUpOnCheckDelivery(
					req,
					event,
					options,
					subscribed,
					triggerProcess.activating.has(url),
				);
		} else if (!subscribed.includes(event.type)) {
			return acknowledge(req, 'event-type-not-subscribed', { type: event.type });
		}

		// 3. the event
		return await acceptEvent(req, event, options, subscribed);
	};
}

/** Step 3: a verified event the workflow subscribes to. */
async function acceptEvent(
	req: WebhookRequest,
	event: EventEnvelope,
	options: ReceiveOptions,
	subscribed: string[],
): Promise<IWebhookResponseData> {
	const { ctx, store, now } = req;
	// the event's id, which the service makes its webhook-id (the signed header), as run.ts keys it
	const key = deliveryKey(event.id);
	const order = event.type === ORDER_CREATED ? orderKey(event.data.orderId) : undefined;
	req.held.push(await waitAndHold(req.memory, order ? [key, order] : [key]));
	try {
		// a. duplicate? (of the delivery, or of an order a catch-up brought)
		const duplicate = knownAs(store, key, order, now);
		if (duplicate) {
			// the service sent it again, so it did not get an answer: keep it from this attempt on
			store.add({ section: 'known', key, expiresAt: deliveryKeptUntil(event.createdAt, now) });
			return acknowledge(req, duplicate, {
				id: event.id,
				...(duplicate === 'order-caught-up' ? { orderId: event.data.orderId as number } : {}),
			});
		}

		// b. enrich: the current state
		const state = options.fetchCurrentState === true ? await readCurrentState(ctx, event) : {};
		if (state.retryLater) {
			ctx.logger.warn(
				`Marketplace Trigger could not read the current state of ${event.id}; asking the service to retry`,
				state.retryLater,
			);
			return answer(req, 503, {
				error: 'current-state-unavailable',
				retry: true,
				...state.retryLater,
			});
		}

		// c. accept: the keys this run makes known, into this process's copy of the static data
		const catchUp = catchUpApplies(ctx.getMode(), options, subscribed);
		keepInMemory(store, keysToAccept(event, key, catchUp ? order : undefined, now));

		// d. hand over
		const json = itemOf(req, event, state, options);
		const noticeDue = noticeDueOf(req);
		if (noticeDue) {
			noticeShown(req, noticeDue);
			json.notice = noticeDue as unknown as IDataObject;
		}
		return resultSavedThenRun(req.store, req.now, [{ json }]);
	} finally {
		releaseHeld(req);
	}
}

/** Releases what the request holds: a copy of its event, or of an order it caught up, may go on. */
function releaseHeld(req: WebhookRequest): void {
	for (const release of req.held.splice(0)) release();
}

/**
 * Step 2, a verified webhook.test on the production URL (Emit Test Events off): the catch-up check
 * trigger() asked the service for (catchUpCheck.ts), or any other test delivery but the one of an
 * activation hook of this process. The window due, if any (catchUp.ts `dueWindow`), is caught up and
 * its orders go to a run; with none due, or the catch-up off, it is answered 2xx and starts nothing.
 */
async function catchUpOnCheckDelivery(
	req: WebhookRequest,
	event: EventEnvelope,
	options: ReceiveOptions,
	subscribed: string[],
	activating: boolean,
): Promise<IWebhookResponseData> {
	const { ctx, store, memory, now } = req;
	const testEvent = {
		hint: 'Turn on "Emit Test Events" to run the workflow for webhook.test deliveries',
	};
	if (activating || !catchUpApplies(ctx.getMode(), options, subscribed))
		return acknowledge(req, 'test-event', testEvent);
	// the service's time, which its order times compare with (its createdAt of this test delivery)
	const sentAt = Date.parse(event.createdAt);
	const serviceNowMs = Number.isFinite(sentAt) ? sentAt : now;
	// nothing says what came before: the cursor starts where this request's window would end
	if (store.cursor === undefined) store.setCursor(serviceNowMs - IN_FLIGHT_MS);
	const noticeDue = noticeDueOf(req);
	const window = dueWindow(store, memory, { nowMs: now, serviceNowMs }, noticeDue);
	try {
		const caught = window ? await catchUpMissed(req, window, options) : { items: [], note: {} };
		if ('retryLater' in caught) return answer(req, 503, caught.retryLater);
		if (caught.items.length === 0)
			return acknowledge(req, 'test-event', { ...testEvent, ...caught.note });
		keepInMemory(store, caughtUpKeys(caught.items, now));
		// the notice goes with the orders it explains; with none, the next event shows it
		const notice = noticeDue && { ...noticeDue, ...caught.note };
		if (noticeDue) noticeShown(req, noticeDue);
		return resultSavedThenRun(
			store,
			now,
			caught.items.map((item) => ({
				json: notice ? { ...item, notice: notice as unknown as IDataObject } : item,
			})),
		);
	} finally {
		releaseHeld(req);
	}
}

/** The missed-events notice still to show with this request's items, if this process has not shown it. */
function noticeDueOf(req: WebhookRequest): MissedEventsNotice | undefined {
	const notice = req.store.record?.missedEvents;
	return notice !== undefined && !req.memory.shownNotices.has(notice.reEnabledAt)
		? notice
		: undefined;
}

/** The notice is on this run's items: not shown again by this process, and gone from the record n8n saves. */
function noticeShown(req: WebhookRequest, notice: MissedEventsNotice): void {
	req.memory.shownNotices.add(notice.reEnabledAt);
	delete req.store.record!.missedEvents;
	req.store.recordChanged();
}

/** What the check's catch-up brought: caught-up order items and what the notice says of them, or a 503 to answer. */
type CatchUpOutcome = { items: IDataObject[]; note: IDataObject } | { retryLater: IDataObject };

/** The orders a gap may have lost, in the window due; the request holds their keys until it ends. */
async function catchUpMissed(
	req: WebhookRequest,
	window: CatchUpWindow,
	options: ReceiveOptions,
): Promise<CatchUpOutcome> {
	const { store, memory, now } = req;
	try {
		const withCurrent = options.fetchCurrentState === true;
		const result = await catchUpOrders(
			req.ctx,
			window,
			store,
			memory,
			now,
			WITHIN_ANSWER_LIMIT,
			withCurrent,
			(keys) => req.held.push(memory.hold(keys)),
		);
		memory.caughtUpSinceStart = true;
		store.setCursor(result.to);
		return { items: result.events, note: { caughtUpOrders: result.events.length } };
	} catch (error) {
		const failure = readFailure(error);
		if (!isTransient(failure)) {
			req.ctx.logger.warn(
				`Marketplace Trigger could not read the orders a gap may have lost: ${failure.message}`,
			);
			return { items: [], note: { catchUpError: failure.message } };
		}
		req.ctx.logger.warn(
			`Marketplace Trigger could not read the orders a gap may have lost (${failure.message}); asking the service to retry`,
		);
		return { retryLater: { error: 'catch-up-unavailable', retry: true, message: failure.message } };
	}
}

/** The event's item: the envelope, what the options add, and what this process has to tell (refusals, storage). */
function itemOf(
	req: WebhookRequest,
	event: EventEnvelope,
	state: CurrentState,
	options: ReceiveOptions,
): IDataObject {
	const json: IDataObject = {
		id: event.id,
		type: event.type,
		createdAt: event.createdAt,
		data: event.data as IDataObject,
	};
	if (state.current !== undefined) json.current = state.current as IDataObject;
	if (state.currentError !== undefined) json.currentError = state.currentError;
	if (options.includeHeaders === true) json.headers = req.http.headers as IDataObject;
	if (req.memory.refusals) {
		json.refusedDeliveries = { ...req.memory.refusals };
		req.memory.refusals = undefined;
	}
	return json;
}

/** Answers the request now (it starts no run), then ends it like every request. */
function answer(req: WebhookRequest, status: number, body: IDataObject): IWebhookResponseData {
	req.ctx.getResponseObject().status(status).json(body);
	return resultSavedThenRun(req.store, req.now);
}

/** 2xx for a delivery that starts nothing. */
function acknowledge(
	req: WebhookRequest,
	reason: string,
	extra: IDataObject = {},
): IWebhookResponseData {
	return answer(req, 200, { received: true, ignored: reason, ...extra });
}

/**
 * True for the activation check's own test delivery as this trigger's route sees it: a webhook.test
 * refused because no secret is saved yet (it arrives while create() runs, before n8n saved the
 * static data). Such a refusal is expected and is not a refused delivery to report on the next item.
 */
export function isActivationProbe(rawBody: Buffer, reason: VerifyFailure): boolean {
	return reason === 'no-secret' && parseEnvelope(rawBody)?.type === TEST_EVENT_TYPE;
}

/** Reads the envelope from the raw body; undefined when it is not a JSON object with the envelope's fields. */
export function parseEnvelope(rawBody: Buffer): EventEnvelope | undefined {
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

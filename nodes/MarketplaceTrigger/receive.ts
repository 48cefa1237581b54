/**
 * webhook() of the Marketplace Trigger: one incoming request, read top-down in `receive`:
 *
 * 1. verify: the Standard Webhooks signature over the raw body bytes, with the record's secret(s);
 *    a failure is answered 401 and starts nothing (refusals.ts says what to check).
 * 2. what kind of message: a save request of the trigger's own (saveViaOwnWebhook.ts) is received
 *    and answered; a catch-up request of its own (catchUpRequests.ts) catches up the window due
 *    (`catchUpNow`, step 3b without an event); webhook.test on a test URL gets a sample (sample.ts);
 *    types not subscribed get 2xx.
 * 3. the event (`acceptEvent`):
 *    a. duplicate? by its delivery key (and an order.created by its order key) against the store and
 *       this process's pending keys; concurrent copies in this process wait for the first. 2xx, no run.
 *    b. enrich: the current state (option), and the orders a gap may have lost (catchUp.ts). A
 *       transient failure is answered 503 and nothing is added, so the service's retry is processed.
 *    c. record: the keys go to this process's pending keys and the save loop (saveViaOwnWebhook.ts).
 *    d. emit: the items, answered by n8n once it registered the run (which paces the service to what
 *       n8n can run); or by the trigger itself when the request changed the record or caught up,
 *       so that n8n saves the static data before the run starts.
 *
 * Who answers decides what n8n saves (n8n 2.41.1, re-check on an upgrade; CONTRIBUTING.md lists
 * the internals and their tests): static data changed in webhook() is saved by the response
 * callback of `LiveWebhooks.executeWebhook` before the run for requests the node answers itself
 * (`noWebhookResponse`) and for requests that start no run, but not for "onReceived" answers n8n
 * gives after `WorkflowRunner.run()`, which wraps the static data in a new Workflow and so clears
 * its changed flag. The description's `responseData: ''` makes n8n send the node's `webhookResponse`.
 */
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
import { verifyWebhook, type VerifyFailure } from '../shared/webhookVerifier';
import { WITHIN_ANSWER_LIMIT } from './answerLimit';
import {
	CATCH_UP_REQUEST_TYPE,
	catchUpOrders,
	dueWindow,
	IN_FLIGHT_MS,
	MIN_CHECK_GAP_MS,
	nextCheckInMs,
	type CatchUpWindow,
} from './catchUp';
import { ensureCatchUpRequests } from './catchUpRequests';
import type { EndpointMemory, TriggerProcess } from './memory';
import { recoverSecret, refuse } from './refusals';
import { answerWithSample } from './sample';
import {
	ownListenerOf,
	queueSave,
	receiveSaveRequest,
	SAVE_REQUEST_TYPE,
	storageWarning,
	type KeyToSave,
} from './saveViaOwnWebhook';
import {
	caughtUpKeptUntil,
	deliveryKey,
	deliveryKeptUntil,
	EndpointStore,
	ORDER_CREATED,
	orderKey,
	SECRET_OVERLAP_MS,
	type MissedEventsNotice,
} from './store';

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
interface Delivery {
	ctx: IWebhookFunctions;
	process: TriggerProcess;
	request: RawRequest;
	/** the transport's clock, read once for the whole request */
	now: number;
	store: EndpointStore;
	memory: EndpointMemory;
}

/**
 * webhook() of the node: `receive`, with this process's part of the trigger. One request, the steps
 * of the file comment.
 */
export function receiveWith(process: () => TriggerProcess) {
	return async function receive(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		const url = servedUrl(this);
		const trigger = process();
		const { memory, end } = trigger.beginRequest(this.getWorkflow().id ?? '', url);
		try {
			const d: Delivery = {
				ctx: this,
				process: trigger,
				request: this.getRequestObject() as RawRequest,
				now: transportClock().now(),
				memory,
				store: EndpointStore.read(this.getWorkflowStaticData('node'), url, memory),
			};
			// where this process's loops reach its webhook (the activation check's test delivery comes here first)
			if (this.getMode() === 'webhook')
				memory.own.listener = ownListenerOf(d.request) ?? memory.own.listener;

			// 1. verify
			if (!Buffer.isBuffer(d.request.rawBody) && typeof d.request.readRawBody === 'function')
				await d.request.readRawBody();
			const rawBody = Buffer.isBuffer(d.request.rawBody) ? d.request.rawBody : undefined;
			if (!rawBody)
				return reply(d, 500, {
					error: 'raw-body-unavailable',
					message: 'The request body could not be read',
				});
			const verdict = verifyWebhook({
				headers: d.request.headers,
				rawBody,
				secrets: d.store.verificationKeys(d.now),
				nowSeconds: Math.floor(d.now / 1000),
			});
			if (!verdict.ok) {
				// the activation check's test delivery, before n8n saved the secret: it proves n8n is reachable, refused as expected
				if (isActivationProbe(rawBody, verdict.reason))
					return reply(d, 401, { error: 'invalid-signature', reason: verdict.reason });
				const webhookId = d.request.headers['webhook-id'];
				const refusal = await refuse(
					this,
					d.store,
					memory,
					verdict,
					webhookId,
					d.now,
					WITHIN_ANSWER_LIMIT,
				);
				return reply(d, 401, refusal);
			}
			const event = parseEnvelope(rawBody);
			if (!event)
				return reply(d, 400, {
					error: 'malformed-event',
					message: 'The body is not an event envelope',
				});

			// 2. what kind of message
			if (event.type === SAVE_REQUEST_TYPE)
				return reply(d, 200, receiveSaveRequest(d.store, event.data as IDataObject));
			if (event.type === CATCH_UP_REQUEST_TYPE) return await catchUpNow(d);
			memory.lastVerifiedAt = d.now;
			// authentic, and also signed with a secret the trigger does not hold: rotated elsewhere (for 24
			// hours after the trigger's own recovery, the other holder's secret is the service's previous one)
			const record = d.store.record;
			const recovered =
				verdict.unknownSignatures > 0 &&
				record !== undefined &&
				!(d.now - (record.recoveredAt ?? 0) < SECRET_OVERLAP_MS)
					? await recoverSecret(this, d.store, memory, d.now, WITHIN_ANSWER_LIMIT)
					: false;
			const options = this.getNodeParameter('options', {}) as ReceiveOptions;
			const subscribed: string[] = normaliseEventTypes(this.getNodeParameter('eventTypes', []));
			// every process the service reaches sends catch-up requests to its own listener
			const secret = d.store.record?.secret;
			if (
				this.getMode() === 'webhook' &&
				secret &&
				options.catchUpMissedOrders !== false &&
				subscribed.includes(ORDER_CREATED)
			) {
				Object.assign(memory.own, { ctx: this, secret });
				ensureCatchUpRequests(d.process.settings, memory);
			}
			if (event.type === TEST_EVENT_TYPE) {
				const sample = await answerWithSample(this, event, subscribed, options);
				if (sample) return sample;
				if (options.emitTestEvents !== true)
					return acknowledge(d, 'test-event', {
						hint: 'Turn on "Emit Test Events" to run the workflow for webhook.test deliveries',
					});
			} else if (!subscribed.includes(event.type)) {
				return acknowledge(d, 'event-type-not-subscribed', { type: event.type });
			}

			// 3. the event
			return await acceptEvent(d, event, verdict, options, subscribed, recovered);
		} finally {
			end();
		}
	};
}

/** Step 3: a verified event the workflow subscribes to. */
async function acceptEvent(
	d: Delivery,
	event: EventEnvelope,
	delivery: { id: string; timestamp: number },
	options: ReceiveOptions,
	subscribed: string[],
	recovered: boolean,
): Promise<IWebhookResponseData> {
	const { ctx, store, memory, now } = d;
	const production = ctx.getMode() === 'webhook';
	const webhookId = delivery.id;
	const key = deliveryKey(webhookId);
	const order = event.type === ORDER_CREATED ? orderKey(event.data.orderId) : undefined;
	const release = await waitAndHold(memory, order ? [key, order] : [key]);
	let releaseCaughtUp = () => {};
	try {
		// a. duplicate? (of the delivery, or of an order a catch-up brought)
		const duplicate = store.ran('seen', key, now)
			? 'duplicate'
			: order && store.ran('seen', order, now)
				? 'order-caught-up'
				: undefined;
		if (duplicate) {
			// the service sent it again, so it did not get an answer: keep it from this attempt on
			store.add({ section: 'seen', key, untilMs: deliveryKeptUntil(event.createdAt, now) });
			return acknowledge(d, duplicate, {
				id: webhookId,
				...(duplicate === 'order-caught-up' ? { orderId: event.data.orderId as number } : {}),
			});
		}

		// b. enrich: the current state, and the orders a gap may have lost
		const state = options.fetchCurrentState === true ? await readCurrentState(ctx, event) : {};
		if (state.retryLater) {
			ctx.logger.warn(
				`Marketplace Trigger could not read the current state of ${event.id}; asking the service to retry`,
				state.retryLater,
			);
			return reply(d, 503, {
				error: 'current-state-unavailable',
				retry: true,
				...state.retryLater,
			});
		}
		const catchUp =
			production && options.catchUpMissedOrders !== false && subscribed.includes(ORDER_CREATED);
		const noticeDue = noticeDueOf(d);
		const hold = (held: string[]) => (releaseCaughtUp = holdKeys(memory, held));
		const eventAt = Date.parse(event.createdAt);
		// an order sent again (its attempt came after the in-flight margin) that the cursor has not
		// passed: another process may be catching it up right now, so this delivery takes part in the claim
		const sentAt = delivery.timestamp * 1000;
		const resent =
			order !== undefined &&
			eventAt >= (store.cursor ?? Infinity) &&
			eventAt < sentAt - IN_FLIGHT_MS;
		// nothing says what came before: the cursor starts here (kept by this process until a save takes it)
		if (catchUp && store.cursor === undefined && Number.isFinite(eventAt))
			store.setCursor((memory.cursor = Math.max(memory.cursor, eventAt)));
		const window = catchUp
			? dueWindow(store, memory, { eventAt, resentAt: resent ? sentAt : undefined }, noticeDue)
			: undefined;
		const caught = window ? await catchUpMissed(d, window, options, hold) : { items: [], note: {} };
		if ('retryLater' in caught) return reply(d, 503, caught.retryLater);
		if (resent && caught.note.catchUp === 'claimed-by-another-process') {
			// that process may have brought this order; once its save shows, the service's next attempt is a duplicate
			ctx.logger.info(
				`Marketplace Trigger: order ${String(event.data.orderId)} was sent again while another n8n process catches up its window; asking the service to retry`,
			);
			return reply(d, 503, { error: 'catch-up-in-another-process', retry: true });
		}

		// c. record: the keys this run makes known, saved by the save loop
		recordKeys(d, keysOf(event, key, order && catchUp ? order : undefined, caught.items, now));

		// d. emit
		const json = itemOf(d, event, state, options);
		if (noticeDue) {
			noticeShown(d, noticeDue);
			// the process that claimed the catch-up shows the notice with its orders
			if (caught.note.catchUp !== 'claimed-by-another-process')
				json.notice = { ...noticeDue, ...caught.note } as unknown as IDataObject;
		}
		const items: INodeExecutionData[] = [
			...caught.items.map((item) => ({ json: { ...item, notice: json.notice } })),
			{ json },
		];
		const answer = { received: true, id: event.id };
		if (noticeDue || recovered || caught.items.length > 0) return reply(d, 200, answer, [items]);
		return { webhookResponse: answer, workflowData: [items] };
	} finally {
		releaseCaughtUp();
		release();
	}
}

/**
 * Step 2, a catch-up request of the trigger's own (catchUpRequests.ts): the window due, if any, is
 * caught up like a delivery's (step 3b) and its orders emitted; the answer says when the next
 * request is worth sending, or that none is (`stop`).
 */
async function catchUpNow(d: Delivery): Promise<IWebhookResponseData> {
	const { ctx, store, memory, now } = d;
	const options = ctx.getNodeParameter('options', {}) as ReceiveOptions;
	const subscribed = normaliseEventTypes(ctx.getNodeParameter('eventTypes', []));
	if (
		ctx.getMode() !== 'webhook' ||
		options.catchUpMissedOrders === false ||
		!subscribed.includes(ORDER_CREATED)
	)
		return answerWithoutSaving(d, { received: true, ignored: 'catch-up-off', stop: true });
	const cursorBefore = store.cursor;
	// nothing says what came before: the cursor starts where this request's window would end
	if (store.cursor === undefined)
		store.setCursor((memory.cursor = Math.max(memory.cursor, now - IN_FLIGHT_MS)));
	const noticeDue = noticeDueOf(d);
	const window = dueWindow(store, memory, { eventAt: now, selfStarted: true }, noticeDue);
	let releaseCaughtUp = () => {};
	try {
		const hold = (held: string[]) => (releaseCaughtUp = holdKeys(memory, held));
		const caught = window ? await catchUpMissed(d, window, options, hold) : { items: [], note: {} };
		if ('retryLater' in caught) return reply(d, 503, caught.retryLater);
		const answer = {
			received: true,
			...caught.note,
			nextCheckInMs: nextCheckInMs(store, memory, now, MIN_CHECK_GAP_MS),
		};
		if (caught.items.length === 0)
			return store.cursor !== cursorBefore ? reply(d, 200, answer) : answerWithoutSaving(d, answer);
		recordKeys(d, caughtUpKeys(caught.items, now));
		// the notice goes with the orders it explains; with none, the next event shows it
		const notice = noticeDue && { ...noticeDue, ...caught.note };
		if (noticeDue) noticeShown(d, noticeDue);
		const items = caught.items.map((item) => ({
			json: notice ? { ...item, notice: notice as unknown as IDataObject } : item,
		}));
		return reply(d, 200, answer, [items]);
	} finally {
		releaseCaughtUp();
	}
}

/** The missed-events notice still to show with this request's items, if this process has not shown it. */
function noticeDueOf(d: Delivery): MissedEventsNotice | undefined {
	const notice = d.store.record?.missedEvents;
	return notice !== undefined && !d.memory.shownNotices.has(notice.reEnabledAt)
		? notice
		: undefined;
}

/** The notice is on this run's items: not shown again by this process, and gone from the record n8n saves. */
function noticeShown(d: Delivery, notice: MissedEventsNotice): void {
	d.memory.shownNotices.add(notice.reEnabledAt);
	delete d.store.record!.missedEvents;
	d.store.recordChanged();
}

/** Step 3c: the keys go to this process's pending keys and its save loop (production), else into the store. */
function recordKeys(d: Delivery, keys: KeyToSave[]): void {
	const listener = ownListenerOf(d.request);
	const secret = d.store.record?.secret;
	if (d.ctx.getMode() === 'webhook' && secret && listener)
		queueSave(d.process.settings, d.memory, { ctx: d.ctx, listener, secret }, keys);
	else for (const one of keys) d.store.add(one);
}

/** The keys a run of `event` makes known: its delivery, its order (with the catch-up on), the orders it caught up. */
function keysOf(
	event: EventEnvelope,
	key: string,
	order: string | undefined,
	caughtUp: IDataObject[],
	nowMs: number,
): KeyToSave[] {
	const keys: KeyToSave[] = [
		{ section: 'seen', key, untilMs: deliveryKeptUntil(event.createdAt, nowMs) },
	];
	const createdAt = Date.parse(event.createdAt);
	if (order && Number.isFinite(createdAt))
		keys.push({ section: 'orders', key: order, untilMs: createdAt });
	return [...keys, ...caughtUpKeys(caughtUp, nowMs)];
}

/** The keys of caught-up orders: kept in `seen` as long as the service may still deliver their event. */
function caughtUpKeys(caughtUp: IDataObject[], nowMs: number): KeyToSave[] {
	return caughtUp.map((item) => ({
		section: 'seen',
		key: orderKey((item.data as IDataObject).orderId),
		untilMs: caughtUpKeptUntil(Date.parse(String(item.createdAt)), nowMs),
	}));
}

/** What step 3b's catch-up brought: caught-up order items and what the notice says of them, or a 503 to answer. */
type CatchUpOutcome = { items: IDataObject[]; note: IDataObject } | { retryLater: IDataObject };

/** Step 3b: the orders a gap may have lost, in the window due; their keys stay held until released. */
async function catchUpMissed(
	d: Delivery,
	window: CatchUpWindow,
	options: ReceiveOptions,
	hold: (keys: string[]) => void,
): Promise<CatchUpOutcome> {
	const { store, memory, now } = d;
	try {
		const withCurrent = options.fetchCurrentState === true;
		const result = await catchUpOrders(
			d.ctx,
			window,
			store,
			memory,
			now,
			WITHIN_ANSWER_LIMIT,
			withCurrent,
			hold,
		);
		memory.caughtUpSinceStart = true;
		if (!result.ran) return { items: [], note: { catchUp: result.reason } };
		store.setCursor(result.to);
		memory.cursor = Math.max(memory.cursor, result.to);
		return { items: result.events, note: { caughtUpOrders: result.events.length } };
	} catch (error) {
		const failure = readFailure(error);
		if (!isTransient(failure)) return { items: [], note: { catchUpError: failure.message } };
		d.ctx.logger.warn(
			`Marketplace Trigger could not read the orders a gap may have lost (${failure.message}); asking the service to retry`,
		);
		return { retryLater: { error: 'catch-up-unavailable', retry: true, message: failure.message } };
	}
}

/** The event's item: the envelope, what the options add, and what this process has to tell (refusals, storage). */
function itemOf(
	d: Delivery,
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
	if (options.includeHeaders === true) json.headers = d.request.headers as IDataObject;
	if (d.memory.refusals) {
		json.refusedDeliveries = { ...d.memory.refusals };
		d.memory.refusals = undefined;
	}
	const warning = storageWarning(d.memory);
	if (warning) json.storageWarning = warning;
	return json;
}

/** An answer of the trigger's own: n8n saves the static data (what the store changed) before anything else. */
function reply(
	d: Delivery,
	status: number,
	body: IDataObject,
	workflowData?: INodeExecutionData[][],
): IWebhookResponseData {
	d.store.writeBack(d.now);
	d.ctx.getResponseObject().status(status).json(body);
	return workflowData ? { noWebhookResponse: true, workflowData } : { noWebhookResponse: true };
}

/**
 * 200 for a catch-up request that changed nothing: n8n saves nothing, since this request's copy of the
 * static data may be older than what a save request of another process (queue mode) wrote meanwhile.
 */
function answerWithoutSaving(d: Delivery, body: IDataObject): IWebhookResponseData {
	d.ctx.getResponseObject().status(200).json(body);
	return { noWebhookResponse: true };
}

/** 2xx for a delivery that starts nothing. */
function acknowledge(d: Delivery, reason: string, extra: IDataObject = {}): IWebhookResponseData {
	return reply(d, 200, { received: true, ignored: reason, ...extra });
}

/** Marks `keys` as being processed by this request; returns what ends that. */
function holdKeys(memory: EndpointMemory, keys: string[]): () => void {
	let release: () => void = () => {};
	const held = new Promise<void>((resolve) => (release = resolve));
	for (const key of keys) memory.inFlight.set(key, held);
	return () => {
		for (const key of keys) memory.inFlight.delete(key);
		release();
	};
}

/** Waits while a request of this process processes one of `keys`, then holds them; returns what releases them. */
async function waitAndHold(memory: EndpointMemory, keys: string[]): Promise<() => void> {
	const running = () => keys.map((k) => memory.inFlight.get(k)).find(Boolean);
	for (let other = running(); other; other = running()) await other;
	return holdKeys(memory, keys);
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

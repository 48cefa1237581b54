/**
 * webhook() of the Marketplace Trigger: one incoming delivery.
 *
 * 1. Verify the Standard Webhooks signature over the raw body bytes with the stored secret(s);
 *    failure -> 401, no run (refusals.ts: a log line with what to check, a count on the next item,
 *    and a rotation where one made elsewhere explains what it saw).
 * 2. A sync message (settle.ts) -> store the ids it carries: the save path of accepted ids.
 * 3. An event: unknown or unsubscribed types -> 2xx, no run; webhook.test -> a sample on a test
 *    URL (sample.ts), else 2xx and a run only with the option "Emit Test Events".
 * 4. De-duplicate by webhook-id (and an order.created by its order), against the static data united
 *    with what this process accepted (memory.ts; a concurrent save may have overwritten the static
 *    data); concurrent copies in this process wait for the first. A duplicate -> 2xx, no run.
 * 5. Enrich: optionally the current state; the orders a gap may have lost (catchUp.ts). A transient
 *    failure -> 503 and nothing is recorded, so the service's retry is processed.
 * 6. Record the ids, emit the items. settle.ts stores the ids by a signed sync message to this n8n
 *    process's own listener (step 2), and keeps them stored while other processes save too.
 *
 * Who answers, and what n8n saves, rests on n8n 2.41.1 internals (re-check them on an n8n
 * upgrade): static data changed in webhook() is saved by the response callback of
 * `LiveWebhooks.executeWebhook` (`saveStaticData`, only when the ObservableObject's
 * `__dataChanged` is set). `executeWebhook` in webhook-helpers calls that callback before
 * `WorkflowRunner.run()` for `noWebhookResponse` and for requests that start no run, but after it
 * for its own "onReceived" answer, and run() wraps the same static data in a new Workflow
 * (`prepareNewExecution`), which clears `__dataChanged`. So:
 * - deliveries that start no run (duplicates, ignored types, refusals) are answered here, and
 *   what they changed is saved;
 * - accepted deliveries are answered by n8n after run() has registered the execution, which paces
 *   the service to what n8n can run (answered before run(), a burst could outrun n8n and
 *   executions would be lost); their ids are stored by settle.ts. The description's `responseData: ''` makes n8n
 *   send the node's `webhookResponse` (`extractWebhookOnReceivedResponse`), not `firstEntryJson`.
 * The save is one UPDATE of the whole static data with no version check, in whichever n8n process
 * received the request (each `n8n webhook` processor in queue mode).
 */
import type {
	IDataObject,
	INodeExecutionData,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';

import { transportClock } from '../shared/transport/clock';
import { apiRequest } from '../shared/transport/request';
import { isTransient, readFailure } from '../shared/transport/transportErrors';
import { verifyWebhook } from '../shared/webhookVerifier';
import { WITHIN_ANSWER_LIMIT } from './answerLimit';
import { caughtUpUntil, catchUpOrders, dueWindow, ORDER_CREATED, orderKey } from './catchUp';
import { retentionFor } from './dedup';
import {
	dedupKey,
	isSubscribable,
	normaliseEventTypes,
	parseEnvelope,
	stateReadFor,
	TEST_EVENT_TYPE,
	type EventEnvelope,
} from './events';
import { memoryOf, type EndpointMemory } from './memory';
import { isActivationProbe } from './reachability';
import { recoverSecret, refuse } from './refusals';
import { answerWithSample } from './sample';
import {
	noteAccepted,
	receiveSync,
	storageProblem,
	SYNC_EVENT_TYPE,
	syncTargetOf,
	type AcceptedKey,
} from './settle';
import { SECRET_OVERLAP_MS, verificationKeys, type MissedEventsNotice } from './state';
import { StoredEndpoint } from './stored';

export { forgetProcessMemory } from './memory';

interface ReceiveOptions {
	catchUpMissedOrders?: boolean;
	emitTestEvents?: boolean;
	fetchCurrentState?: boolean;
	includeHeaders?: boolean;
}

/** One request: what every step reads, loaded once. */
interface Delivery {
	ctx: IWebhookFunctions;
	request: RawRequest;
	/** the clock, read once for the whole request */
	now: number;
	stored: StoredEndpoint;
	memory: EndpointMemory;
}

type RawRequest = ReturnType<IWebhookFunctions['getRequestObject']> & {
	rawBody?: Buffer;
	readRawBody?: () => Promise<void>;
};

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

async function rawBodyOf(request: RawRequest): Promise<Buffer | undefined> {
	if (!Buffer.isBuffer(request.rawBody) && typeof request.readRawBody === 'function') {
		await request.readRawBody();
	}
	return Buffer.isBuffer(request.rawBody) ? request.rawBody : undefined;
}

interface CurrentState {
	current?: unknown;
	currentError?: IDataObject;
	retryLater?: IDataObject;
}

async function readCurrentState(
	ctx: IWebhookFunctions,
	event: EventEnvelope,
): Promise<CurrentState> {
	const read = stateReadFor(event);
	if (!read) return {};
	try {
		const { body } = await apiRequest.call(
			ctx,
			read.route === 'getOrder'
				? { route: 'getOrder', pathParams: read.pathParams }
				: { route: 'getBrandHealth', query: read.query },
			WITHIN_ANSWER_LIMIT,
		);
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

/** An answer of the trigger's own: n8n saves the static data (what `stored` changed) before anything else. */
function reply(
	d: Delivery,
	status: number,
	body: IDataObject,
	workflowData?: INodeExecutionData[][],
): IWebhookResponseData {
	d.stored.save();
	d.ctx.getResponseObject().status(status).json(body);
	return workflowData ? { noWebhookResponse: true, workflowData } : { noWebhookResponse: true };
}

/** 2xx for a delivery that starts nothing. */
function acknowledge(d: Delivery, reason: string, extra: IDataObject = {}): IWebhookResponseData {
	return reply(d, 200, { received: true, ignored: reason, ...extra });
}

/** Until when an accepted webhook-id is kept: as long as the service could send it again. */
function idKeptUntil(event: EventEnvelope, nowMs: number): number {
	return nowMs + retentionFor(nowMs - Date.parse(event.createdAt));
}

export async function receiveDelivery(this: IWebhookFunctions): Promise<IWebhookResponseData> {
	const request = this.getRequestObject() as RawRequest;
	const url = servedUrl(this);
	const now = transportClock().now();
	const memory = memoryOf(this.getWorkflow().id ?? '', url);
	const end = memory.begin();
	try {
		const d: Delivery = {
			ctx: this,
			request,
			now,
			memory,
			stored: new StoredEndpoint(this.getWorkflowStaticData('node'), url),
		};
		return await receive(d);
	} finally {
		end();
	}
}

/** Steps 1 to 3 of the file comment. */
async function receive(d: Delivery): Promise<IWebhookResponseData> {
	const { ctx, request, now, memory } = d;

	// 1. signature, over the bytes as received
	const rawBody = await rawBodyOf(request);
	if (!rawBody)
		return reply(d, 500, {
			error: 'raw-body-unavailable',
			message: 'The request body could not be read',
		});
	const verdict = verifyWebhook({
		headers: request.headers,
		rawBody,
		secrets: verificationKeys(d.stored.record, now),
		nowSeconds: Math.floor(now / 1000),
	});
	if (!verdict.ok) {
		// the activation check's test delivery, before n8n saved the secret: it proves n8n is reachable, refused as expected
		if (isActivationProbe(rawBody, verdict.reason))
			return reply(d, 401, { error: 'invalid-signature', reason: verdict.reason });
		return reply(
			d,
			401,
			await refuse(
				ctx,
				d.stored,
				memory,
				verdict,
				request.headers['webhook-id'],
				now,
				WITHIN_ANSWER_LIMIT,
			),
		);
	}
	// authentic, and also signed with a secret the trigger does not hold: rotated elsewhere (for 24
	// hours after the trigger's own recovery, the other holder's secret is the service's previous one)
	const record = d.stored.record;
	const recovered =
		verdict.unknownSignatures > 0 &&
		record !== undefined &&
		!(now - (record.recoveredAt ?? 0) < SECRET_OVERLAP_MS)
			? await recoverSecret(ctx, d.stored, memory, now, WITHIN_ANSWER_LIMIT)
			: false;
	const event = parseEnvelope(rawBody);
	if (!event)
		return reply(d, 400, {
			error: 'malformed-event',
			message: 'The body is not an event envelope',
		});

	// 2. a sync message: the save path of the ids this process accepted (settle.ts)
	if (event.type === SYNC_EVENT_TYPE)
		return reply(d, 200, receiveSync(d.stored, memory, event, now));

	// 3. an event of the service
	memory.lastVerifiedAt = now;
	const options = ctx.getNodeParameter('options', {}) as ReceiveOptions;
	const subscribed = normaliseEventTypes(ctx.getNodeParameter('eventTypes', []));
	if (event.type === TEST_EVENT_TYPE) {
		const sample = await answerWithSample(ctx, event, subscribed, options);
		if (sample) return sample;
		if (options.emitTestEvents !== true) {
			return acknowledge(d, 'test-event', {
				hint: 'Turn on "Emit Test Events" to run the workflow for webhook.test deliveries',
			});
		}
	} else if (!isSubscribable(event.type) || !subscribed.includes(event.type)) {
		return acknowledge(d, 'event-type-not-subscribed', { type: event.type });
	}
	return await acceptEvent(d, event, verdict.id, options, subscribed, recovered);
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

/** What step 5b brought: caught-up order items and what the notice says of them, or a 503 to answer. */
type CatchUpOutcome = { items: IDataObject[]; note: IDataObject } | { retryLater: IDataObject };

/** Step 5b: the orders a gap may have lost (catchUp.ts), when a catch-up is due; their keys stay held until released. */
async function catchUpMissed(
	d: Delivery,
	eventAt: number,
	notice: MissedEventsNotice | undefined,
	withCurrent: boolean,
	hold: (keys: string[]) => void,
): Promise<CatchUpOutcome> {
	const { stored, memory, now } = d;
	if (stored.caughtUpTo === undefined) {
		// nothing says what came before: start here (kept by this process until a save takes it)
		if (Number.isFinite(eventAt))
			stored.setCaughtUpTo((memory.caughtUpTo = Math.max(memory.caughtUpTo, eventAt)));
		return { items: [], note: {} };
	}
	const window = dueWindow(stored, memory, eventAt, notice);
	if (!window) return { items: [], note: {} };
	try {
		const result = await catchUpOrders(
			d.ctx,
			window,
			stored,
			memory,
			now,
			WITHIN_ANSWER_LIMIT,
			withCurrent,
			hold,
		);
		memory.caughtUpSinceStart = true;
		if (!result.ran) return { items: [], note: { catchUp: result.reason } };
		stored.setCaughtUpTo(result.to);
		memory.caughtUpTo = Math.max(memory.caughtUpTo, result.to);
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
	const problem = storageProblem(d.memory);
	if (problem) json.storageWarning = problem;
	return json;
}

/** Steps 4 to 6 for a verified event the workflow subscribes to. */
async function acceptEvent(
	d: Delivery,
	event: EventEnvelope,
	webhookId: string,
	options: ReceiveOptions,
	subscribed: string[],
	recovered: boolean,
): Promise<IWebhookResponseData> {
	const { ctx, stored, memory, now } = d;
	const production = ctx.getMode() === 'webhook';
	const catchUp =
		production && options.catchUpMissedOrders !== false && subscribed.includes(ORDER_CREATED);
	const eventAt = Date.parse(event.createdAt);

	// 4. duplicates: of the delivery, and of an order a catch-up brought
	const key = dedupKey(webhookId);
	const order = event.type === ORDER_CREATED ? orderKey(event.data.orderId) : undefined;
	const release = await waitAndHold(memory, order ? [key, order] : [key]);
	let releaseCaughtUp = () => {};
	try {
		stored.absorb(memory, now);
		const seenBefore = stored.knows(memory, 'ids', key, now)
			? 'duplicate'
			: order && stored.knows(memory, 'ids', order, now)
				? 'order-caught-up'
				: undefined;
		if (seenBefore) {
			// the service sent it again, so it did not get an answer: remember it from this attempt on
			stored.remember({ key, kind: 'ids', untilMs: idKeptUntil(event, now) });
			return acknowledge(d, seenBefore, {
				id: webhookId,
				...(seenBefore === 'order-caught-up'
					? { orderId: event.data.orderId as IDataObject[string] }
					: {}),
			});
		}

		// 5a. current state
		let state: CurrentState = {};
		if (options.fetchCurrentState === true) {
			state = await readCurrentState(ctx, event);
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
			stored.absorb(memory, now);
		}

		// 5b. orders a gap may have lost
		const notice = stored.record?.missedEvents;
		const noticeDue =
			notice !== undefined && !memory.shownNotices.has(notice.reEnabledAt) ? notice : undefined;
		const hold = (held: string[]) => (releaseCaughtUp = holdKeys(memory, held));
		const caught = catchUp
			? await catchUpMissed(d, eventAt, noticeDue, options.fetchCurrentState === true, hold)
			: { items: [], note: {} };
		if ('retryLater' in caught) return reply(d, 503, caught.retryLater);

		// 6. record the keys (settle.ts keeps them stored) and emit
		const accepted: AcceptedKey[] = [{ key, kind: 'ids', untilMs: idKeptUntil(event, now) }];
		if (order && catchUp && Number.isFinite(eventAt))
			accepted.push({ key: order, kind: 'orders', untilMs: eventAt });
		for (const item of caught.items) {
			const untilMs = caughtUpUntil(Date.parse(String(item.createdAt)), now);
			accepted.push({ key: orderKey((item.data as IDataObject).orderId), kind: 'ids', untilMs });
		}
		for (const accept of accepted) stored.remember(accept);
		const target = syncTargetOf(d.request);
		const secret = stored.record?.secret;
		// production deliveries only: a test URL serves one request and is gone
		if (production && secret && target) noteAccepted(ctx, memory, target, secret, accepted);

		const json = itemOf(d, event, state, options);
		if (noticeDue) {
			memory.shownNotices.add(noticeDue.reEnabledAt);
			// the process that claimed the catch-up shows the notice with its orders
			if (caught.note.catchUp !== 'claimed-by-another-process')
				json.notice = { ...noticeDue, ...caught.note } as unknown as IDataObject;
			delete stored.record!.missedEvents;
			stored.recordChanged();
		}
		const items = [
			...caught.items.map((item) => ({ json: { ...item, notice: json.notice } })),
			{ json },
		];
		const answer = { received: true, id: event.id };
		// What changed beyond the ids (a notice shown, a secret recovered, orders caught up) is saved only
		// if the trigger answers itself; otherwise n8n answers once the execution is registered.
		if (noticeDue || recovered || caught.items.length > 0) return reply(d, 200, answer, [items]);
		// n8n saves nothing here (see the file comment): the keys reach the static data through settle.ts
		return { webhookResponse: answer, workflowData: [items] };
	} finally {
		releaseCaughtUp();
		release();
	}
}

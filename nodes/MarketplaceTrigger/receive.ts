/**
 * webhook() of the Marketplace Trigger: one incoming delivery.
 *
 * 1. Verify the Standard Webhooks signature over the raw body bytes with the stored secret(s);
 *    failure -> 401, no run, a log line with what to check, and a count on the next event's item.
 *    The trigger rotates the secret again only where a rotation elsewhere explains what it saw: a
 *    verified delivery that also carries a signature it cannot match, or (bounded) no delivery
 *    verified for the 24 hours in which the service also signs with the previous secret.
 * 2. Read the envelope; unknown or unsubscribed types -> 2xx, no run; webhook.test -> 2xx, and a
 *    run only with the option "Emit Test Events".
 * 3. De-duplicate by webhook-id, against the ids in the static data united with the ids this
 *    process accepted (a concurrent save may have overwritten the static data); concurrent copies
 *    in this process wait for the first. A duplicate -> 2xx, no run.
 * 4. Optionally read the current state; a transient failure -> 503 and the id is NOT recorded, so
 *    the service's retry is processed; a permanent one is noted on the item.
 * 5. Record the id, emit one item. settle.ts stores the id and checks that it stays stored while
 *    other n8n processes save the static data too.
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
import type { IDataObject, INodeExecutionData, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

import { transportClock } from '../shared/transport/clock';
import { apiRequest, type TransportSettings } from '../shared/transport/request';
import { verifyWebhook, type VerifyFailure } from '../shared/webhookVerifier';
import { isTransient, readFailure } from '../shared/transport/transportErrors';
import { DedupStore, retentionFor } from './dedup';
import {
	dedupKey,
	isSubscribable,
	normaliseEventTypes,
	parseEnvelope,
	stateReadFor,
	TEST_EVENT_TYPE,
	type EventEnvelope,
} from './events';
import { catchUpOrders, ORDER_CREATED, orderKey } from './catchUp';
import { rotateSecret } from './lifecycle';
import { answerWithSample } from './sample';
import { forgetPending, noteAccepted, storageProblem, SYNC_EVENT_TYPE, syncTargetOf } from './settle';
import {
	getRecord,
	loadSeen,
	saveSeen,
	SECRET_OVERLAP_MS,
	setRecord,
	verificationKeys,
	withNewSecret,
	type EndpointRecord,
} from './state';

/**
 * The current-state read must fit in the service's 10-second answer limit: a short timeout and
 * two attempts at most (worst case about 3 + 0.5 + 3 s).
 */
export const FETCH_TRANSPORT: TransportSettings = {
	timeoutMs: 3_000,
	retry: { maxAttempts: 2, baseDelayMs: 250, maxDelayMs: 1_000 },
	// a rate-limit wait must not push the answer past the limit either: answer 503 instead
	budgetMs: 7_000,
};

/**
 * A rotation made to recover from one made elsewhere happens at most this often per endpoint: an
 * unverifiable request may be a forgery, and forgeries must not be able to spend the API quota.
 */
export const RECOVERY_INTERVAL_MS = 10 * 60_000;

/** The time of the last verified delivery is saved when it moved this far (each save writes the whole static data). */
const VERIFIED_AT_STEP_MS = 10 * 60_000;

/** What a user can check for each kind of refusal. */
const REFUSAL_ADVICE: Record<VerifyFailure, string> = {
	'missing-header': 'Not a delivery as the service sends it: a proxy in front of n8n dropped a webhook-* header, or the request came from elsewhere.',
	'duplicate-header': 'A webhook-* header came more than once: a proxy in front of n8n added or merged headers, or the request came from elsewhere.',
	'bad-timestamp': 'The webhook-timestamp header is not whole seconds: a proxy in front of n8n changed it, or the request came from elsewhere.',
	'timestamp-too-old': "Check this n8n host's clock (NTP); a proxy or queue that holds requests for minutes makes them stale too.",
	'timestamp-too-new': "Check this n8n host's clock (NTP): it is behind the service's.",
	'no-v1-signature': 'The webhook-signature header has no v1 entry: a proxy in front of n8n changed it, or the request came from elsewhere.',
	'signature-mismatch':
		'The body was changed on its way (a proxy or tunnel that re-encodes, decompresses or reformats it) or the request is forged.',
	'no-secret': 'The trigger holds no signing secret for this URL: unpublish and publish the workflow to register its endpoint again.',
};

interface Refusals {
	count: number;
	since: string;
	lastAt: string;
	lastReason: VerifyFailure;
	lastMessage: string;
}

interface ReceiveOptions {
	catchUpMissedOrders?: boolean;
	emitTestEvents?: boolean;
	fetchCurrentState?: boolean;
	includeHeaders?: boolean;
}

/** Accepted ids per workflow and URL in this process (each store bounded like the static one). */
const memory = new Map<string, DedupStore>();
/** Deliveries being processed right now, by workflow, URL and id. */
const inFlight = new Map<string, Promise<void>>();
/** Missed-events notices this process has put on an event (workflow, URL, re-enable time). */
const shownNotices = new Set<string>();
/** When this process last rotated to recover, per workflow and URL. */
const lastRecovery = new Map<string, number>();
/** When this process last verified a delivery of the service, per workflow and URL. */
const lastVerified = new Map<string, number>();
/** The newest webhook-timestamp (end of that second, in ms) this process verified, per workflow and URL. */
const lastDelivery = new Map<string, number>();
/** Deliveries refused since the last accepted event, per workflow and URL (this process). */
const refused = new Map<string, Refusals>();

/** Forgets this process's memory, as an n8n restart does (for tests). */
export function forgetProcessMemory(): void {
	forgetPending();
	memory.clear();
	shownNotices.clear();
	lastRecovery.clear();
	lastVerified.clear();
	lastDelivery.clear();
	refused.clear();
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
	const served = typeof ctx.getWebhookResourceUrl === 'function' ? ctx.getWebhookResourceUrl('default') : undefined;
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
	while (shared < arrived.length - 2 && shared < prod.length - 4 && arrived[arrived.length - 1 - shared] === prod[prod.length - 1 - shared]) shared++;
	if (shared === 0) return production;
	prod[prod.length - 1 - shared] = arrived[arrived.length - 1 - shared];
	return prod.join('/');
}

/** An answer of the trigger's own: n8n saves the static data before anything else (see the file comment). */
function reply(ctx: IWebhookFunctions, status: number, body: IDataObject, workflowData?: INodeExecutionData[][]): IWebhookResponseData {
	ctx.getResponseObject().status(status).json(body);
	return workflowData ? { noWebhookResponse: true, workflowData } : { noWebhookResponse: true };
}

/** 2xx for a delivery that starts nothing. */
function acknowledge(ctx: IWebhookFunctions, reason: string, extra: IDataObject = {}): IWebhookResponseData {
	return reply(ctx, 200, { received: true, ignored: reason, ...extra });
}

async function rawBodyOf(request: RawRequest): Promise<Buffer | undefined> {
	if (!Buffer.isBuffer(request.rawBody) && typeof request.readRawBody === 'function') {
		await request.readRawBody();
	}
	return Buffer.isBuffer(request.rawBody) ? request.rawBody : undefined;
}

/**
 * Brings the static data in line with what this process knows and returns the id store: the ids
 * it holds united with the ids this process accepted, and no notice this process already showed.
 * Writes only what changes, since every write makes n8n save the static data.
 */
function reconcile(data: IDataObject, url: string, scope: string, nowMs: number): DedupStore {
	const store = loadSeen(data, url);
	const remembered = memory.get(scope);
	if (remembered && store.merge(remembered)) saveSeen(data, url, store);
	store.prune(nowMs);
	memory.set(scope, store);
	const record = getRecord(data, url);
	if (!record) return store;
	let changed = false;
	if (record.missedEvents && shownNotices.has(`${scope}|${record.missedEvents.reEnabledAt}`)) {
		delete record.missedEvents;
		changed = true;
	}
	const verified = lastVerified.get(scope);
	if (verified !== undefined && verified - (record.lastVerifiedAt ?? 0) >= VERIFIED_AT_STEP_MS) {
		record.lastVerifiedAt = verified;
		changed = true;
	}
	// where a catch-up would start: kept exact, and this is written with every save of accepted ids anyway
	const delivered = lastDelivery.get(scope);
	if (delivered !== undefined && delivered > (record.lastDeliveryAt ?? 0)) {
		record.lastDeliveryAt = delivered;
		changed = true;
	}
	if (changed) setRecord(data, url, record);
	return store;
}

/** Remembers an accepted id for as long as the service could send it again, and saves it; returns until when. */
function rememberId(data: IDataObject, url: string, store: DedupStore, key: string, event: EventEnvelope, nowMs: number): number {
	const until = nowMs + retentionFor(nowMs - Date.parse(event.createdAt));
	store.remember(key, until);
	saveSeen(data, url, store);
	return until;
}

/**
 * A sync message of another process (or this one; see settle.ts): stores the ids it carries and
 * answers which of them the stored static data lacked.
 */
function receiveSync(ctx: IWebhookFunctions, data: IDataObject, url: string, scope: string, event: EventEnvelope): IWebhookResponseData {
	const sent = DedupStore.fromState(event.data.ids);
	const missing = loadSeen(data, url).uncovered(sent);
	const store = reconcile(data, url, scope, Date.now());
	if (store.merge(sent)) saveSeen(data, url, store);
	return reply(ctx, 200, { received: true, sync: true, missing: missing.join('') });
}

/**
 * A delivery signed with a secret the trigger does not hold: the secret was rotated elsewhere
 * (another workflow or API client). Rotating again gives the trigger the current secret; the service
 * keeps signing with the previous one for 24 hours, so the other holder is not cut off at once.
 * At most once per RECOVERY_INTERVAL_MS per endpoint, in this process and across processes (the
 * time is kept in the record).
 */
async function recoverSecret(ctx: IWebhookFunctions, data: IDataObject, url: string, scope: string, record: EndpointRecord): Promise<boolean> {
	const now = transportClock().now();
	const last = Math.max(lastRecovery.get(scope) ?? 0, record.recoveredAt ?? 0);
	if (now - last < RECOVERY_INTERVAL_MS) return false;
	lastRecovery.set(scope, now);
	try {
		const secret = await rotateSecret(ctx, record.endpointId, FETCH_TRANSPORT);
		setRecord(data, url, { ...withNewSecret(record, secret, now), recoveredAt: now });
		ctx.logger.warn(
			`Marketplace Trigger: the signing secret of webhook endpoint ${record.endpointId} was rotated outside this workflow; ` +
				'it rotated again to hold the current secret (the other holder\'s secret stays valid for 24 hours)',
			{ endpointId: record.endpointId, url },
		);
		return true;
	} catch (error) {
		ctx.logger.warn(`Marketplace Trigger could not rotate the secret of webhook endpoint ${record.endpointId}: ${readFailure(error).message}`);
		return false;
	}
}

/**
 * A refused delivery: 401, a log line a user can act on, and a count for the next event's item.
 * A signature that matches no secret is taken for a rotation elsewhere only after 24 hours without
 * a verified delivery: within them the service would also sign with the secret the trigger holds.
 */
async function refuse(
	ctx: IWebhookFunctions,
	data: IDataObject,
	url: string,
	scope: string,
	record: EndpointRecord | undefined,
	verdict: { reason: VerifyFailure; message: string },
	webhookId: unknown,
): Promise<IWebhookResponseData> {
	const now = transportClock().now();
	let advice = REFUSAL_ADVICE[verdict.reason];
	if (verdict.reason === 'signature-mismatch' && record) {
		const verifiedAt = Math.max(lastVerified.get(scope) ?? 0, record.lastVerifiedAt ?? 0, record.secretAt ?? 0);
		if (now - verifiedAt >= SECRET_OVERLAP_MS) {
			advice += ' No delivery was verified for 24 hours, so the secret may also have been rotated elsewhere.';
			await recoverSecret(ctx, data, url, scope, record);
		} else {
			advice += ` It is not a secret rotation elsewhere: a delivery verified at ${new Date(verifiedAt).toISOString()} and the service signs with the previous secret too for 24 hours after a rotation.`;
		}
	}
	const at = new Date(now).toISOString();
	const before = refused.get(scope);
	refused.set(scope, {
		count: (before?.count ?? 0) + 1,
		since: before?.since ?? at,
		lastAt: at,
		lastReason: verdict.reason,
		lastMessage: `${verdict.message}. ${advice}`,
	});
	ctx.logger.warn(`Marketplace Trigger refused a delivery (401, ${verdict.reason}): ${verdict.message}. ${advice}`, {
		url,
		webhookId: typeof webhookId === 'string' ? webhookId : undefined,
	});
	return reply(ctx, 401, { error: 'invalid-signature', reason: verdict.reason });
}

async function readCurrentState(
	ctx: IWebhookFunctions,
	event: EventEnvelope,
): Promise<{ current?: unknown; currentError?: IDataObject; retryLater?: IDataObject }> {
	const read = stateReadFor(event);
	if (!read) return {};
	try {
		const { body } = await apiRequest.call(
			ctx,
			read.route === 'getOrder'
				? { route: 'getOrder', pathParams: read.pathParams }
				: { route: 'getBrandHealth', query: read.query },
			FETCH_TRANSPORT,
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

export async function receiveDelivery(this: IWebhookFunctions): Promise<IWebhookResponseData> {
	const request = this.getRequestObject() as RawRequest;
	const url = servedUrl(this);
	const scope = `${this.getWorkflow().id ?? ''}|${url}`;
	const data = this.getWorkflowStaticData('node');
	const record = getRecord(data, url);

	// 1. signature, over the bytes as received
	const rawBody = await rawBodyOf(request);
	if (!rawBody) {
		return reply(this, 500, { error: 'raw-body-unavailable', message: 'The request body could not be read' });
	}
	const verdict = verifyWebhook({
		headers: request.headers,
		rawBody,
		secrets: verificationKeys(record, transportClock().now()),
	});
	if (!verdict.ok) return await refuse(this, data, url, scope, record, verdict, request.headers['webhook-id']);
	// authentic, and also signed with a secret the trigger does not hold: rotated elsewhere (for 24
	// hours after the trigger's own recovery, the other holder's secret is the service's previous one)
	const recovered =
		verdict.unknownSignatures > 0 && record !== undefined && !(transportClock().now() - (record.recoveredAt ?? 0) < SECRET_OVERLAP_MS)
			? await recoverSecret(this, data, url, scope, record)
			: false;

	// 2. envelope and type
	const event = parseEnvelope(rawBody);
	if (!event) return reply(this, 400, { error: 'malformed-event', message: 'The body is not an event envelope' });
	if (event.type === SYNC_EVENT_TYPE) return receiveSync(this, data, url, scope, event);
	lastVerified.set(scope, transportClock().now());
	lastDelivery.set(scope, Math.max(lastDelivery.get(scope) ?? 0, verdict.timestamp * 1000 + 999));
	const options = this.getNodeParameter('options', {}) as ReceiveOptions;
	const subscribed = normaliseEventTypes(this.getNodeParameter('eventTypes', []));
	if (event.type === TEST_EVENT_TYPE) {
		const sample = await answerWithSample(this, event, subscribed, options);
		if (sample) return sample;
		if (options.emitTestEvents !== true) return acknowledge(this, 'test-event', { hint: 'Turn on "Emit Test Events" to run the workflow for webhook.test deliveries' });
	} else if (!isSubscribable(event.type) || !subscribed.includes(event.type)) {
		return acknowledge(this, 'event-type-not-subscribed', { type: event.type });
	}

	// 3. duplicates
	const key = dedupKey(verdict.id);
	const flightKey = `${scope}|${key}`;
	for (let running = inFlight.get(flightKey); running; running = inFlight.get(flightKey)) {
		await running;
	}
	const seen = reconcile(data, url, scope, Date.now());
	if (seen.has(key, Date.now())) {
		// the service sent it again, so it did not get an answer: remember it from this attempt on
		rememberId(data, url, seen, key, event, Date.now());
		return acknowledge(this, 'duplicate', { id: verdict.id });
	}
	const catchUp = options.catchUpMissedOrders === true && subscribed.includes(ORDER_CREATED);
	if (catchUp && event.type === ORDER_CREATED && seen.has(orderKey(event.data.orderId), Date.now())) {
		// the order was caught up already; its late event starts nothing
		rememberId(data, url, seen, key, event, Date.now());
		return acknowledge(this, 'order-caught-up', { id: verdict.id, orderId: event.data.orderId as IDataObject[string] });
	}
	let release: () => void = () => {};
	inFlight.set(flightKey, new Promise<void>((resolve) => (release = resolve)));
	try {
		// 4. current state
		let state: Awaited<ReturnType<typeof readCurrentState>> = {};
		/** a read ran: other requests of this process may have accepted ids meanwhile */
		let awaited = false;
		if (options.fetchCurrentState === true) {
			awaited = true;
			state = await readCurrentState(this, event);
			if (state.retryLater) {
				this.logger.warn(`Marketplace Trigger could not read the current state of ${event.id}; asking the service to retry`, state.retryLater);
				return reply(this, 503, { error: 'current-state-unavailable', retry: true, ...state.retryLater });
			}
		}

		// 4b. orders whose events the service never sent while the endpoint was disabled
		const notice = getRecord(data, url)?.missedEvents;
		let caughtUp: IDataObject[] = [];
		const noticeExtra: IDataObject = {};
		if (catchUp && record && notice && !shownNotices.has(`${scope}|${notice.reEnabledAt}`)) {
			const known = awaited ? reconcile(data, url, scope, Date.now()) : seen;
			awaited = true;
			try {
				const result = await catchUpOrders(this, record, notice, known, FETCH_TRANSPORT, options.fetchCurrentState === true);
				if (result.ran) caughtUp = result.events;
				else noticeExtra.catchUp = result.reason;
			} catch (error) {
				const failure = readFailure(error);
				if (isTransient(failure)) {
					this.logger.warn(`Marketplace Trigger could not read the missed orders (${failure.message}); asking the service to retry`);
					return reply(this, 503, { error: 'catch-up-unavailable', retry: true, message: failure.message });
				}
				noticeExtra.catchUpError = failure.message;
			}
			if (noticeExtra.catchUp === undefined) noticeExtra.caughtUpOrders = caughtUp.length;
		}

		// 5. record and emit (after a read, which may take seconds, reconcile again with what came meanwhile)
		const store = awaited ? reconcile(data, url, scope, Date.now()) : seen;
		if (catchUp) {
			const orderId = event.type === ORDER_CREATED ? event.data.orderId : undefined;
			if (orderId !== undefined) store.remember(orderKey(orderId), Date.now() + retentionFor(Date.now() - Date.parse(event.createdAt)));
			// a late real event of a caught-up order comes on the service's retry schedule at most
			for (const order of caughtUp) store.remember(orderKey((order.data as IDataObject).orderId), Date.now() + retentionFor(Infinity));
		}
		const until = rememberId(data, url, store, key, event, Date.now());
		const secret = getRecord(data, url)?.secret;
		const target = syncTargetOf(request);
		// production deliveries only: a test URL serves one request and is gone
		if (this.getMode() === 'webhook' && secret && target) noteAccepted(this, scope, url, target, secret, key, until);

		const json: IDataObject = {
			id: event.id,
			type: event.type,
			createdAt: event.createdAt,
			data: event.data as IDataObject,
		};
		if (state.current !== undefined) json.current = state.current as IDataObject;
		if (state.currentError !== undefined) json.currentError = state.currentError;
		if (options.includeHeaders === true) json.headers = request.headers as IDataObject;
		const refusals = refused.get(scope);
		if (refusals) {
			refused.delete(scope);
			json.refusedDeliveries = { ...refusals };
		}
		const problem = storageProblem(scope);
		if (problem) json.storageWarning = problem;
		const current = getRecord(data, url);
		const noticeDone = current?.missedEvents !== undefined;
		if (current?.missedEvents) {
			shownNotices.add(`${scope}|${current.missedEvents.reEnabledAt}`);
			// the process that claimed the catch-up shows the notice with its orders
			if (noticeExtra.catchUp !== 'claimed-by-another-process') json.notice = { ...current.missedEvents, ...noticeExtra } as unknown as IDataObject;
			delete current.missedEvents;
			setRecord(data, url, current);
		}
		const items = [...caughtUp.map((order) => ({ json: { ...order, notice: json.notice } })), { json }];
		const answer = { received: true, id: event.id };
		// A changed endpoint record (notice shown, secret recovered) is saved only if the trigger
		// answers itself; otherwise n8n answers once the execution is registered (see the file comment).
		if (noticeDone || recovered) return reply(this, 200, answer, [items]);
		return { webhookResponse: answer, workflowData: [items] };
	} finally {
		inFlight.delete(flightKey);
		release();
	}
}

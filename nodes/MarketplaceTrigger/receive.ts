/**
 * webhook() of the Marketplace Trigger: one incoming delivery (spec 6.2-6.4).
 *
 * 1. Verify the Standard Webhooks signature over the raw body bytes with the stored secret(s);
 *    failure -> 401, no run.
 * 2. Read the envelope; unknown or unsubscribed types -> 2xx, no run; webhook.test -> 2xx, and a
 *    run only with the option "Emit Test Events".
 * 3. De-duplicate by webhook-id (static data, so it survives restarts; process memory, so a save
 *    overwritten by a concurrent request loses nothing; an in-flight guard for concurrent copies).
 *    A duplicate -> 2xx, no run.
 * 4. Optionally read the current state; a transient failure -> 503 and the id is NOT recorded, so
 *    the service's retry is processed; a permanent one is noted on the item.
 * 5. Record the id, emit one item.
 *
 * Static data changed here is saved by n8n for production executions: LiveWebhooks.executeWebhook
 * calls workflowStaticDataService.saveStaticData(workflow) in its response callback, which runs for
 * both `noWebhookResponse` and normal responses (not when webhook() throws, so this never throws
 * after recording an id).
 */
import type { IDataObject, INodeExecutionData, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

import { apiRequest, type TransportSettings } from '../shared/transport/request';
import { verifyWebhook } from '../shared/webhookVerifier';
import { isTransient, readFailure } from '../shared/transport/apiFailure';
import { DedupStore } from './dedup';
import {
	dedupKey,
	isSubscribable,
	normaliseEventTypes,
	parseEnvelope,
	stateReadFor,
	TEST_EVENT_TYPE,
	type EventEnvelope,
} from './events';
import { getRecord, loadSeen, saveSeen, setRecord, verificationKeys } from './state';

/**
 * The current-state read must fit in the 10-second answer limit (part 8): a short timeout and
 * two attempts at most (worst case about 3 + 0.5 + 3 s).
 */
export const FETCH_TRANSPORT: TransportSettings = {
	timeoutMs: 3_000,
	retry: { maxAttempts: 2, baseDelayMs: 250, maxDelayMs: 1_000 },
	// a rate-limit wait must not push the answer past the limit either: answer 503 instead
	budgetMs: 7_000,
};

interface ReceiveOptions {
	emitTestEvents?: boolean;
	fetchCurrentState?: boolean;
	includeHeaders?: boolean;
}

/** Accepted ids per workflow and URL in this process (each store bounded like the static one). */
const memory = new Map<string, DedupStore>();
/** Deliveries being processed right now, by workflow, URL and id. */
const inFlight = new Map<string, Promise<void>>();

/** When this process last wrote each scope's id store into the static data. */
const lastWritten = new Map<string, number>();

/**
 * The id store is written into the static data at most this often per endpoint. Every write makes
 * n8n save the workflow's static data, and on SQLite those saves contend with the executions' own
 * writes: at ~27 accepted deliveries/s, one save each made n8n time out on its write lock and drop
 * executions (test/bench/soak.ts). Ids accepted in between stay in this process's memory and go
 * out with the next write; a restart can forget only the ids of the last quarter second before it.
 */
export const STORE_WRITE_INTERVAL_MS = 250;

/** Forgets this process's memory of accepted ids, as an n8n restart does (for tests). */
export function forgetProcessMemory(): void {
	memory.clear();
	lastWritten.clear();
}

/** Writes the store into the static data when the last write is old enough; true if it did. */
function writeStore(data: IDataObject, url: string, scope: string, store: DedupStore, nowMs: number): boolean {
	if (nowMs - (lastWritten.get(scope) ?? 0) < STORE_WRITE_INTERVAL_MS) return false;
	saveSeen(data, url, store);
	lastWritten.set(scope, nowMs);
	return true;
}

type RawRequest = ReturnType<IWebhookFunctions['getRequestObject']> & {
	rawBody?: Buffer;
	readRawBody?: () => Promise<void>;
};

/**
 * The URL this request arrived on, which the static data is keyed by. getNodeWebhookUrl is always
 * the production URL in webhook(); getWebhookResourceUrl (n8n 2.x) is the test URL on a test run.
 */
function servedUrl(ctx: IWebhookFunctions): string {
	const served = typeof ctx.getWebhookResourceUrl === 'function' ? ctx.getWebhookResourceUrl('default') : undefined;
	return served ?? ctx.getNodeWebhookUrl('default') ?? '';
}

function reply(ctx: IWebhookFunctions, status: number, body: IDataObject): IWebhookResponseData {
	ctx.getResponseObject().status(status).json(body);
	return { noWebhookResponse: true };
}

/** 2xx for a delivery that starts nothing, answered at once like every other answer of ours. */
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
 * Static data's ids at this URL united with this process's (kept as this process's memory).
 * `repaired`: this process knew ids the static data lacked (a concurrent save overwrote them).
 */
function seenStore(data: IDataObject, url: string, scope: string, nowMs: number): { store: DedupStore; repaired: boolean } {
	const store = loadSeen(data, url);
	const stored = store.size;
	const remembered = memory.get(scope);
	if (remembered) store.merge(remembered);
	const repaired = store.size > stored;
	store.prune(nowMs);
	memory.set(scope, store);
	return { store, repaired };
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
		secrets: verificationKeys(record, Date.now()),
	});
	if (!verdict.ok) {
		this.logger.debug(`Marketplace Trigger refused a delivery: ${verdict.message}`, { reason: verdict.reason });
		return reply(this, 401, { error: 'invalid-signature', reason: verdict.reason });
	}

	// 2. envelope and type
	const event = parseEnvelope(rawBody);
	if (!event) return reply(this, 400, { error: 'malformed-event', message: 'The body is not an event envelope' });
	const options = this.getNodeParameter('options', {}) as ReceiveOptions;
	if (event.type === TEST_EVENT_TYPE) {
		if (options.emitTestEvents !== true) return acknowledge(this, 'test-event', { hint: 'Turn on "Emit Test Events" to run the workflow for webhook.test deliveries' });
	} else if (!isSubscribable(event.type) || !normaliseEventTypes(this.getNodeParameter('eventTypes', [])).includes(event.type)) {
		return acknowledge(this, 'event-type-not-subscribed', { type: event.type });
	}

	// 3. duplicates
	const scope = `${this.getWorkflow().id ?? ''}|${url}`;
	const key = dedupKey(verdict.id);
	const flightKey = `${scope}|${key}`;
	for (let running = inFlight.get(flightKey); running; running = inFlight.get(flightKey)) {
		await running;
	}
	const seen = seenStore(data, url, scope, Date.now());
	if (seen.store.has(key, Date.now())) {
		// Written back only when it repairs the static data: every write makes n8n save it all.
		if (seen.repaired) writeStore(data, url, scope, seen.store, Date.now());
		return acknowledge(this, 'duplicate', { id: verdict.id });
	}
	let release: () => void = () => {};
	inFlight.set(flightKey, new Promise<void>((resolve) => (release = resolve)));
	try {
		// 4. current state
		let state: Awaited<ReturnType<typeof readCurrentState>> = {};
		if (options.fetchCurrentState === true) {
			state = await readCurrentState(this, event);
			if (state.retryLater) {
				this.logger.warn(`Marketplace Trigger could not read the current state of ${event.id}; asking the service to retry`, state.retryLater);
				return reply(this, 503, { error: 'current-state-unavailable', retry: true, ...state.retryLater });
			}
		}

		// 5. record and emit
		const { store } = seenStore(data, url, scope, Date.now());
		store.add(key, Date.now());
		let mustSave = writeStore(data, url, scope, store, Date.now());

		const json: IDataObject = {
			id: event.id,
			type: event.type,
			createdAt: event.createdAt,
			data: event.data as IDataObject,
		};
		if (state.current !== undefined) json.current = state.current as IDataObject;
		if (state.currentError !== undefined) json.currentError = state.currentError;
		if (options.includeHeaders === true) json.headers = request.headers as IDataObject;
		if (record?.missedEvents) {
			json.notice = record.missedEvents as unknown as IDataObject;
			const cleared = { ...record };
			delete cleared.missedEvents;
			setRecord(data, url, cleared);
			mustSave = true;
		}
		const item: INodeExecutionData = { json };
		// Who answers the service decides what n8n saves and how fast deliveries may come in:
		// - n8n's own answer ("on received") comes after WorkflowRunner.run() has registered the
		//   execution, which paces the service to what n8n can store; but run() wraps the same static
		//   data in a new Workflow, which clears its changed flag, so nothing changed in webhook() is
		//   saved (n8n 2.41.1).
		// - our own answer (noWebhookResponse) makes n8n save the static data before the run, but
		//   comes before the execution exists: answering every delivery that way let the soak push
		//   33/s into n8n and n8n dropped executions it could not store (SQLite write-lock timeouts).
		// So the trigger answers itself only when the static data must be saved (the id store is due,
		// at most every STORE_WRITE_INTERVAL_MS, or the notice was cleared), and leaves every other
		// answer to n8n. Ids accepted in between are saved with the next such answer. The cost of our
		// own answer: one that goes out while n8n shuts down can be dropped with its execution.
		if (mustSave) {
			this.getResponseObject().status(200).json({ received: true, id: event.id });
			return { noWebhookResponse: true, workflowData: [[item]] };
		}
		return { webhookResponse: { received: true, id: event.id }, workflowData: [[item]] };
	} finally {
		inFlight.delete(flightKey);
		release();
	}
}

/**
 * The watch: while the workflow is published, n8n polls the trigger (its poll(), option Watch Every,
 * 5 minutes by default) and the trigger reads the service's own record of its endpoint: the
 * endpoint's status, and its deliveries with the HTTP status this n8n answered each. That record is
 * read with the node's credential, so it is evidence; a request that fails verification never is, and
 * changes nothing.
 *
 * What a look finds (`judgeLook`, pure) and what the watch does:
 * | the record says                                       | the watch                                          |
 * | ----------------------------------------------------- | -------------------------------------------------- |
 * | Enabled; every delivery since the last look got 2xx   | nothing: poll() returns null, no execution         |
 * | a delivery failed or got no answer                    | a check (the catch-up, catchUp.ts)                 |
 * | the newest answered delivery got 401 from this n8n    | a new secret (rotation), then a check; once only:  |
 * |                                                       | refused again after it, the trigger's error        |
 * | the endpoint Disabled                                 | enabled again, then a check with a notice          |
 * | the endpoint gone (404)                               | registered again, then a check                     |
 * | the API key refused (401/403), or the service         | the trigger's error (n8n shows it on the workflow  |
 * | unreachable for WATCH_GIVES_UP_MS                     | and runs its error workflow)                       |
 *
 * Why poll(), and no trigger(): n8n 2.41 holds an expression isolate for a poll, never for a callback of
 * a cron trigger() registered, and the credential's header is an expression (`=Bearer {{...}}`), so an
 * authenticated request from such a callback fails ("No bridge acquired"); and n8n 2.41's publication
 * starts a node that has both twice (it lists the node once as a trigger node and once as a poll node).
 * The first poll of an activation is the check at the start (catchUp.ts `startCheck`). A check is what
 * poll() returns: n8n saves the static data (a new secret, a new endpoint) and starts a run, whose
 * execute() reads the missed orders (run.ts). The watch's memory lives in this process, per activation:
 * after a restart the check at the start covers what came before.
 */
import type { IDataObject, INodeExecutionData, IPollFunctions, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { transportClock } from '../shared/transport/clock';
import { apiRequest, newIdempotencyKey, type TransportSettings } from '../shared/transport/request';
import { isTransient, nodeApiError, readFailure } from '../shared/transport/transportErrors';
import {
	catchUpApplies,
	checkItem,
	disabledNotice,
	parameterOf,
	takeDisabledNotice,
} from './catchUp';
import { isPending, readDeliveryRecord, type DeliveryRecord } from './deliveryRecord';
import { registerEndpoint } from './lifecycle';
import {
	productionRecord,
	RENEWAL_HOLDS_MS,
	rotateSecret,
	withNewSecret,
	writeRecord,
	type EndpointRecord,
} from './secrets';

/** The option Watch Every: minutes between looks (1 to 60), 0 for off. */
export const DEFAULT_WATCH_MINUTES = 5;
export const MAX_WATCH_MINUTES = 60;

/** The service unreachable this long (every look failing) is the trigger's error. */
export const WATCH_GIVES_UP_MS = 30 * 60_000;

/** Deliveries read per page (the service's largest), and pages at most per look. */
const PAGE_SIZE = 100;
const MAX_PAGES = 3;

const WATCH_TRANSPORT: TransportSettings = {
	timeoutMs: 15_000,
	retry: { maxAttempts: 2, baseDelayMs: 1_000, maxDelayMs: 5_000 },
};

const TEST_EVENT_TYPE = 'webhook.test';

/** What one look read. */
export interface Look {
	endpoint: 'gone' | { status: string; updatedAt?: string; disabledReason?: string | null };
	/** newest first */
	deliveries: DeliveryRecord[];
}

/** What the watch remembers between looks. */
export interface WatchMemory {
	/** every delivery up to this id is judged; undefined before the first look */
	judgedUpTo?: number;
	/** when this activation's watch began (Unix ms): deliveries created before are the start check's */
	activatedAt: number;
	/** the watch took a new secret for refused deliveries (within RENEWAL_HOLDS_MS) */
	renewed?: { at: number; afterDeliveryId: number };
}

export type WatchAction =
	| { kind: 'none' }
	| { kind: 'register' }
	| { kind: 'enable'; disabledSince?: string }
	| { kind: 'renewSecret' }
	| { kind: 'refusedAfterRenewal' }
	| { kind: 'check' };

/** What a look calls for, and how far the deliveries are judged after it. Pure. */
export function judgeLook(
	look: Look,
	memory: WatchMemory,
): { action: WatchAction; judgedUpTo?: number } {
	if (look.endpoint === 'gone') return { action: { kind: 'register' } };
	if (look.endpoint.status === 'Disabled')
		return { action: { kind: 'enable', disabledSince: look.endpoint.updatedAt } };

	const oldestFirst = look.deliveries
		.filter((d): d is DeliveryRecord & { deliveryId: number } => d.deliveryId !== undefined)
		.sort((a, b) => a.deliveryId - b.deliveryId);
	// the first look judges what came after the trigger started (all of it if the record has no times)
	const baseline =
		memory.judgedUpTo ??
		oldestFirst
			.filter((d) => d.createdAt === undefined || d.createdAt < memory.activatedAt)
			.reduce((max, d) => Math.max(max, d.deliveryId), 0);
	const fresh = oldestFirst.filter((d) => d.deliveryId > baseline);
	// judged up to the first delivery not attempted yet (the next look judges it)
	const firstOpen = fresh.findIndex(isPending);
	const judged = firstOpen === -1 ? fresh : fresh.slice(0, firstOpen);
	const judgedUpTo = judged.at(-1)?.deliveryId ?? baseline;

	const events = judged.filter((d) => d.eventType !== TEST_EVENT_TYPE);
	const answered = events.filter((d) => d.httpStatus !== null);
	const newest = answered.at(-1);
	if (newest?.httpStatus === 401) {
		const after = memory.renewed?.afterDeliveryId;
		const refusedAfterRenewal =
			after !== undefined && answered.some((d) => d.httpStatus === 401 && d.deliveryId > after);
		return {
			action: { kind: refusedAfterRenewal ? 'refusedAfterRenewal' : 'renewSecret' },
			judgedUpTo,
		};
	}
	const missed = events.some(
		(d) => d.httpStatus === null || d.httpStatus < 200 || d.httpStatus >= 300,
	);
	return { action: { kind: missed ? 'check' : 'none' }, judgedUpTo };
}

/** Reads the endpoint and its deliveries since `judgedUpTo` (a few pages at most). */
async function readEndpointAndDeliveries(
	ctx: IPollFunctions,
	endpointId: number,
	judgedUpTo: number | undefined,
): Promise<Look> {
	let endpoint: Look['endpoint'];
	try {
		const { body } = await apiRequest.call(
			ctx,
			{ route: 'getWebhookEndpoint', pathParams: { id: endpointId } },
			WATCH_TRANSPORT,
		);
		const record = (body ?? {}) as IDataObject;
		endpoint = {
			status: String(record.status ?? ''),
			updatedAt: typeof record.updatedAt === 'string' ? record.updatedAt : undefined,
		};
	} catch (error) {
		if (readFailure(error).status === 404) return { endpoint: 'gone', deliveries: [] };
		throw error instanceof NodeApiError
			? error
			: new NodeApiError(ctx.getNode(), error as JsonObject);
	}
	const deliveries: DeliveryRecord[] = [];
	for (let page = 1; page <= MAX_PAGES; page++) {
		const { body } = await apiRequest.call(
			ctx,
			{
				route: 'listWebhookDeliveries',
				pathParams: { id: endpointId },
				query: { page, limit: PAGE_SIZE },
			},
			WATCH_TRANSPORT,
		);
		const { deliveries: list, pagination } = (body ?? {}) as IDataObject;
		const records = (Array.isArray(list) ? list : [])
			.map(readDeliveryRecord)
			.filter((d): d is DeliveryRecord => d !== undefined);
		deliveries.push(...records);
		const oldest = records.at(-1)?.deliveryId;
		const totalPages = Number((pagination as IDataObject | undefined)?.totalPages ?? 1);
		// the first look needs one page: what came before the start is the start check's
		if (judgedUpTo === undefined || oldest === undefined || oldest <= judgedUpTo) break;
		if (page >= totalPages) break;
	}
	return { endpoint, deliveries };
}

/**
 * What the watch remembers, per activation: keyed by the node's static data object, which lives as long
 * as the Workflow n8n activated (a new activation, a new memory; a removed one is collected).
 */
type Memory = WatchMemory & {
	/** since when every look failed to read the service */
	failingSince?: number;
	/** the look under way */
	looking?: Promise<INodeExecutionData[][] | null>;
};
const memories = new WeakMap<object, Memory>();

/** The option Watch Every, in minutes (0: off). */
export function watchMinutes(options: { watchEvery?: unknown }): number {
	const minutes = Number(options.watchEvery ?? DEFAULT_WATCH_MINUTES);
	return Number.isFinite(minutes) && minutes > 0
		? Math.min(Math.round(minutes), MAX_WATCH_MINUTES)
		: 0;
}

/**
 * The node's Poll Times, which n8n reads to schedule poll(): from the option Watch Every (none when
 * off). A hidden parameter whose value is this expression.
 */
export const POLL_TIMES_EXPRESSION =
	'={{ (m => m <= 0 ? [] : m >= 60 ? [{ mode: "everyHour", minute: 0 }] : [{ mode: "everyX", value: m, unit: "minutes" }])' +
	`(Math.round(Number(($parameter.options || {}).watchEvery ?? ${DEFAULT_WATCH_MINUTES})) || 0) }}`;

/**
 * Whether this poll starts the watch: the first poll of an activation, which n8n makes when it
 * activates the workflow (n8n starts, or it is published). It starts the watch's memory; that poll is
 * the check at the start (catchUp.ts `startCheck`), and every later one a look (`lookAtService`).
 */
export function startsWatch(ctx: IPollFunctions): boolean {
	const staticData = ctx.getWorkflowStaticData('node');
	if (memories.has(staticData)) return false;
	const memory: Memory = { activatedAt: transportClock().now() };
	const renewed = productionRecord(staticData)?.record.renewed;
	if (renewed) memory.renewed = renewed;
	memories.set(staticData, memory);
	return true;
}

/**
 * One look of the watch (a poll after the first): the check to run, or null (no execution); throws
 * what the user must know (the trigger's error).
 */
export async function lookAtService(ctx: IPollFunctions): Promise<INodeExecutionData[][] | null> {
	const staticData = ctx.getWorkflowStaticData('node');
	const memory = memories.get(staticData);
	if (!memory) return null;
	// n8n gives overlapping polls of one workflow one isolate and releases it when the first of them
	// ends: a poll that finds a look under way waits for it and looks no more itself
	if (memory.looking) {
		await memory.looking.catch(() => undefined);
		return null;
	}
	const looking = lookAndAct(ctx, staticData, memory);
	memory.looking = looking;
	try {
		return await looking;
	} finally {
		delete memory.looking;
	}
}

/** One look of the watch: read the service's record, judge it, act. */
async function lookAndAct(
	ctx: IPollFunctions,
	staticData: IDataObject,
	memory: Memory,
): Promise<INodeExecutionData[][] | null> {
	const options = ctx.getNodeParameter('options', {}) as { watchEvery?: unknown };
	if (watchMinutes(options) === 0) return null;
	const notice = takeDisabledNotice(staticData);
	if (notice) return [[{ json: checkItem(staticData, 'enabled-again', notice) }]];
	const production = productionRecord(staticData);
	if (!production) return null;
	const { url, record } = production;
	const now = transportClock().now();
	// a renewal a day old no longer says that a new secret does not help
	if (memory.renewed && now - memory.renewed.at > RENEWAL_HOLDS_MS) delete memory.renewed;

	let found: Look;
	try {
		found = await readEndpointAndDeliveries(ctx, record.endpointId, memory.judgedUpTo);
		delete memory.failingSince;
	} catch (error) {
		const failure = readFailure(error);
		ctx.logger.warn(`Marketplace Trigger's watch could not read the service: ${failure.message}`);
		if (failure.status === 401 || failure.status === 403)
			throw keyRefused(ctx, failure.status, failure.message);
		if (isTransient(failure) || failure.status === undefined) {
			memory.failingSince ??= now;
			if (now - memory.failingSince >= WATCH_GIVES_UP_MS) {
				delete memory.failingSince;
				throw unreachable(ctx, failure.message);
			}
		}
		return null;
	}
	const { action, judgedUpTo } = judgeLook(found, memory);
	if (judgedUpTo !== undefined) memory.judgedUpTo = judgedUpTo;
	const check = await act(ctx, action, { url, record, memory });
	return check ? [[{ json: check }]] : null;
}

/** Does what a look called for; returns the check to run, if any. */
async function act(
	ctx: IPollFunctions,
	action: WatchAction,
	at: { url: string; record: EndpointRecord; memory: WatchMemory },
): Promise<IDataObject | undefined> {
	const { url, record, memory } = at;
	const staticData = ctx.getWorkflowStaticData('node');
	const now = transportClock().now();
	switch (action.kind) {
		case 'none':
			return undefined;
		case 'check':
			// without the catch-up there is nothing to run: the service retries the delivery itself
			return catchUpApplies(parameterOf(ctx))
				? checkItem(staticData, 'missed-delivery')
				: undefined;
		case 'renewSecret': {
			const secret = await rotateSecret(ctx, record.endpointId, WATCH_TRANSPORT);
			memory.renewed = { at: now, afterDeliveryId: memory.judgedUpTo ?? 0 };
			writeRecord(staticData, url, {
				...withNewSecret(record, record.endpointId, secret, now),
				renewed: memory.renewed,
			});
			ctx.logger.warn(
				`Marketplace Trigger: the service's deliveries were refused (401), so the signing secret of endpoint ${record.endpointId} was rotated elsewhere; the trigger took a new one`,
			);
			// the check's emit saves the static data (the new secret) before its run
			return checkItem(staticData, 'new-secret');
		}
		case 'refusedAfterRenewal':
			throw new NodeOperationError(
				ctx.getNode(),
				"The Marketplace service's deliveries to this trigger are refused (HTTP 401) although the trigger took a new signing secret: something changes them on the way (a proxy that rewrites the request body or its headers), or this n8n's clock is more than 5 minutes off. Fix that, then publish the workflow again; the service retries each delivery for about 42 hours, and orders missed meanwhile are caught up.",
			);
		case 'enable': {
			await apiRequest.call(
				ctx,
				{
					route: 'updateWebhookEndpoint',
					pathParams: { id: record.endpointId },
					body: { status: 'Enabled' },
					idempotencyKey: newIdempotencyKey(),
				},
				WATCH_TRANSPORT,
			);
			return checkItem(staticData, 'enabled-again', disabledNotice(action.disabledSince, now));
		}
		case 'register': {
			const { endpoint, secret } = await registerEndpoint(ctx, url);
			writeRecord(staticData, url, { endpointId: endpoint.id, secret, production: true });
			memory.judgedUpTo = undefined;
			memory.activatedAt = now;
			ctx.logger.warn(
				`Marketplace Trigger: webhook endpoint ${record.endpointId} was gone at the service; registered ${url} again as endpoint ${endpoint.id}`,
			);
			return checkItem(staticData, 'registered-again');
		}
	}
}

function keyRefused(ctx: IPollFunctions, status: number, detail: string): NodeApiError {
	const message =
		status === 401
			? "The Marketplace service refuses the API key of this trigger's credential (401: missing, unknown or revoked). Put a valid key into the credential; until then missed orders and refused deliveries are not looked after."
			: "The API key of this trigger's credential lacks a permission the trigger needs (403): reading its webhook endpoint and deliveries, and orders.read. Give the key those permissions.";
	return nodeApiError(ctx.getNode(), { message: detail } as JsonObject, {
		message,
		httpCode: String(status),
	});
}

function unreachable(ctx: IPollFunctions, detail: string): NodeApiError {
	return nodeApiError(ctx.getNode(), { message: detail } as JsonObject, {
		message: `The Marketplace service has not answered this trigger for ${WATCH_GIVES_UP_MS / 60_000} minutes (${detail}). Deliveries and missed orders are not looked after meanwhile; n8n tries the trigger again.`,
	});
}

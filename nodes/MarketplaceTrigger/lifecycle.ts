/**
 * webhookMethods.default of the Marketplace Trigger: register, find and remove the webhook endpoint
 * for this node's webhook URL. The node file calls these; each throws
 * NodeApiError / NodeOperationError with a message a workflow builder can act on.
 */
import type { IDataObject, IHookFunctions, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { normaliseEventTypes } from '../shared/routes';
import { readAll } from '../shared/transport/pagination';
import { transportClock } from '../shared/transport/clock';
import { apiRequest, newIdempotencyKey, type TransportSettings } from '../shared/transport/request';
import {
	errorObjectOf,
	isTransient,
	nodeApiError,
	readFailure,
} from '../shared/transport/transportErrors';
import { endSampleDelivery, startSampleDelivery } from './listening';
import type { TriggerProcess } from './memory';
import { checkReachability } from './reachability';
import { rotateSecret, secretOf, withNewSecret } from './secrets';
import {
	EndpointStore,
	type EndpointRecord,
	type MissedEventsNotice,
	type MissedWindow,
} from './store';

/** The service lets a user own at most 10 webhook endpoints. */
export const MAX_ENDPOINTS = 10;

export const DEFAULT_ENDPOINT_DESCRIPTION = 'n8n Marketplace Trigger';

/**
 * Lifecycle requests retry a little but not for long: n8n itself retries a failing
 * checkExists/create up to 5 times and a failing delete 3 times.
 */
export const LIFECYCLE_TRANSPORT: TransportSettings = {
	timeoutMs: 15_000,
	retry: { maxAttempts: 3, baseDelayMs: 500, maxDelayMs: 5_000 },
};

interface RemoteEndpoint {
	id: number;
	url: string;
	description?: string;
	eventTypes: string[];
	status: string;
	disabledReason?: string | null;
	createdAt?: string;
	updatedAt?: string;
}

interface TriggerOptions {
	rotateSecretOnActivation?: boolean;
}

/** The static data of the endpoint at `url`, with this process's memory of it (n8n saves it when the hook returns). */
function storeOf(ctx: IHookFunctions, triggerProcess: TriggerProcess, url: string): EndpointStore {
	const memory = triggerProcess.memoryOf(ctx.getWorkflow().id ?? '', url);
	return EndpointStore.read(ctx.getWorkflowStaticData('node'), url, memory);
}

/** True when two lists name the same event types (order and repeats ignored). */
function sameEventTypes(a: readonly string[], b: readonly string[]): boolean {
	const left = new Set(a);
	const right = new Set(b);
	return left.size === right.size && [...left].every((type) => right.has(type));
}

/**
 * The service disables an endpoint after 5 days without a successful delivery; events of those
 * days, and of up to the whole retry schedule before them, were never delivered.
 */
export const UNDELIVERED_BEFORE_DISABLING_MS = (5 * 24 + 42) * 3_600_000;

/**
 * The notice for the first event after a Disabled endpoint was re-enabled or replaced at `nowMs`,
 * when the service says it works again at `worksAgainAt` (its own clock; `nowMs` if it did not say).
 */
export function missedEventsNotice(
	window: MissedWindow,
	nowMs: number,
	worksAgainAt?: string,
): MissedEventsNotice {
	const since = window.disabledSince ? Date.parse(window.disabledSince) : NaN;
	const missedFrom = Number.isFinite(since)
		? new Date(since - UNDELIVERED_BEFORE_DISABLING_MS).toISOString()
		: null;
	const missedUntil = new Date(nowMs).toISOString();
	const works =
		worksAgainAt !== undefined && Number.isFinite(Date.parse(worksAgainAt))
			? worksAgainAt
			: missedUntil;
	return {
		reEnabledAt: missedUntil,
		disabledSince: window.disabledSince,
		disabledReason: window.disabledReason,
		missedFrom,
		missedUntil,
		worksAgainAt: works,
		message:
			`Webhook endpoint ${window.endpointId} was Disabled (${window.disabledReason ?? 'by a user'}` +
			`${window.disabledSince ? ` since about ${window.disabledSince}` : ''}). The service does not resend events it could not deliver: ` +
			`events created ${missedFrom ? `from ${missedFrom} ` : ''}until ${missedUntil} may be missing. With Catch Up Missed Orders on and ` +
			'Order Created among the event types, the trigger brings the orders created meanwhile; cancellations, returns and brand health changes of that window are not recovered ' +
			'(read them with the Marketplace node).',
	};
}

/**
 * The cursor on activation, when none is kept: `since`, when the endpoint was made (the service's
 * clock) or, for an endpoint found already registered, now (orders before it may have run without
 * their keys kept). A cursor kept from an earlier activation stays, so a workflow published again
 * picks up the orders created while it was unpublished, as the polling trigger does. With the option
 * off there is no cursor, so turning it on again starts then.
 */
function startCatchUp(ctx: IHookFunctions, store: EndpointStore, since: number): void {
	const options = ctx.getNodeParameter('options', {}) as { catchUpMissedOrders?: boolean };
	if (ctx.getMode() === 'manual') return;
	if (options.catchUpMissedOrders === false) return store.setCursor(undefined);
	if (store.cursor === undefined && Number.isFinite(since)) store.setCursor(since);
}

function webhookUrlOf(ctx: IHookFunctions): string {
	const url = ctx.getNodeWebhookUrl('default');
	if (!url) throw new NodeOperationError(ctx.getNode(), 'n8n gave this node no webhook URL');
	return url;
}

function wantedEventTypes(ctx: IHookFunctions): string[] {
	const types = normaliseEventTypes(ctx.getNodeParameter('eventTypes', []));
	if (types.length === 0) {
		throw new NodeOperationError(ctx.getNode(), 'Choose at least one event type to listen for', {
			description:
				'webhook.test deliveries cannot be subscribed to; they arrive whatever you choose.',
		});
	}
	return types;
}

function wantedDescription(ctx: IHookFunctions): string {
	const text = String(
		ctx.getNodeParameter('description', DEFAULT_ENDPOINT_DESCRIPTION) ?? '',
	).trim();
	return (text || DEFAULT_ENDPOINT_DESCRIPTION).slice(0, 500);
}

function toRemote(record: IDataObject): RemoteEndpoint | undefined {
	if (typeof record.id !== 'number' || typeof record.url !== 'string') return undefined;
	return {
		id: record.id,
		url: record.url,
		description: typeof record.description === 'string' ? record.description : undefined,
		eventTypes: Array.isArray(record.eventTypes) ? record.eventTypes.map(String) : [],
		status: String(record.status ?? ''),
		disabledReason: typeof record.disabledReason === 'string' ? record.disabledReason : null,
		createdAt: typeof record.createdAt === 'string' ? record.createdAt : undefined,
		updatedAt: typeof record.updatedAt === 'string' ? record.updatedAt : undefined,
	};
}

async function listEndpoints(ctx: IHookFunctions): Promise<RemoteEndpoint[]> {
	const records = await readAll.call(ctx, {
		route: 'listWebhookEndpoints',
		returnAll: true,
		settings: LIFECYCLE_TRANSPORT,
	});
	return records.map(toRemote).filter((e): e is RemoteEndpoint => e !== undefined);
}

function disabledWindow(endpoint: RemoteEndpoint): MissedWindow {
	return {
		endpointId: endpoint.id,
		disabledSince: endpoint.updatedAt ?? null,
		disabledReason: endpoint.disabledReason ?? null,
	};
}

/** The endpoint in an update or create answer (`{ webhookEndpoint }` or the endpoint itself). */
function endpointIn(body: unknown): RemoteEndpoint | undefined {
	if (!body || typeof body !== 'object') return undefined;
	const outer = body as IDataObject;
	return toRemote((outer.webhookEndpoint ?? outer) as IDataObject);
}

/**
 * checkExists: lists the user's endpoints and matches by URL (the stored id alone is never
 * trusted, nothing is deleted). A match is brought in line: event types and description updated,
 * a Disabled endpoint re-enabled (with a warning that missed events are not resent), and a secret
 * obtained by rotation when none is held for it.
 */
export async function checkEndpointExists(
	ctx: IHookFunctions,
	triggerProcess: TriggerProcess,
): Promise<boolean> {
	const url = webhookUrlOf(ctx);
	const eventTypes = wantedEventTypes(ctx);
	const description = wantedDescription(ctx);
	const options = ctx.getNodeParameter('options', {}) as TriggerOptions;
	const store = storeOf(ctx, triggerProcess, url);
	const stored = store.record;

	const matches = (await listEndpoints(ctx)).filter((e) => e.url === url);
	if (matches.length === 0) {
		// gone (deleted elsewhere, or never created): create() registers a new one
		store.clearRecord();
		store.writeBack(transportClock().now());
		return false;
	}
	const endpoint = matches.find((e) => e.id === stored?.endpointId) ?? matches[0];

	const patch: IDataObject = {};
	if (!sameEventTypes(endpoint.eventTypes, eventTypes)) patch.eventTypes = eventTypes;
	if (endpoint.description !== undefined && endpoint.description !== description)
		patch.description = description;
	const reEnable = endpoint.status === 'Disabled';
	if (reEnable) patch.status = 'Enabled';
	let updated: RemoteEndpoint | undefined;
	if (Object.keys(patch).length > 0) {
		const answer = await apiRequest.call(
			ctx,
			{
				route: 'updateWebhookEndpoint',
				pathParams: { id: endpoint.id },
				body: patch,
				idempotencyKey: newIdempotencyKey(),
			},
			LIFECYCLE_TRANSPORT,
		);
		updated = endpointIn(answer.body);
	}

	const now = transportClock().now();
	let record: EndpointRecord =
		stored && stored.endpointId === endpoint.id
			? { ...stored, eventTypes }
			: { endpointId: endpoint.id, eventTypes };
	// Before a rotation: the test delivery is signed with the secret n8n holds (or refused for none),
	// never with a new one n8n has not saved yet, which webhook() would take for a rotation elsewhere.
	await duringActivation(triggerProcess, url, async () => {
		await checkReachability(ctx, endpoint.id, url, triggerProcess.settings);
	});
	if (!record.secret || options.rotateSecretOnActivation === true) {
		// without a secret held, the previous one (which the service also signs with for 24 hours) is unknown here:
		// its signature on the next deliveries is expected, not a rotation elsewhere
		const unknownPrevious = !record.secret;
		record = withNewSecret(record, await rotateSecret(ctx, endpoint.id, LIFECYCLE_TRANSPORT), now);
		if (unknownPrevious) record.recoveredAt = now;
	}
	if (reEnable) {
		record.missedEvents = missedEventsNotice(disabledWindow(endpoint), now, updated?.updatedAt);
		ctx.logger.warn(record.missedEvents.message, { endpointId: endpoint.id, url });
	}
	store.record = record;
	store.recordChanged();
	startCatchUp(ctx, store, now);
	store.writeBack(now);
	if (ctx.getMode() === 'manual') startSampleDelivery(ctx, triggerProcess, endpoint.id, url);
	else tellTriggerWhereToCheck(ctx, triggerProcess, url, endpoint.id);
	return true;
}

function endpointListText(endpoints: RemoteEndpoint[]): string {
	return endpoints
		.map((e) => `#${e.id} ${e.url}${e.description ? ` (${e.description})` : ''} [${e.status}]`)
		.join('; ');
}

/**
 * Turns a refused create into a message that says what to do. The service names no error type for
 * the 10-endpoint limit, so the limit is detected by listing the endpoints after the refusal.
 */
async function explainCreateRefusal(
	ctx: IHookFunctions,
	error: unknown,
	url: string,
): Promise<NodeApiError | undefined> {
	const failure = readFailure(error);
	if (failure.status === undefined || isTransient(failure)) return undefined;
	if (failure.status === 401 || failure.status === 403) return undefined;
	const urlProblem = failure.pointers.find((p) => p.pointer === '/url');
	if (failure.status === 400 && urlProblem) {
		return nodeApiError(ctx.getNode(), errorObjectOf(error), {
			// n8n shows only the message in the activation toast and the publication status: the fix goes here
			message:
				`The service refused this node's webhook URL ${url} (${urlProblem.detail || 'not acceptable'}). ` +
				'Set N8N_WEBHOOK_URL to the public https address of this n8n (on n8n 1.x: WEBHOOK_URL) and restart it, or use the Marketplace Polling Trigger',
			description:
				'The Marketplace service only delivers to public https addresses. n8n builds this URL from its ' +
				'N8N_WEBHOOK_URL environment variable (WEBHOOK_URL in older versions): set it to the public https ' +
				'address n8n is reachable at (for example https://n8n.example.com/ behind a reverse proxy or tunnel), ' +
				'restart n8n and activate the workflow again.',
			httpCode: String(failure.status),
		});
	}
	let endpoints: RemoteEndpoint[];
	try {
		endpoints = await listEndpoints(ctx);
	} catch (listError) {
		// the listing is only an explanation; the create error is the one to report
		ctx.logger.warn(
			`Could not list webhook endpoints after a refused create: ${readFailure(listError).message}`,
		);
		return undefined;
	}
	if (endpoints.length < MAX_ENDPOINTS) return undefined;
	return nodeApiError(ctx.getNode(), errorObjectOf(error), {
		message:
			`You already own ${endpoints.length} webhook endpoints, the most the Marketplace service allows (${MAX_ENDPOINTS}): ` +
			'delete one you no longer use (Marketplace node, Webhook Endpoint > Delete) or deactivate another workflow with a Marketplace Trigger',
		description:
			'Free one, then activate this workflow again: delete an endpoint you no longer use with the Marketplace ' +
			'node (Webhook Endpoint > Delete; Webhook Endpoint > Get Many lists them), or deactivate another workflow ' +
			`that uses a Marketplace Trigger (it deletes its endpoint). Your endpoints: ${endpointListText(endpoints)}`,
		httpCode: String(failure.status),
	});
}

/** create: registers the webhook URL with the chosen event types; keeps id and secret. */
export async function createEndpoint(
	ctx: IHookFunctions,
	triggerProcess: TriggerProcess,
): Promise<boolean> {
	const url = webhookUrlOf(ctx);
	const eventTypes = wantedEventTypes(ctx);
	const body: IDataObject = { url, description: wantedDescription(ctx), eventTypes };
	let response: { body: unknown };
	try {
		response = await apiRequest.call(
			ctx,
			{
				route: 'createWebhookEndpoint',
				body,
				idempotencyKey: newIdempotencyKey(),
				// After a 5xx the endpoint may exist (the key is released, a retry would make a second
				// one). checkExists found none at this URL before, so one there now is ours: adopt it and
				// rotate for the secret the lost answer held.
				reconcile: async () => {
					const mine = (await listEndpoints(ctx)).find((e) => e.url === url);
					if (!mine) return undefined;
					const secret = await rotateSecret(ctx, mine.id, LIFECYCLE_TRANSPORT);
					return { webhookEndpoint: { ...mine }, secret };
				},
			},
			LIFECYCLE_TRANSPORT,
		);
	} catch (error) {
		const explained = await explainCreateRefusal(ctx, error, url);
		throw explained ?? new NodeApiError(ctx.getNode(), error as JsonObject);
	}
	const created = response.body as IDataObject;
	const endpoint = toRemote((created.webhookEndpoint ?? created) as IDataObject);
	const secret = secretOf(created);
	if (!endpoint || !secret) {
		throw new NodeOperationError(
			ctx.getNode(),
			'Creating the webhook endpoint returned no endpoint id or secret',
		);
	}
	const store = storeOf(ctx, triggerProcess, url);
	const now = transportClock().now();
	const record: EndpointRecord = { endpointId: endpoint.id, secret, secretAt: now, eventTypes };
	// the endpoint this one replaces had been disabled by the service: events were missed
	if (store.missed) {
		record.missedEvents = missedEventsNotice(store.missed, now, endpoint.createdAt);
		ctx.logger.warn(record.missedEvents.message, { endpointId: endpoint.id, url });
		store.setMissed(undefined);
	}
	store.record = record;
	store.recordChanged();
	startCatchUp(ctx, store, endpoint.createdAt ? Date.parse(endpoint.createdAt) : now);
	store.writeBack(now);
	// not reached: the endpoint is of no use, and n8n's retry (or the next listening) creates it again
	await duringActivation(triggerProcess, url, async () => {
		await checkReachability(
			ctx,
			endpoint.id,
			url,
			triggerProcess.settings,
			async () => await removeUnreached(ctx, triggerProcess, endpoint.id, url),
		);
	});
	if (ctx.getMode() === 'manual') startSampleDelivery(ctx, triggerProcess, endpoint.id, url);
	else tellTriggerWhereToCheck(ctx, triggerProcess, url, endpoint.id);
	return true;
}

/** Deletes an endpoint create() made when the service could not reach it; a failure is only logged. */
async function removeUnreached(
	ctx: IHookFunctions,
	triggerProcess: TriggerProcess,
	endpointId: number,
	url: string,
): Promise<void> {
	try {
		await apiRequest.call(
			ctx,
			{
				route: 'deleteWebhookEndpoint',
				pathParams: { id: endpointId },
				idempotencyKey: newIdempotencyKey(),
			},
			LIFECYCLE_TRANSPORT,
		);
		const store = storeOf(ctx, triggerProcess, url);
		store.clearRecord();
		store.writeBack(transportClock().now());
	} catch (error) {
		ctx.logger.warn(
			`Could not delete webhook endpoint ${endpointId} (${url}) after the reachability check failed: ${readFailure(error).message}`,
		);
	}
}

/**
 * delete: removes the endpoint(s) registered for this node's URL, and only those. A 404 (already
 * gone) counts as deleted; any other failure is thrown so n8n reports it. This process forgets the
 * endpoint, after writing what it knows of it into the static data n8n saves after the hook.
 */
export async function deleteEndpoint(
	ctx: IHookFunctions,
	triggerProcess: TriggerProcess,
): Promise<boolean> {
	const url = webhookUrlOf(ctx);
	const workflowId = ctx.getWorkflow().id ?? '';
	// with what this process knows of the endpoint (its keys, its cursor): the last save it makes
	const store = storeOf(ctx, triggerProcess, url);
	const stored = store.record;
	const mine = (await listEndpoints(ctx)).filter((e) => e.url === url);
	const ids = new Set(mine.map((e) => e.id));
	for (const id of [...ids, ...(stored ? [stored.endpointId] : [])])
		await endSampleDelivery(triggerProcess, id);
	// Deleting a Disabled endpoint would lose the only trace that events were missed: keep it for
	// the endpoint the next activation creates.
	const disabled = mine.find((e) => e.status === 'Disabled');
	if (disabled) store.setMissed(disabledWindow(disabled));
	// The stored id is deleted only when the service still shows it at this URL.
	for (const id of ids) {
		try {
			await apiRequest.call(
				ctx,
				{
					route: 'deleteWebhookEndpoint',
					pathParams: { id },
					idempotencyKey: newIdempotencyKey(),
				},
				LIFECYCLE_TRANSPORT,
			);
		} catch (error) {
			const failure = readFailure(error);
			if (failure.status === 404) {
				ctx.logger.info(`Webhook endpoint ${id} was already gone`);
				continue;
			}
			throw nodeApiError(ctx.getNode(), errorObjectOf(error), {
				httpCode: failure.status === undefined ? undefined : String(failure.status),
				message: `Could not delete webhook endpoint ${id} (${url}): ${failure.message}`,
			});
		}
	}
	if (stored && !ids.has(stored.endpointId)) {
		ctx.logger.info(
			`Webhook endpoint ${stored.endpointId} no longer exists at ${url}; nothing to delete`,
		);
	}
	store.clearRecord();
	triggerProcess.forget(workflowId, url);
	if (ctx.getMode() !== 'manual') triggerProcess.activeEndpoints.delete(workflowId);
	store.writeBack(transportClock().now());
	return true;
}

/**
 * Runs the activation's reachability check: its test delivery must not catch up (receive.ts), since
 * n8n saves this hook's copy of the static data after the hook, over what that request would save.
 */
async function duringActivation(
	triggerProcess: TriggerProcess,
	url: string,
	check: () => Promise<void>,
) {
	triggerProcess.activating.add(url);
	try {
		await check();
	} finally {
		triggerProcess.activating.delete(url);
	}
}

/** Where trigger() of this workflow checks for missed orders (n8n runs it after the hooks, in the same process). */
function tellTriggerWhereToCheck(
	ctx: IHookFunctions,
	triggerProcess: TriggerProcess,
	url: string,
	endpointId: number,
) {
	triggerProcess.activeEndpoints.set(ctx.getWorkflow().id ?? '', { url, endpointId });
}

/**
 * Refuses a workflow set to Engine 2.0 (n8n's opt-in engine, workflow setting `engineType: 'v2'`):
 * that engine refuses every webhook whose run answers the request ('responseNode', which paces the
 * service to what n8n can start), before webhook() runs, so every delivery would get HTTP 400.
 */
function refuseEngineV2(ctx: IHookFunctions): void {
	const settings = typeof ctx.getWorkflowSettings === 'function' ? ctx.getWorkflowSettings() : {};
	if ((settings as { engineType?: string }).engineType !== 'v2') return;
	throw new NodeOperationError(
		ctx.getNode(),
		"This workflow is set to n8n's Engine 2.0 (workflow setting engineType 'v2'), which refuses every Marketplace Trigger delivery before the trigger sees it. Set the workflow's engineType back to 'v1' (or remove it) and publish again.",
	);
}

/** webhookMethods.default of the node: each hook with this process's part of the trigger. */
export function webhookMethodsOf(getTriggerProcess: () => TriggerProcess) {
	return {
		default: {
			async checkExists(this: IHookFunctions): Promise<boolean> {
				refuseEngineV2(this);
				return await checkEndpointExists(this, getTriggerProcess());
			},
			async create(this: IHookFunctions): Promise<boolean> {
				refuseEngineV2(this);
				return await createEndpoint(this, getTriggerProcess());
			},
			async delete(this: IHookFunctions): Promise<boolean> {
				return await deleteEndpoint(this, getTriggerProcess());
			},
		},
	};
}

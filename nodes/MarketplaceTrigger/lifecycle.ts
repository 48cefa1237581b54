/**
 * webhookMethods.default of the Marketplace Trigger: register, find and remove the webhook endpoint
 * for this node's webhook URL. The node file calls these; each throws
 * NodeApiError / NodeOperationError with a message a workflow builder can act on.
 */
import type { IDataObject, IHookFunctions, IWebhookFunctions, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { readAll } from '../shared/transport/pagination';
import { transportClock } from '../shared/transport/clock';
import { apiRequest, newIdempotencyKey, type TransportSettings } from '../shared/transport/request';
import {
	errorObjectOf,
	isTransient,
	nodeApiError,
	readFailure,
} from '../shared/transport/transportErrors';
import { startCatchUp } from './catchUp';
import { normaliseEventTypes, sameEventTypes } from './events';
import { checkReachability } from './reachability';
import { startSampleDelivery } from './sample';
import {
	clearRecord,
	getMissedWindow,
	getRecord,
	missedEventsNotice,
	setMissedWindow,
	setRecord,
	withNewSecret,
	type EndpointRecord,
	type MissedWindow,
} from './state';

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

function nodeData(ctx: IHookFunctions): IDataObject {
	return ctx.getWorkflowStaticData('node');
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

/** The secret of a create or rotate answer: `{ webhookEndpoint, secret }` (read tolerantly). */
function secretOf(body: unknown): string | undefined {
	if (!body || typeof body !== 'object') return undefined;
	const record = body as IDataObject;
	if (typeof record.secret === 'string') return record.secret;
	const inner = record.webhookEndpoint as IDataObject | undefined;
	return inner && typeof inner.secret === 'string' ? inner.secret : undefined;
}

/** Rotates the endpoint's signing secret and returns the new one (the service shows it only here). */
export async function rotateSecret(
	ctx: IHookFunctions | IWebhookFunctions,
	endpointId: number,
	settings: TransportSettings = LIFECYCLE_TRANSPORT,
): Promise<string> {
	const { body } = await apiRequest.call(
		ctx,
		{
			route: 'rotateWebhookEndpointSecret',
			pathParams: { id: endpointId },
			idempotencyKey: newIdempotencyKey(),
		},
		settings,
	);
	const secret = secretOf(body);
	if (!secret) {
		throw new NodeOperationError(
			ctx.getNode(),
			`Rotating the secret of webhook endpoint ${endpointId} returned no secret`,
		);
	}
	return secret;
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
export async function checkEndpointExists(this: IHookFunctions): Promise<boolean> {
	const url = webhookUrlOf(this);
	const eventTypes = wantedEventTypes(this);
	const description = wantedDescription(this);
	const options = this.getNodeParameter('options', {}) as TriggerOptions;
	const data = nodeData(this);
	const stored = getRecord(data, url);

	const matches = (await listEndpoints(this)).filter((e) => e.url === url);
	if (matches.length === 0) {
		// gone (deleted elsewhere, or never created): create() registers a new one
		clearRecord(data, url);
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
			this,
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
	await checkReachability(this, endpoint.id, url);
	if (!record.secret || options.rotateSecretOnActivation === true) {
		// without a secret held, the previous one (which the service also signs with for 24 hours) is unknown here:
		// its signature on the next deliveries is expected, not a rotation elsewhere
		const unknownPrevious = !record.secret;
		record = withNewSecret(record, await rotateSecret(this, endpoint.id), now);
		if (unknownPrevious) record.recoveredAt = now;
	}
	if (reEnable) {
		record.missedEvents = missedEventsNotice(disabledWindow(endpoint), now, updated?.updatedAt);
		this.logger.warn(record.missedEvents.message, { endpointId: endpoint.id, url });
	}
	setRecord(data, url, record);
	startCatchUp(this, undefined);
	if (this.getMode() === 'manual') startSampleDelivery(this, endpoint.id, url);
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
export async function createEndpoint(this: IHookFunctions): Promise<boolean> {
	const url = webhookUrlOf(this);
	const eventTypes = wantedEventTypes(this);
	const body: IDataObject = { url, description: wantedDescription(this), eventTypes };
	let response: { body: unknown };
	try {
		response = await apiRequest.call(
			this,
			{
				route: 'createWebhookEndpoint',
				body,
				idempotencyKey: newIdempotencyKey(),
				// After a 5xx the endpoint may exist (the key is released, a retry would make a second
				// one). checkExists found none at this URL before, so one there now is ours: adopt it and
				// rotate for the secret the lost answer held.
				reconcile: async () => {
					const mine = (await listEndpoints(this)).find((e) => e.url === url);
					if (!mine) return undefined;
					return { webhookEndpoint: { ...mine }, secret: await rotateSecret(this, mine.id) };
				},
			},
			LIFECYCLE_TRANSPORT,
		);
	} catch (error) {
		const explained = await explainCreateRefusal(this, error, url);
		throw explained ?? new NodeApiError(this.getNode(), error as JsonObject);
	}
	const created = response.body as IDataObject;
	const endpoint = toRemote((created.webhookEndpoint ?? created) as IDataObject);
	const secret = secretOf(created);
	if (!endpoint || !secret) {
		throw new NodeOperationError(
			this.getNode(),
			'Creating the webhook endpoint returned no endpoint id or secret',
		);
	}
	const data = nodeData(this);
	const now = transportClock().now();
	const record: EndpointRecord = { endpointId: endpoint.id, secret, secretAt: now, eventTypes };
	// the endpoint this one replaces had been disabled by the service: events were missed
	const missed = getMissedWindow(data, url);
	if (missed) {
		record.missedEvents = missedEventsNotice(missed, now, endpoint.createdAt);
		this.logger.warn(record.missedEvents.message, { endpointId: endpoint.id, url });
		setMissedWindow(data, url, undefined);
	}
	setRecord(data, url, record);
	startCatchUp(this, endpoint.createdAt);
	// not reached: the endpoint is of no use, and n8n's retry (or the next listening) creates it again
	await checkReachability(
		this,
		endpoint.id,
		url,
		async () => await removeUnreached(this, endpoint.id, url),
	);
	if (this.getMode() === 'manual') startSampleDelivery(this, endpoint.id, url);
	return true;
}

/** Deletes an endpoint create() made when the service could not reach it; a failure is only logged. */
async function removeUnreached(
	ctx: IHookFunctions,
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
		clearRecord(nodeData(ctx), url);
	} catch (error) {
		ctx.logger.warn(
			`Could not delete webhook endpoint ${endpointId} (${url}) after the reachability check failed: ${readFailure(error).message}`,
		);
	}
}

/**
 * delete: removes the endpoint(s) registered for this node's URL, and only those. A 404 (already
 * gone) counts as deleted; any other failure is thrown so n8n reports it.
 */
export async function deleteEndpoint(this: IHookFunctions): Promise<boolean> {
	const url = webhookUrlOf(this);
	const data = nodeData(this);
	const stored = getRecord(data, url);
	const mine = (await listEndpoints(this)).filter((e) => e.url === url);
	const ids = new Set(mine.map((e) => e.id));
	// Deleting a Disabled endpoint would lose the only trace that events were missed: keep it for
	// the endpoint the next activation creates.
	const disabled = mine.find((e) => e.status === 'Disabled');
	if (disabled) setMissedWindow(data, url, disabledWindow(disabled));
	// The stored id is deleted only when the service still shows it at this URL.
	for (const id of ids) {
		try {
			await apiRequest.call(
				this,
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
				this.logger.info(`Webhook endpoint ${id} was already gone`);
				continue;
			}
			throw nodeApiError(this.getNode(), errorObjectOf(error), {
				httpCode: failure.status === undefined ? undefined : String(failure.status),
				message: `Could not delete webhook endpoint ${id} (${url}): ${failure.message}`,
			});
		}
	}
	if (stored && !ids.has(stored.endpointId)) {
		this.logger.info(
			`Webhook endpoint ${stored.endpointId} no longer exists at ${url}; nothing to delete`,
		);
	}
	clearRecord(data, url);
	return true;
}

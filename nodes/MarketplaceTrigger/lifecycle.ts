/**
 * webhookMethods.default of the Marketplace Trigger: register, find and remove the webhook endpoint
 * for this node's webhook URL, and keep its id and signing secret in the static data (secrets.ts).
 * Each throws NodeApiError / NodeOperationError with a message a workflow builder can act on; n8n
 * shows the message in the activation error and retries a failing checkExists/create itself.
 */
import type { IDataObject, IHookFunctions, IPollFunctions, JsonObject } from 'n8n-workflow';
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
import { checkReachability } from './reachability';
import {
	readRecord,
	RENEWAL_HOLDS_MS,
	rotateSecret,
	secretOf,
	withNewSecret,
	writeRecord,
	type EndpointRecord,
} from './secrets';

/** The service lets a user own at most 10 webhook endpoints. */
export const MAX_ENDPOINTS = 10;

export const DEFAULT_ENDPOINT_DESCRIPTION = 'n8n Marketplace Trigger';

/** Ends the description of the endpoint of "Listen for test event", so Webhook Endpoint > Test lists it by name. */
export const LISTENING_SUFFIX = ' (listening for a test event)';

type EndpointContext = IHookFunctions | IPollFunctions;

/**
 * Lifecycle requests retry a little but not for long: n8n itself retries a failing
 * checkExists/create up to 5 times and a failing delete 3 times.
 */
const LIFECYCLE_TRANSPORT: TransportSettings = {
	timeoutMs: 15_000,
	retry: { maxAttempts: 3, baseDelayMs: 500, maxDelayMs: 5_000 },
};

interface RemoteEndpoint {
	id: number;
	url: string;
	description?: string;
	eventTypes: string[];
	status: string;
	createdAt?: string;
	updatedAt?: string;
}

/** True when two lists name the same event types (order and repeats ignored). */
function sameEventTypes(a: readonly string[], b: readonly string[]): boolean {
	const left = new Set(a);
	const right = new Set(b);
	return left.size === right.size && [...left].every((type) => right.has(type));
}

function webhookUrlOf(ctx: IHookFunctions): string {
	const url = ctx.getNodeWebhookUrl('default');
	if (!url) throw new NodeOperationError(ctx.getNode(), 'n8n gave this node no webhook URL');
	return url;
}

function wantedEventTypes(ctx: EndpointContext): string[] {
	const types = normaliseEventTypes(ctx.getNodeParameter('eventTypes', []));
	if (types.length === 0) {
		throw new NodeOperationError(ctx.getNode(), 'Choose at least one event type to listen for', {
			description:
				'webhook.test deliveries cannot be subscribed to; they arrive whatever you choose.',
		});
	}
	return types;
}

function wantedDescription(ctx: EndpointContext): string {
	const text = String(
		ctx.getNodeParameter('description', DEFAULT_ENDPOINT_DESCRIPTION) ?? '',
	).trim();
	const suffix = ctx.getMode() === 'manual' ? LISTENING_SUFFIX : '';
	return (text || DEFAULT_ENDPOINT_DESCRIPTION).slice(0, 500 - suffix.length) + suffix;
}

function toRemote(record: IDataObject): RemoteEndpoint | undefined {
	if (typeof record.id !== 'number' || typeof record.url !== 'string') return undefined;
	return {
		id: record.id,
		url: record.url,
		description: typeof record.description === 'string' ? record.description : undefined,
		eventTypes: Array.isArray(record.eventTypes) ? record.eventTypes.map(String) : [],
		status: String(record.status ?? ''),
		createdAt: typeof record.createdAt === 'string' ? record.createdAt : undefined,
		updatedAt: typeof record.updatedAt === 'string' ? record.updatedAt : undefined,
	};
}

async function listEndpoints(ctx: EndpointContext): Promise<RemoteEndpoint[]> {
	const records = await readAll.call(ctx, {
		route: 'listWebhookEndpoints',
		returnAll: true,
		settings: LIFECYCLE_TRANSPORT,
	});
	return records.map(toRemote).filter((e): e is RemoteEndpoint => e !== undefined);
}

/**
 * checkExists: lists the user's endpoints and matches by URL (the stored id alone is never trusted,
 * nothing is deleted). A match is brought in line: event types and description updated, a Disabled
 * endpoint re-enabled, and a new secret obtained by rotation when none is held for it (or the option
 * asks for one). The service must reach the URL (reachability.ts).
 */
export async function checkEndpointExists(ctx: IHookFunctions): Promise<boolean> {
	const url = webhookUrlOf(ctx);
	const eventTypes = wantedEventTypes(ctx);
	const description = wantedDescription(ctx);
	const options = ctx.getNodeParameter('options', {}) as { rotateSecretOnActivation?: boolean };
	const staticData = ctx.getWorkflowStaticData('node');
	const stored = readRecord(staticData, url);

	const matches = (await listEndpoints(ctx)).filter((e) => e.url === url);
	if (matches.length === 0) {
		// gone (deleted elsewhere, or never created): create() registers a new one
		writeRecord(staticData, url, undefined);
		return false;
	}
	const endpoint = matches.find((e) => e.id === stored?.endpointId) ?? matches[0];

	const patch: IDataObject = {};
	if (!sameEventTypes(endpoint.eventTypes, eventTypes)) patch.eventTypes = eventTypes;
	if (endpoint.description !== undefined && endpoint.description !== description)
		patch.description = description;
	let disabledPeriod: EndpointRecord['disabledPeriod'];
	if (endpoint.status === 'Disabled') {
		patch.status = 'Enabled';
		disabledPeriod = {
			from: endpoint.updatedAt ?? 'unknown',
			to: new Date(transportClock().now()).toISOString(),
		};
		// the service does not resend what it could not deliver; the check at the start catches up orders only
		ctx.logger.warn(
			`Marketplace Trigger: webhook endpoint ${endpoint.id} was Disabled by the service (no successful delivery for 5 days) and is enabled again. Events of that time are not resent: the trigger's check brings the orders created meanwhile; cancellations, returns and brand health changes of that time are not recovered.`,
			{ endpointId: endpoint.id, url, disabledSince: endpoint.updatedAt },
		);
	}
	if (Object.keys(patch).length > 0) {
		await apiRequest.call(
			ctx,
			{
				route: 'updateWebhookEndpoint',
				pathParams: { id: endpoint.id },
				body: patch,
				idempotencyKey: newIdempotencyKey(),
			},
			LIFECYCLE_TRANSPORT,
		);
	}

	const probe = await checkReachability(ctx, endpoint.id, url);
	const now = transportClock().now();
	const held = stored?.endpointId === endpoint.id ? stored : undefined;
	// 401 to the test delivery while a secret is held: it was rotated elsewhere, so it is replaced
	// (unless the watch took one within the day: then a new one does not help, and the watch said so)
	const refused =
		probe.httpStatus === 401 && now - (held?.renewed?.at ?? -Infinity) > RENEWAL_HOLDS_MS;
	let record = held;
	if (!held || options.rotateSecretOnActivation === true || refused) {
		const secret = await rotateSecret(ctx, endpoint.id, LIFECYCLE_TRANSPORT);
		record = withNewSecret(held, endpoint.id, secret, now);
	}
	writeRecord(staticData, url, {
		...record!,
		production: ctx.getMode() !== 'manual',
		...(disabledPeriod ? { disabledPeriod } : {}),
	});
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

/**
 * Registers `url` with the chosen event types and returns the endpoint and its secret. After a 5xx
 * the endpoint may exist (the key is released, a retry would make a second one); none was at this
 * URL before, so one there now is ours: it is adopted and rotated for the secret the lost answer held.
 */
export async function registerEndpoint(
	ctx: EndpointContext,
	url: string,
): Promise<{ endpoint: RemoteEndpoint; secret: string }> {
	const body: IDataObject = {
		url,
		description: wantedDescription(ctx),
		eventTypes: wantedEventTypes(ctx),
	};
	const response = await apiRequest.call(
		ctx,
		{
			route: 'createWebhookEndpoint',
			body,
			idempotencyKey: newIdempotencyKey(),
			reconcile: async () => {
				const mine = (await listEndpoints(ctx)).find((e) => e.url === url);
				if (!mine) return undefined;
				const secret = await rotateSecret(ctx, mine.id, LIFECYCLE_TRANSPORT);
				return { webhookEndpoint: { ...mine }, secret };
			},
		},
		LIFECYCLE_TRANSPORT,
	);
	const created = response.body as IDataObject;
	const endpoint = toRemote((created.webhookEndpoint ?? created) as IDataObject);
	const secret = secretOf(created);
	if (!endpoint || !secret) {
		throw new NodeOperationError(
			ctx.getNode(),
			'Creating the webhook endpoint returned no endpoint id or secret',
		);
	}
	return { endpoint, secret };
}

/** create: registers the webhook URL with the chosen event types; keeps id and secret. */
export async function createEndpoint(ctx: IHookFunctions): Promise<boolean> {
	const url = webhookUrlOf(ctx);
	let registered: { endpoint: RemoteEndpoint; secret: string };
	try {
		registered = await registerEndpoint(ctx, url);
	} catch (error) {
		throw error instanceof NodeOperationError
			? error
			: ((await explainCreateRefusal(ctx, error, url)) ??
					new NodeApiError(ctx.getNode(), error as JsonObject));
	}
	const { endpoint, secret } = registered;
	const staticData = ctx.getWorkflowStaticData('node');
	writeRecord(staticData, url, {
		endpointId: endpoint.id,
		secret,
		production: ctx.getMode() !== 'manual',
	});
	// not reached: the endpoint is of no use, and n8n's retry (or the next listening) creates it again
	await checkReachability(ctx, endpoint.id, url, async () => {
		await deleteQuietly(ctx, endpoint.id, url);
		writeRecord(staticData, url, undefined);
	});
	return true;
}

/** Deletes an endpoint create() made when the service could not reach it; a failure is only logged. */
async function deleteQuietly(ctx: IHookFunctions, endpointId: number, url: string): Promise<void> {
	try {
		await deleteById(ctx, endpointId);
	} catch (error) {
		ctx.logger.warn(
			`Could not delete webhook endpoint ${endpointId} (${url}) after the reachability check failed: ${readFailure(error).message}`,
		);
	}
}

async function deleteById(ctx: IHookFunctions, id: number): Promise<void> {
	await apiRequest.call(
		ctx,
		{ route: 'deleteWebhookEndpoint', pathParams: { id }, idempotencyKey: newIdempotencyKey() },
		LIFECYCLE_TRANSPORT,
	);
}

/**
 * delete: removes the endpoint(s) registered for this node's URL, and only those. A 404 (already
 * gone) counts as deleted; any other failure is thrown so n8n reports it.
 */
export async function deleteEndpoint(ctx: IHookFunctions): Promise<boolean> {
	const url = webhookUrlOf(ctx);
	const staticData = ctx.getWorkflowStaticData('node');
	for (const { id } of (await listEndpoints(ctx)).filter((e) => e.url === url)) {
		try {
			await deleteById(ctx, id);
		} catch (error) {
			const failure = readFailure(error);
			if (failure.status === 404) continue;
			throw nodeApiError(ctx.getNode(), errorObjectOf(error), {
				httpCode: failure.status === undefined ? undefined : String(failure.status),
				message: `Could not delete webhook endpoint ${id} (${url}): ${failure.message}`,
			});
		}
	}
	writeRecord(staticData, url, undefined);
	return true;
}

/**
 * Refuses a workflow set to Engine 2.0 (n8n's opt-in engine, workflow setting `engineType: 'v2'`):
 * that engine never runs a trigger node's execute(), where each event is made to run once (once.ts).
 */
export function refuseEngineV2(ctx: IHookFunctions): void {
	const settings = typeof ctx.getWorkflowSettings === 'function' ? ctx.getWorkflowSettings() : {};
	if ((settings as { engineType?: string }).engineType !== 'v2') return;
	throw new NodeOperationError(
		ctx.getNode(),
		"This workflow is set to n8n's Engine 2.0 (workflow setting engineType 'v2'), which never runs the Marketplace Trigger's own step that keeps each event to one run. Set the workflow's engineType back to 'v1' (or remove it) and publish again.",
	);
}

import { randomBytes } from 'node:crypto';
import { ROUTES, SUBSCRIBABLE_EVENT_TYPES } from '../../../nodes/shared/routes';
import { checkTarget } from '../addressCheck';
import { type BodySchema, parseJsonObject, validateBody } from '../body';
import { ApiError, invalid, invalidAll } from '../errors';
import type { WebhookEndpoint } from '../model';
import { isPositiveInteger, paginate } from '../query';
import { SECRET_OVERLAP_MS } from '../delivery';
import { deliveryView, endpointView } from '../views';
import { type ApiContext, notFound, ok } from './context';

export const MAX_ENDPOINTS_PER_USER = 10;

const CREATE_SCHEMA: BodySchema = {
	url: { type: 'string', required: true, maxLength: 2048 },
	description: { type: 'string', maxLength: 500 },
	eventTypes: { type: 'stringArray', required: true, minItems: 1, enum: SUBSCRIBABLE_EVENT_TYPES },
};

// The service refuses an empty description on update (\`/description: must not be empty\`).
const UPDATE_SCHEMA: BodySchema = {
	url: { type: 'string', maxLength: 2048 },
	description: { type: 'string', minLength: 1, maxLength: 500 },
	eventTypes: { type: 'stringArray', minItems: 1, enum: SUBSCRIBABLE_EVENT_TYPES },
	status: { type: 'string', enum: ['Enabled', 'Disabled'] },
};

/** `whsec_` + base64 of 32 random bytes (the service allows 24-64). */
export function newSecret(): string {
	return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The caller's own endpoint; another user's or a missing one is 404. */
function ownEndpoint({ state, user, params }: ApiContext): WebhookEndpoint {
	if (!isPositiveInteger(params.id)) throw invalid('/id', 'id must be a positive integer');
	const endpoint = state.store.endpoint(Number(params.id));
	if (!endpoint || endpoint.ownerUserId !== user.id)
		throw notFound(`webhook endpoint ${params.id}`);
	return endpoint;
}

async function checkUrl(ctx: ApiContext, url: string): Promise<void> {
	const check = await checkTarget(url, ctx.state.options.allowHttpLoopback);
	if (!check.ok) throw invalid('/url', check.reason);
}

export async function createWebhookEndpoint(ctx: ApiContext) {
	const { state, user, rawBody, query } = ctx;
	query.allowOnly([]);
	const body = parseJsonObject(rawBody);
	const errors = validateBody(body, CREATE_SCHEMA);
	if (errors.length) throw invalidAll(errors);
	await checkUrl(ctx, body.url as string);
	if (
		state.store.endpoints.filter((e) => e.ownerUserId === user.id).length >= MAX_ENDPOINTS_PER_USER
	) {
		throw new ApiError(
			'conflict',
			`a user may own at most ${MAX_ENDPOINTS_PER_USER} webhook endpoints`,
		);
	}
	const now = state.clock.now();
	const endpoint: WebhookEndpoint = {
		id: state.store.nextId('endpoint'),
		ownerUserId: user.id,
		url: body.url as string,
		description: (body.description as string | undefined) ?? '',
		eventTypes: [...new Set(body.eventTypes as string[])],
		status: 'Enabled',
		disabledReason: null,
		createdAt: now,
		updatedAt: now,
		secret: newSecret(),
		previousSecret: null,
		previousSecretUntil: null,
		healthySince: now,
	};
	state.store.endpoints.push(endpoint);
	return ok({ webhookEndpoint: endpointView(endpoint), secret: endpoint.secret }, 201);
}

export function listWebhookEndpoints({ state, user, query }: ApiContext) {
	query.allowOnly([]);
	return ok({
		webhookEndpoints: state.store.endpoints
			.filter((e) => e.ownerUserId === user.id)
			.map(endpointView),
	});
}

export function getWebhookEndpoint(ctx: ApiContext) {
	ctx.query.allowOnly([]);
	return ok(endpointView(ownEndpoint(ctx)));
}

export async function updateWebhookEndpoint(ctx: ApiContext) {
	const { state, rawBody, query } = ctx;
	query.allowOnly([]);
	const endpoint = ownEndpoint(ctx);
	const body = parseJsonObject(rawBody);
	const errors = validateBody(body, UPDATE_SCHEMA);
	if (errors.length) throw invalidAll(errors);
	if (body.url !== undefined) await checkUrl(ctx, body.url as string);
	const now = state.clock.now();
	if (body.url !== undefined) endpoint.url = body.url as string;
	if (body.description !== undefined) endpoint.description = body.description as string;
	if (body.eventTypes !== undefined)
		endpoint.eventTypes = [...new Set(body.eventTypes as string[])];
	if (body.status === 'Enabled' && endpoint.status === 'Disabled') {
		endpoint.status = 'Enabled';
		endpoint.disabledReason = null;
		endpoint.healthySince = now;
	} else if (body.status === 'Disabled' && endpoint.status === 'Enabled') {
		endpoint.status = 'Disabled';
		state.engine.failPending(endpoint.id, 'EndpointDisabled');
	}
	endpoint.updatedAt = now;
	return ok(endpointView(endpoint));
}

export function deleteWebhookEndpoint(ctx: ApiContext) {
	const { state, query } = ctx;
	query.allowOnly([]);
	const endpoint = ownEndpoint(ctx);
	state.engine.failPending(endpoint.id, 'EndpointDeleted');
	state.store.endpoints = state.store.endpoints.filter((e) => e !== endpoint);
	return { status: 204 };
}

export async function testWebhookEndpoint(ctx: ApiContext) {
	ctx.query.allowOnly([]);
	const endpoint = ownEndpoint(ctx);
	return ok(deliveryView(await ctx.state.engine.test(endpoint)));
}

export function rotateWebhookEndpointSecret(ctx: ApiContext) {
	const { state, query } = ctx;
	query.allowOnly([]);
	const endpoint = ownEndpoint(ctx);
	const now = state.clock.now();
	endpoint.previousSecret = endpoint.secret;
	endpoint.previousSecretUntil = now + SECRET_OVERLAP_MS;
	endpoint.secret = newSecret();
	endpoint.updatedAt = now;
	return ok({ webhookEndpoint: endpointView(endpoint), secret: endpoint.secret });
}

export function listWebhookDeliveries(ctx: ApiContext) {
	const { state, query } = ctx;
	query.allowOnly(['page', 'limit']);
	const endpoint = ownEndpoint(ctx);
	const { page, limit } = query.page(ROUTES.listWebhookDeliveries.pagination);
	const newestFirst = state.store.deliveries
		.filter((d) => d.webhookEndpointId === endpoint.id)
		.sort((a, b) => b.createdAt - a.createdAt || b.id - a.id);
	const result = paginate(newestFirst.map(deliveryView), page, limit as number);
	return ok({ deliveries: result.items, pagination: result.pagination });
}

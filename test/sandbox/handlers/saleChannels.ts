import { type BodySchema, parseJsonObject, validateBody } from '../body';
import { ApiError, PlainValidationError, invalid } from '../errors';
import type { Connection } from '../model';
import { isPositiveInteger } from '../query';
import { FULFILLMENT_MODELS, SALE_CHANNELS } from '../seed';
import { type ApiContext, inScope, ok } from './context';

const CONNECT_SCHEMA: BodySchema = {
	saleChannelName: { type: 'string', required: true, enum: SALE_CHANNELS.map((c) => c.name) },
	region: { type: 'string' },
	brandIdInSaleChannel: { type: 'string' },
	apiKey: { type: 'string' },
	apiSecret: { type: 'string' },
	fulfillmentModel: { type: 'string', enum: FULFILLMENT_MODELS },
	isShared: { type: 'boolean' },
	logInEmail: { type: 'string' },
	logInPassword: { type: 'string' },
	inventoryScope: { type: 'string' },
};

/**
 * Connect sale channel. Its validation failures use the other error shape
 * (`{statusCode, message, path}`); scope failures are problems like everywhere else.
 */
export function connectSaleChannel({ state, user, params, rawBody, query }: ApiContext) {
	const asPlain = (fn: () => void) => {
		try {
			fn();
		} catch (error) {
			if (error instanceof ApiError && error.errors) throw new PlainValidationError(error.errors);
			throw error;
		}
	};
	let body: Record<string, unknown> = {};
	asPlain(() => {
		query.allowOnly([]);
		if (!isPositiveInteger(params.brandId))
			throw invalid('/brandId', 'brandId must be a positive integer');
		body = parseJsonObject(rawBody);
	});
	const errors = validateBody(body, CONNECT_SCHEMA);
	if (errors.length) throw new PlainValidationError(errors);

	const brandId = Number(params.brandId);
	if (!inScope(user, brandId))
		throw new ApiError('forbidden', `brand ${brandId} is outside the key's brand scope`);
	const channel = SALE_CHANNELS.find((c) => c.name === body.saleChannelName)!;
	const connection: Connection = {
		id: state.store.nextId('connection'),
		brandId,
		saleChannelName: channel.name,
		status: 'Connected',
		connectionDate: state.clock.iso(),
	};
	if (channel.authType === 'oauth') {
		connection.status = 'PendingAuthorization';
		connection.oauthUrl = `${state.baseUrl}/oauth/${channel.name.toLowerCase()}/authorize?connectionId=${connection.id}&brandId=${brandId}`;
	} else if (channel.authType === 'apiKey' && (!body.apiKey || !body.apiSecret)) {
		connection.status = 'Error';
		connection.connectionError = `${channel.name} needs apiKey and apiSecret`;
	}
	if (body.fulfillmentModel !== undefined || body.inventoryScope !== undefined) {
		connection.sellerFulfillmentSetup = {
			fulfillmentModel: body.fulfillmentModel ?? null,
			inventoryScope: body.inventoryScope ?? null,
			isShared: body.isShared ?? false,
		};
	}
	state.store.connections.push(connection);
	return ok(connection, 201);
}

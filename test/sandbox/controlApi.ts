import { randomBytes } from 'node:crypto';
import { ROUTES } from '../../nodes/shared/routes';
import { renderError } from './api';
import { parseJsonObject, validateBody } from './body';
import { ApiError, invalid, invalidAll } from './errors';
import { type FaultSpec, FaultBook } from './faults';
import type { HandlerResult, WireResponse } from './http';
import { toWire } from './http';
import type { Order, OrderStatus } from './model';
import { ALL_PERMISSIONS } from './permissions';
import { Query } from './query';
import { addOrder, addProducts, addReturn, HEALTH_BANDS, scoreForBand } from './seed';
import type { SandboxState } from './state';
import type { SendOptions } from './delivery';
import { deliveryDetail, endpointView } from './views';

type ControlFn = (
	state: SandboxState,
	params: string[],
	body: Record<string, unknown>,
	query: Query,
) => HandlerResult | Promise<HandlerResult>;

const ok = (body: unknown, status = 200): HandlerResult => ({ status, body });

function newApiKey(): string {
	return `mk_test_${randomBytes(12).toString('hex')}`;
}

function numberOr404(state: SandboxState, raw: string): number {
	if (!/^\d+$/.test(raw)) throw new ApiError('not-found', `${raw} not found`);
	return Number(raw);
}

function orderOr404(state: SandboxState, raw: string): Order {
	const order = state.store.order(numberOr404(state, raw));
	if (!order) throw new ApiError('not-found', `order ${raw} not found`);
	return order;
}

function check(body: Record<string, unknown>, schema: Parameters<typeof validateBody>[1]): void {
	const errors = validateBody(body, schema);
	if (errors.length) throw invalidAll(errors);
}

function changeOrder(
	state: SandboxState,
	order: Order,
	status: OrderStatus,
	event: string,
): HandlerResult {
	order.status = status;
	order.updatedAt = state.clock.iso();
	if (status === 'Returned') addReturn(state.store, order, state.clock.now());
	const emitted = state.engine.emit(event, { brandId: order.brandId, orderId: order.id });
	return ok({ order, event: emitted.event, deliveryIds: emitted.deliveries.map((d) => d.id) });
}

const STATE_COLLECTIONS: Record<string, (s: SandboxState) => { id?: number; brandId?: number }[]> =
	{
		orders: (s) => s.store.orders,
		products: (s) => s.store.products,
		returns: (s) => s.store.returns,
		purchaseOrders: (s) => s.store.purchaseOrders,
		forecasts: (s) => s.store.forecasts,
		brands: (s) => s.store.brands,
		brandHealth: (s) => s.store.brandHealth.map((h) => ({ ...h, id: h.brandId })),
		connections: (s) => s.store.connections,
		users: (s) => s.store.users,
		categories: (s) => s.store.categories,
	};

/** The control API under /_sandbox (no auth, not rate limited, not logged). See README.md. */
const CONTROL_ROUTES: [string, RegExp, ControlFn][] = [
	[
		'GET',
		/^\/_sandbox\/info$/,
		(s) =>
			ok({
				baseUrl: s.baseUrl,
				demoApiKey: s.store.demoApiKey,
				options: s.options,
				routes: ROUTES,
				permissions: ALL_PERMISSIONS,
			}),
	],
	[
		'POST',
		/^\/_sandbox\/reset$/,
		async (s) => {
			await s.reset();
			return ok({ reset: true, demoApiKey: s.store.demoApiKey });
		},
	],

	[
		'POST',
		/^\/_sandbox\/users$/,
		(s, _, body) => {
			check(body, {
				name: { type: 'string' },
				permissions: { type: 'stringArray', enum: ALL_PERMISSIONS },
				brandIds: { type: 'integerArray' },
			});
			const user = {
				id: s.store.nextId('user'),
				name: (body.name as string | undefined) ?? 'Test user',
				permissions: (body.permissions as string[] | undefined) ?? [...ALL_PERMISSIONS],
				brandIds: (body.brandIds as number[] | undefined) ?? s.store.users[0].brandIds.slice(),
			};
			s.store.users.push(user);
			const apiKey = newApiKey();
			s.store.keys.set(apiKey, { key: apiKey, userId: user.id, revoked: false });
			return ok({ userId: user.id, apiKey, user }, 201);
		},
	],
	[
		'PATCH',
		/^\/_sandbox\/users\/(\d+)$/,
		(s, [id], body) => {
			check(body, {
				permissions: { type: 'stringArray', enum: ALL_PERMISSIONS },
				brandIds: { type: 'integerArray' },
			});
			const user = s.store.user(Number(id));
			if (!user) throw new ApiError('not-found', `user ${id} not found`);
			if (body.permissions) user.permissions = body.permissions as string[];
			if (body.brandIds) user.brandIds = body.brandIds as number[];
			return ok({ user });
		},
	],
	[
		'POST',
		/^\/_sandbox\/users\/(\d+)\/keys$/,
		(s, [id], body) => {
			check(body, { permissions: { type: 'stringArray', enum: ALL_PERMISSIONS } });
			const user = s.store.user(Number(id));
			if (!user) throw new ApiError('not-found', `user ${id} not found`);
			const apiKey = newApiKey();
			s.store.keys.set(apiKey, {
				key: apiKey,
				userId: user.id,
				revoked: false,
				permissions: body.permissions as string[] | undefined,
			});
			return ok({ userId: user.id, apiKey }, 201);
		},
	],
	[
		'POST',
		/^\/_sandbox\/keys\/([^/]+)\/revoke$/,
		(s, [key]) => {
			const record = s.store.keys.get(decodeURIComponent(key));
			if (!record) throw new ApiError('not-found', 'key not found');
			record.revoked = true;
			return ok({ revoked: true });
		},
	],

	[
		'POST',
		/^\/_sandbox\/orders$/,
		(s, _, body) => {
			check(body, {
				brandId: { type: 'integer', required: true },
				status: { type: 'string', enum: ['Created', 'Packed'] },
				fulfillmentModel: { type: 'string' },
				saleChannelId: { type: 'integer' },
			});
			if (!s.store.brands.some((b) => b.id === body.brandId))
				throw new ApiError('not-found', `brand ${body.brandId} not found`);
			const order = addOrder(
				s.store,
				body as { brandId: number; status?: OrderStatus },
				s.clock.now(),
			);
			const emitted = s.engine.emit('order.created', { brandId: order.brandId, orderId: order.id });
			return ok(
				{ order, event: emitted.event, deliveryIds: emitted.deliveries.map((d) => d.id) },
				201,
			);
		},
	],
	[
		'POST',
		/^\/_sandbox\/orders\/(\d+)\/cancel$/,
		(s, [id]) => changeOrder(s, orderOr404(s, id), 'Cancelled', 'order.cancelled'),
	],
	[
		'POST',
		/^\/_sandbox\/orders\/(\d+)\/return$/,
		(s, [id]) => changeOrder(s, orderOr404(s, id), 'Returned', 'order.returned'),
	],
	[
		'POST',
		/^\/_sandbox\/orders\/generate$/,
		(s, _, body) => {
			check(body, {
				count: { type: 'integer', required: true, min: 1 },
				brandId: { type: 'integer' },
				status: { type: 'string', enum: ['Created', 'Packed', 'Cancelled', 'Returned'] },
			});
			const ids: number[] = [];
			for (let i = 0; i < (body.count as number); i++) {
				const brandId =
					(body.brandId as number | undefined) ?? s.store.brands[i % s.store.brands.length].id;
				ids.push(
					addOrder(
						s.store,
						{ brandId, status: body.status as OrderStatus | undefined },
						s.clock.now(),
					).id,
				);
			}
			return ok({ created: ids.length, firstId: ids[0], lastId: ids[ids.length - 1] }, 201);
		},
	],
	[
		'POST',
		/^\/_sandbox\/products\/generate$/,
		(s, _, body) => {
			check(body, {
				count: { type: 'integer', required: true, min: 1 },
				brandId: { type: 'integer' },
			});
			const added = addProducts(
				s.store,
				body.count as number,
				body.brandId as number | undefined,
				s.clock.now(),
			);
			return ok(
				{
					created: added.length,
					firstId: added[0].id,
					lastId: added[added.length - 1].id,
					total: s.store.products.length,
				},
				201,
			);
		},
	],
	[
		'POST',
		/^\/_sandbox\/brand-health\/(\d+)\/band$/,
		(s, [brandId], body) => {
			check(body, {
				dimension: { type: 'string', required: true },
				band: { type: 'string', required: true, enum: HEALTH_BANDS },
				category: { type: 'string' },
			});
			const health = s.store.brandHealth.find((h) => h.brandId === Number(brandId));
			const rows =
				health?.dimensions.filter(
					(d) =>
						d.dimension === body.dimension &&
						(body.category === undefined || d.category === body.category),
				) ?? [];
			if (!health || !rows.length)
				throw new ApiError('not-found', `no dimension ${body.dimension} for brand ${brandId}`);
			const oldBand = rows[0].band;
			const events = [];
			if (oldBand !== body.band) {
				for (const row of rows)
					Object.assign(row, { band: body.band, score: scoreForBand(body.band as string) });
				health.updatedAt = s.clock.iso();
				const data = { brandId: health.brandId, dimension: body.dimension };
				events.push(
					s.engine.emit('brand_health.band_exited', { ...data, band: oldBand }),
					s.engine.emit('brand_health.band_entered', { ...data, band: body.band }),
				);
			}
			return ok({
				brandHealth: health,
				events: events.map((e) => ({ event: e.event, deliveryIds: e.deliveries.map((d) => d.id) })),
			});
		},
	],
	[
		'POST',
		/^\/_sandbox\/events$/,
		(s, _, body) => {
			const { data, ...rest } = body;
			check(rest, {
				type: { type: 'string', required: true },
				endpointIds: { type: 'integerArray' },
			});
			if (data !== undefined && (typeof data !== 'object' || data === null || Array.isArray(data)))
				throw invalidAll([{ pointer: '/data', detail: 'data must be an object' }]);
			const emitted = s.engine.emit(
				body.type as string,
				(data as Record<string, unknown> | undefined) ?? {},
				body.endpointIds as number[] | undefined,
			);
			return ok({ event: emitted.event, deliveryIds: emitted.deliveries.map((d) => d.id) }, 201);
		},
	],

	['GET', /^\/_sandbox\/settings$/, (s) => ok({ settings: s.settings })],
	[
		'POST',
		/^\/_sandbox\/settings$/,
		(s, _, body) => {
			check(body, { timestampSkewSeconds: { type: 'integer' } });
			if (body.timestampSkewSeconds !== undefined)
				s.settings.timestampSkewSeconds = body.timestampSkewSeconds as number;
			return ok({ settings: s.settings });
		},
	],
	[
		'GET',
		/^\/_sandbox\/clock$/,
		(s) => ok({ now: s.clock.iso(), offsetSeconds: s.clock.offsetSeconds }),
	],
	[
		'POST',
		/^\/_sandbox\/clock\/advance$/,
		async (s, _, body) => {
			check(body, {
				seconds: { type: 'integer', min: 0 },
				milliseconds: { type: 'integer', min: 0 },
			});
			if ((body.seconds === undefined) === (body.milliseconds === undefined))
				throw invalid('', 'give seconds or milliseconds');
			const attempts = await s.engine.advance(
				body.seconds !== undefined
					? (body.seconds as number)
					: (body.milliseconds as number) / 1000,
			);
			return ok({ now: s.clock.iso(), offsetSeconds: s.clock.offsetSeconds, attempts });
		},
	],

	['GET', /^\/_sandbox\/faults$/, (s) => ok({ faults: s.faults.list() })],
	[
		'POST',
		/^\/_sandbox\/faults$/,
		(s, _, body) => {
			const errors = FaultBook.validate(body);
			if (errors.length) throw invalidAll(errors);
			return ok({ fault: s.faults.add(body as unknown as FaultSpec) }, 201);
		},
	],
	[
		'DELETE',
		/^\/_sandbox\/faults$/,
		(s) => {
			s.faults.clear();
			return { status: 204 };
		},
	],

	[
		'GET',
		/^\/_sandbox\/requests$/,
		(s, _, __, query) => ok({ requests: s.log.list(Number(query.scalar('since') ?? 0)) }),
	],
	[
		'DELETE',
		/^\/_sandbox\/requests$/,
		(s) => {
			s.log.clear();
			return { status: 204 };
		},
	],

	[
		'GET',
		/^\/_sandbox\/deliveries$/,
		(s, _, __, query) => {
			const endpointId = query.scalar('endpointId');
			const all = s.store.deliveries.filter(
				(d) => endpointId === undefined || d.webhookEndpointId === Number(endpointId),
			);
			return ok({ deliveries: all.map(deliveryDetail) });
		},
	],
	[
		'POST',
		/^\/_sandbox\/deliveries\/(\d+)\/redeliver$/,
		async (s, [id]) => {
			const original = s.store.deliveries.find((d) => d.id === Number(id));
			if (!original) throw new ApiError('not-found', `delivery ${id} not found`);
			return ok({ delivery: deliveryDetail(await s.engine.redeliver(original)) }, 201);
		},
	],
	[
		'GET',
		/^\/_sandbox\/webhook-endpoints$/,
		(s) =>
			ok({
				webhookEndpoints: s.store.endpoints.map((e) => ({
					...endpointView(e),
					ownerUserId: e.ownerUserId,
					secret: e.secret,
					previousSecret: e.previousSecret,
					previousSecretUntil:
						e.previousSecretUntil && new Date(e.previousSecretUntil).toISOString(),
				})),
			}),
	],
	[
		'PATCH',
		/^\/_sandbox\/webhook-endpoints\/(\d+)$/,
		(s, [id], body) => {
			check(body, { url: { type: 'string' } });
			const endpoint = s.store.endpoint(Number(id));
			if (!endpoint) throw new ApiError('not-found', `endpoint ${id} not found`);
			if (body.url !== undefined) endpoint.url = body.url as string;
			return ok({ webhookEndpoint: endpointView(endpoint) });
		},
	],
	[
		'POST',
		/^\/_sandbox\/webhook-endpoints\/(\d+)\/send$/,
		async (s, [id], body) => {
			const endpoint = s.store.endpoint(Number(id));
			if (!endpoint) throw new ApiError('not-found', `endpoint ${id} not found`);
			return ok(await s.engine.send(endpoint, body as SendOptions));
		},
	],

	[
		'GET',
		/^\/_sandbox\/state\/(\w+)$/,
		(s, [name]) => {
			const collection = STATE_COLLECTIONS[name];
			if (!collection) throw new ApiError('not-found', `no collection ${name}`);
			return ok({ [name]: collection(s) });
		},
	],
	[
		'GET',
		/^\/_sandbox\/state\/(\w+)\/(\d+)$/,
		(s, [name, id]) => {
			const record = STATE_COLLECTIONS[name]?.(s).find((r) => r.id === Number(id));
			if (!record) throw new ApiError('not-found', `${name} ${id} not found`);
			return ok(record);
		},
	],
];

export async function handleControl(
	state: SandboxState,
	method: string,
	path: string,
	rawQuery: string,
	rawBody: string,
	requestId: string,
): Promise<WireResponse> {
	try {
		for (const [m, pattern, fn] of CONTROL_ROUTES) {
			const match = m === method ? pattern.exec(path) : null;
			if (!match) continue;
			const body = method === 'GET' || method === 'DELETE' ? {} : parseJsonObject(rawBody, true);
			const wire = toWire(await fn(state, match.slice(1), body, new Query(rawQuery)));
			wire.headers['x-request-id'] = requestId;
			return wire;
		}
		throw new ApiError('not-found', `${method} ${path} is not a control route`);
	} catch (error) {
		const wire = renderError(state, error, path, requestId);
		wire.headers['x-request-id'] = requestId;
		return wire;
	}
}

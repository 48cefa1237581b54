/**
 * The sample item a builder gets from "Listen for test event" (n8n's test URL, mode 'manual'): the
 * delivery side. The webhook.test delivery the user sent (Webhook Endpoint > Test) arrives verified
 * on the test URL; `sampleItems` gives its run one item shaped like the items of the first
 * subscribed event type, from the newest real record (the newest order; a brand's health), else
 * synthetic, marked `sample: true`. Production deliveries (mode 'webhook') never get a sample.
 */
import type { IDataObject, INodeExecutionData, IWebhookFunctions } from 'n8n-workflow';

import { latestOrder, type OrderRecord } from '../shared/orders';
import { markSample, SAMPLE_FIELD } from '../shared/sample';
import { transportClock } from '../shared/transport/clock';
import { readAll } from '../shared/transport/pagination';
import { isoSeconds } from '../shared/transport/queryEncoding';
import { apiRequest } from '../shared/transport/request';
import { readFailure } from '../shared/transport/transportErrors';
import { WITHIN_ANSWER_LIMIT } from './answerLimit';

/** How far back the newest order is looked for, widening until one is found (the list has no pages). */
const ORDER_WINDOWS_DAYS = [1, 7, 30, 365];
const DAY_MS = 86_400_000;

interface SampleOptions {
	fetchCurrentState?: boolean;
	includeHeaders?: boolean;
}

type Ctx = IWebhookFunctions;

/** The parts of the verified webhook.test delivery a sample is built from. */
export interface TestDelivery {
	id: string;
	createdAt: string;
	data: Record<string, unknown>;
}

async function newestOrder(ctx: Ctx): Promise<IDataObject | undefined> {
	const now = transportClock().now();
	for (const days of ORDER_WINDOWS_DAYS) {
		const orders = await readAll.call(ctx, {
			route: 'listOrders',
			query: { startDate: isoSeconds(now - days * DAY_MS) },
			returnAll: true,
			settings: WITHIN_ANSWER_LIMIT,
		});
		const newest = latestOrder(orders as OrderRecord[], []);
		if (newest) return newest as unknown as IDataObject;
	}
	return undefined;
}

async function readCurrent(
	ctx: Ctx,
	read: () => Promise<unknown>,
	route: string,
): Promise<IDataObject> {
	try {
		return { current: (await read()) as IDataObject };
	} catch (error) {
		const failure = readFailure(error);
		return {
			currentError: {
				route,
				message: failure.message,
				...(failure.status !== undefined ? { status: failure.status } : {}),
				...(failure.slug !== undefined ? { type: failure.slug } : {}),
			},
		};
	}
}

const positive = (value: unknown): value is number =>
	typeof value === 'number' && Number.isSafeInteger(value) && value > 0;

/** The fields of an order event's item: data, createdAt, and current as set. */
async function orderSample(
	ctx: Ctx,
	type: string,
	event: TestDelivery,
	options: SampleOptions,
): Promise<IDataObject> {
	let order: IDataObject | undefined;
	let readProblem: string | undefined;
	try {
		order = await newestOrder(ctx);
	} catch (error) {
		readProblem = readFailure(error).message;
	}
	if (order && positive(order.id) && positive(order.brandId)) {
		const orderId = order.id;
		const createdAt = String(
			(type === 'order.created' ? order.createdAt : order.updatedAt) ??
				order.createdAt ??
				event.createdAt,
		);
		const current = options.fetchCurrentState
			? await readCurrent(
					ctx,
					async () =>
						(
							await apiRequest.call(
								ctx,
								{ route: 'getOrder', pathParams: { id: orderId } },
								WITHIN_ANSWER_LIMIT,
							)
						).body,
					'getOrder',
				)
			: {};
		return {
			createdAt,
			data: { brandId: order.brandId, orderId },
			...current,
			sampleSource: 'newest-order',
			sampleNote: `A sample ${type} event made from your newest order (${orderId}); it did not happen. Production runs never carry "${SAMPLE_FIELD}".`,
		};
	}
	const now = new Date(transportClock().now()).toISOString();
	return {
		createdAt: event.createdAt,
		data: { brandId: 0, orderId: 0 },
		...(options.fetchCurrentState
			? { current: { id: 0, brandId: 0, status: 'Created', createdAt: now, updatedAt: now } }
			: {}),
		sampleSource: 'synthetic',
		sampleNote:
			`A made-up ${type} event: ${readProblem ? `the orders could not be read (${readProblem})` : 'your account has no order yet'}, ` +
			'so the IDs are 0 and name no real order. Production runs never carry "sample".',
	};
}

/** The fields of a brand health event's item, from the first brand the key may read. */
async function bandSample(
	ctx: Ctx,
	type: string,
	event: TestDelivery,
	options: SampleOptions,
): Promise<IDataObject> {
	let readProblem: string | undefined;
	try {
		const brands = await readAll.call(ctx, {
			route: 'listBrands',
			returnAll: true,
			settings: WITHIN_ANSWER_LIMIT,
		});
		let brandId = brands.map((b) => b.id).find(positive);
		if (brandId === undefined) {
			const order = await newestOrder(ctx);
			brandId = positive(order?.brandId) ? order.brandId : undefined;
		}
		if (brandId !== undefined) {
			const { body } = await apiRequest.call(
				ctx,
				{ route: 'getBrandHealth', query: { brandId } },
				WITHIN_ANSWER_LIMIT,
			);
			const health = (body ?? {}) as IDataObject;
			const dimensions = Array.isArray(health.dimensions)
				? (health.dimensions as IDataObject[])
				: [];
			const first = dimensions.find(
				(d) => typeof d.dimension === 'string' && typeof d.band === 'string',
			);
			if (first) {
				return {
					createdAt: typeof health.updatedAt === 'string' ? health.updatedAt : event.createdAt,
					data: { brandId, dimension: first.dimension, band: first.band },
					...(options.fetchCurrentState ? { current: health } : {}),
					sampleSource: 'brand-health',
					sampleNote: `A sample ${type} event made from the current health of brand ${brandId} (${String(first.dimension)} is ${String(first.band)}); it did not happen. Production runs never carry "${SAMPLE_FIELD}".`,
				};
			}
		}
	} catch (error) {
		readProblem = readFailure(error).message;
	}
	return {
		createdAt: event.createdAt,
		data: { brandId: 0, dimension: 'SampleDimension', band: 'SampleBand' },
		...(options.fetchCurrentState
			? {
					current: {
						brandId: 0,
						categories: [],
						dimensions: [{ dimension: 'SampleDimension', band: 'SampleBand' }],
						updatedAt: event.createdAt,
					},
				}
			: {}),
		sampleSource: 'synthetic',
		sampleNote:
			`A made-up ${type} event: ${readProblem ? `the brand health could not be read (${readProblem})` : 'no brand health could be found for your brands'}, ` +
			'so brandId is 0 and the dimension and band are placeholders. Production runs never carry "sample".',
	};
}

/** The sample item for the first subscribed event type, from the verified test delivery `event`. */
export async function buildSample(
	ctx: IWebhookFunctions,
	event: TestDelivery,
	subscribed: readonly string[],
	options: SampleOptions,
): Promise<IDataObject> {
	const type = subscribed[0] ?? 'order.created';
	const fields = type.startsWith('brand_health.')
		? await bandSample(ctx, type, event, options)
		: await orderSample(ctx, type, event, options);
	const { sampleSource, sampleNote, ...eventFields } = fields;
	const json: IDataObject = { id: event.id, type, ...eventFields };
	if (options.includeHeaders === true) json.headers = ctx.getRequestObject().headers as IDataObject;
	markSample(json, String(sampleSource), String(sampleNote));
	return json;
}

/**
 * The run's items for a verified webhook.test delivery on a test URL: one sample item; undefined for
 * every delivery outside a test URL, so a production run never carries a sample.
 */
export async function sampleItems(
	ctx: IWebhookFunctions,
	event: TestDelivery,
	subscribed: readonly string[],
	options: { fetchCurrentState?: boolean },
): Promise<INodeExecutionData[] | undefined> {
	if (ctx.getMode() !== 'manual') return undefined;
	return [{ json: await buildSample(ctx, event, subscribed, options as SampleOptions) }];
}

/**
 * The service contract, written from the Marketplace API documentation alone: for every operation of
 * the action node, the webhook trigger's register and delete calls and the polling trigger's order
 * read, the method, path and query string the service expects, and for writes the JSON body and an
 * Idempotency-Key. The nodes run in n8n-core's engine against a recording server on loopback, so the
 * route table is checked from outside (the sandbox reads that table, so it cannot catch a wrong entry).
 *
 * Query strings compare pair by pair: the order of different keys is free, the order of one key's
 * values is not, and a literal comma (a list separator) differs from an encoded one (part of a value).
 *
 * Where the documentation names an operation but not its path ("not shown"), the literal is the path
 * the project chose, pinned so it changes only on purpose; those cases say so.
 *
 * Run: .ci/with-node24 npx jest test/contract
 */
import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { MarketplaceApi } from '../../credentials/MarketplaceApi.credentials';
import { Marketplace } from '../../nodes/Marketplace/Marketplace.node';
import { operations } from '../../nodes/Marketplace/actions/resources';
import { MarketplacePollingTrigger } from '../../nodes/MarketplacePollingTrigger/MarketplacePollingTrigger.node';
import { MarketplaceTrigger } from '../../nodes/MarketplaceTrigger/MarketplaceTrigger.node';
import { createPollHarness, createTriggerHarness, runNode } from '../engine/harness';
import { startRecorder, type Answer, type Answers, type Recorded, type Recorder } from './recorder';

const API_KEY = 'mk_contract_key';
const credentialType = new MarketplaceApi();

/** One request the node must send: `METHOD /path?query`, and for writes the JSON body. */
interface Expected {
	request: string;
	body?: unknown;
}

interface Case {
	/** resource.operation of the action node */
	operation: string;
	parameters: INodeParameters;
	inputItems?: INodeExecutionData[];
	answers: Answers;
	/** every request of the run, in order */
	sends: Expected[];
}

// ---- example answers, shaped as the documentation describes each response ----

const ENDPOINT = {
	id: 5,
	url: 'https://hooks.example.com/orders',
	description: 'Orders',
	eventTypes: ['order.created'],
	status: 'Enabled',
	disabledReason: null,
	createdAt: '2026-11-20T17:00:00Z',
	updatedAt: '2026-11-20T17:00:00Z',
};
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** A paginated read's answer: the named collection plus a pagination object, `totalPages` pages. */
function paged(collection: string, totalPages = 1): (request: Recorded) => Answer {
	return (request) => {
		const query = new URLSearchParams(request.rawQuery);
		const page = Number(query.get('page') ?? 1);
		const limit = Number(query.get('limit') ?? 10);
		return {
			body: {
				[collection]: [{ id: page }],
				pagination: { page, limit, total: totalPages, totalPages },
			},
		};
	};
}

const products = (totalPages = 1): Answer | ((r: Recorded) => Answer) => {
	const answer = paged('products', totalPages);
	return (r) => ({
		body: { ...(answer(r).body as IDataObject), categories: [], filterCounts: {} },
	});
};
const ORDER = { id: 1001, brandId: 3, status: 'Created', createdAt: '2026-11-20T17:30:00Z' };

const cases: Case[] = [
	// products split list filters on commas; a page read starts at page=1
	{
		operation: 'product.getAll',
		parameters: {
			resource: 'product',
			operation: 'getAll',
			returnAll: false,
			limit: 5,
			filters: { brandIds: '1, 2' },
		},
		answers: { 'GET /v1/products': products() },
		sends: [{ request: 'GET /v1/products?brandIds=1,2&page=1&limit=5' }],
	},
	// Return All keeps the filters and the limit (the largest, 100) and reads while page < totalPages
	{
		operation: 'product.getAll',
		parameters: {
			resource: 'product',
			operation: 'getAll',
			returnAll: true,
			filters: { brandIds: '7' },
		},
		answers: { 'GET /v1/products': products(2) },
		sends: [
			{ request: 'GET /v1/products?brandIds=7&page=1&limit=100' },
			{ request: 'GET /v1/products?brandIds=7&page=2&limit=100' },
		],
	},
	// an empty filter is left out, not sent as `brandIds=`
	{
		operation: 'product.getAll',
		parameters: {
			resource: 'product',
			operation: 'getAll',
			returnAll: false,
			limit: 10,
			filters: { brandIds: '' },
		},
		answers: { 'GET /v1/products': products() },
		sends: [{ request: 'GET /v1/products?page=1&limit=10' }],
	},
	// orders split statuses and brandIds on commas and have no pages; dates go out as ISO 8601 UTC
	{
		operation: 'order.getAll',
		parameters: {
			resource: 'order',
			operation: 'getAll',
			filters: {
				statuses: ['Created', 'Packed'],
				fulfillmentModel: 'Merchant',
				brandIds: '3,4',
				startDate: '2026-11-20T18:00:00+01:00',
			},
		},
		answers: { 'GET /v1/orders': { body: { orders: [ORDER] } } },
		sends: [
			{
				request:
					'GET /v1/orders?statuses=Created,Packed&fulfillmentModel=Merchant&brandIds=3,4&startDate=2026-11-20T17:00:00Z',
			},
		],
	},
	// empty filters are left out
	{
		operation: 'order.getAll',
		parameters: {
			resource: 'order',
			operation: 'getAll',
			filters: { statuses: [], brandIds: '', fulfillmentModel: '' },
		},
		answers: { 'GET /v1/orders': { body: { orders: [ORDER] } } },
		sends: [{ request: 'GET /v1/orders' }],
	},
	{
		operation: 'order.get',
		parameters: { resource: 'order', operation: 'get', orderId: '1001' },
		answers: { 'GET /v1/orders/1001': { body: ORDER } },
		sends: [{ request: 'GET /v1/orders/1001' }],
	},
	// not in the documentation: the path, and comma lists as products and orders take them
	{
		operation: 'return.getAll',
		parameters: {
			resource: 'return',
			operation: 'getAll',
			returnAll: false,
			limit: 5,
			filters: { brandIds: '1,2', statuses: 'Requested, Approved' },
		},
		answers: { 'GET /v1/returns': paged('returns') },
		sends: [{ request: 'GET /v1/returns?brandIds=1,2&statuses=Requested,Approved&page=1&limit=5' }],
	},
	// purchase-order page reads take brandIds, saleChannelIds and statuses as repeated keys
	{
		operation: 'purchaseOrder.getAll',
		parameters: {
			resource: 'purchaseOrder',
			operation: 'getAll',
			returnAll: false,
			limit: 5,
			filters: { brandIds: '1,2', saleChannelIds: '7, 8', statuses: ['Confirmed', 'Closed'] },
		},
		answers: { 'GET /v1/vendor/purchase-orders': paged('purchaseOrders') },
		sends: [
			{
				request:
					'GET /v1/vendor/purchase-orders?brandIds=1&brandIds=2&saleChannelIds=7&saleChannelIds=8&statuses=Confirmed&statuses=Closed&page=1&limit=5',
			},
		],
	},
	// the export takes the same filters comma-separated (its path is not in the documentation)
	{
		operation: 'purchaseOrder.export',
		parameters: {
			resource: 'purchaseOrder',
			operation: 'export',
			filters: { brandIds: '1,2', saleChannelIds: '7,8', statuses: ['Confirmed', 'Closed'] },
		},
		answers: { 'GET /v1/vendor/purchase-orders/export': { body: { purchaseOrders: [{ id: 1 }] } } },
		sends: [
			{
				request:
					'GET /v1/vendor/purchase-orders/export?brandIds=1,2&saleChannelIds=7,8&statuses=Confirmed,Closed',
			},
		],
	},
	// category names repeat the `categories` key because a name may hold a comma, which is then
	// encoded; the path and the brandId parameter are not in the documentation
	{
		operation: 'brandHealth.get',
		parameters: {
			resource: 'brandHealth',
			operation: 'get',
			brandId: '2',
			filters: { categories: ['Home, Garden', 'Toys'] },
		},
		answers: { 'GET /v1/brand-health': { body: { brandId: 2, dimensions: [] } } },
		sends: [
			{ request: 'GET /v1/brand-health?brandId=2&categories=Home%2C%20Garden&categories=Toys' },
		],
	},
	// inventory forecasts page like products (default 25, at most 100); the path is not in the documentation
	{
		operation: 'inventoryForecast.getAll',
		parameters: {
			resource: 'inventoryForecast',
			operation: 'getAll',
			returnAll: true,
			filters: { brandIds: '1,2' },
		},
		answers: { 'GET /v1/inventory-forecasts': paged('forecasts') },
		sends: [{ request: 'GET /v1/inventory-forecasts?brandIds=1,2&page=1&limit=100' }],
	},
	// brand discovery returns the whole accessible set when limit is omitted (path not in the documentation)
	{
		operation: 'brand.getAll',
		parameters: { resource: 'brand', operation: 'getAll', returnAll: true },
		answers: { 'GET /v1/brands': { body: { brands: [{ id: 1 }, { id: 2 }] } } },
		sends: [{ request: 'GET /v1/brands' }],
	},
	// only the documented body fields, and only those the user set
	{
		operation: 'saleChannel.connect',
		parameters: {
			resource: 'saleChannel',
			operation: 'connect',
			brandId: '7',
			saleChannelName: 'Amazon',
			additionalFields: { region: 'EU', isShared: true, logInEmail: '' },
		},
		answers: {
			'POST /v1/brands/7/sale-channels/connect': {
				status: 201,
				body: {
					id: 11,
					brandId: 7,
					saleChannelName: 'Amazon',
					status: 'Pending',
					connectionDate: '2026-11-20T17:00:00Z',
				},
			},
		},
		sends: [
			{
				request: 'POST /v1/brands/7/sale-channels/connect',
				body: { saleChannelName: 'Amazon', region: 'EU', isShared: true },
			},
		],
	},
	// orderIds is an array of integers; the ids of every item go out in one batch
	{
		operation: 'fulfillment.markPacked',
		parameters: { resource: 'fulfillment', operation: 'markPacked', orderIds: '={{ $json.ids }}' },
		inputItems: [{ json: { ids: 1001 } }, { json: { ids: '1002, 1003' } }],
		answers: {
			'POST /v1/fulfillment/orders/packed': {
				body: {
					results: [1001, 1002, 1003].map((orderId) => ({
						orderId,
						success: true,
						status: 'Packed',
					})),
				},
			},
		},
		sends: [
			{ request: 'POST /v1/fulfillment/orders/packed', body: { orderIds: [1001, 1002, 1003] } },
		],
	},
	// create takes url, description and eventTypes; the node first lists the endpoints (path not in
	// the documentation) so that a retry after a lost answer can find the one it made
	{
		operation: 'webhookEndpoint.create',
		parameters: {
			resource: 'webhookEndpoint',
			operation: 'create',
			url: 'https://hooks.example.com/orders',
			description: 'Orders',
			eventTypes: ['order.created'],
		},
		answers: {
			'GET /v1/webhook-endpoints': { body: { webhookEndpoints: [] } },
			'POST /v1/webhook-endpoints': {
				status: 201,
				body: { webhookEndpoint: ENDPOINT, secret: SECRET },
			},
		},
		sends: [
			{ request: 'GET /v1/webhook-endpoints' },
			{
				request: 'POST /v1/webhook-endpoints',
				body: {
					url: 'https://hooks.example.com/orders',
					description: 'Orders',
					eventTypes: ['order.created'],
				},
			},
		],
	},
	// list, read, update, delete and deliveries exist, but their methods and paths are not in the
	// documentation: these pin the project's choice (PATCH for a partial update, DELETE to delete)
	{
		operation: 'webhookEndpoint.getAll',
		parameters: { resource: 'webhookEndpoint', operation: 'getAll' },
		answers: { 'GET /v1/webhook-endpoints': { body: { webhookEndpoints: [ENDPOINT] } } },
		sends: [{ request: 'GET /v1/webhook-endpoints' }],
	},
	{
		operation: 'webhookEndpoint.get',
		parameters: { resource: 'webhookEndpoint', operation: 'get', endpointId: '5' },
		answers: { 'GET /v1/webhook-endpoints/5': { body: ENDPOINT } },
		sends: [{ request: 'GET /v1/webhook-endpoints/5' }],
	},
	{
		operation: 'webhookEndpoint.update',
		parameters: {
			resource: 'webhookEndpoint',
			operation: 'update',
			endpointId: '5',
			updateFields: { status: 'Enabled', description: 'Orders v2' },
		},
		answers: {
			'PATCH /v1/webhook-endpoints/5': { body: { ...ENDPOINT, description: 'Orders v2' } },
		},
		sends: [
			{
				request: 'PATCH /v1/webhook-endpoints/5',
				body: { status: 'Enabled', description: 'Orders v2' },
			},
		],
	},
	{
		operation: 'webhookEndpoint.delete',
		parameters: { resource: 'webhookEndpoint', operation: 'delete', endpointId: '5' },
		answers: { 'DELETE /v1/webhook-endpoints/5': { status: 204, body: undefined } },
		sends: [{ request: 'DELETE /v1/webhook-endpoints/5' }],
	},
	// test and rotate-secret are POSTs without a body
	{
		operation: 'webhookEndpoint.test',
		parameters: { resource: 'webhookEndpoint', operation: 'test', endpointId: '5' },
		answers: {
			'POST /v1/webhook-endpoints/5/test': {
				body: { id: 'del_1', eventType: 'webhook.test', attempts: 1, responseStatus: 200 },
			},
		},
		sends: [{ request: 'POST /v1/webhook-endpoints/5/test' }],
	},
	{
		operation: 'webhookEndpoint.rotateSecret',
		parameters: { resource: 'webhookEndpoint', operation: 'rotateSecret', endpointId: '5' },
		answers: {
			'POST /v1/webhook-endpoints/5/rotate-secret': { body: { ...ENDPOINT, secret: SECRET } },
		},
		sends: [{ request: 'POST /v1/webhook-endpoints/5/rotate-secret' }],
	},
	{
		operation: 'webhookEndpoint.getDeliveries',
		parameters: {
			resource: 'webhookEndpoint',
			operation: 'getDeliveries',
			endpointId: '5',
			returnAll: false,
			limit: 5,
		},
		answers: { 'GET /v1/webhook-endpoints/5/deliveries': paged('deliveries') },
		sends: [{ request: 'GET /v1/webhook-endpoints/5/deliveries?page=1&limit=5' }],
	},
];

// ---- comparison ----

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * `METHOD /path?query` with the query's pairs grouped by key (keys sorted, each key's values in
 * order) and percent-decoded, except that an encoded comma stays encoded: it is not a separator.
 */
function canonical(request: string): string {
	const [line, ...rest] = request.split('?');
	const pairs = rest
		.join('?')
		.split('&')
		.filter((p) => p !== '')
		.map((pair) => {
			const [key, ...value] = pair.split('=');
			const decode = (s: string) =>
				decodeURIComponent(s.replace(/\+/g, ' ').replace(/%2C/gi, '%252C'));
			return `${decode(key)}=${decode(value.join('='))}`;
		});
	const byKey = pairs
		.map((p, i) => [p.split('=')[0], i, p] as const)
		.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
	return byKey.length ? `${line}?${byKey.map((p) => p[2]).join('&')}` : line;
}

const lineOf = (r: Recorded) => `${r.method} ${r.path}${r.rawQuery ? `?${r.rawQuery}` : ''}`;

/** Asserts that the recorded requests are exactly the expected ones, with auth, bodies and keys. */
function expectSent(recorded: Recorded[], sends: Expected[]): void {
	expect(recorded.map((r) => canonical(lineOf(r)))).toEqual(sends.map((s) => canonical(s.request)));
	recorded.forEach((r, i) => {
		// every operation authenticates with the API key as a bearer token
		expect(r.headers.authorization).toBe(`Bearer ${API_KEY}`);
		if (WRITES.has(r.method)) {
			// writes carry a key so that a retry cannot apply them twice
			expect(r.headers['idempotency-key']).toEqual(expect.stringMatching(/\S/));
			expect(r.body).toEqual(sends[i].body);
			if (r.body !== undefined) expect(r.headers['content-type']).toMatch(/^application\/json/);
		} else {
			expect(r.headers['idempotency-key']).toBeUndefined();
			expect(r.body).toBeUndefined();
		}
	});
}

let recorder: Recorder;

beforeAll(async () => {
	recorder = await startRecorder();
});

afterAll(async () => {
	await recorder?.close();
});

test('every operation of the action node has a contract case', () => {
	const all = Object.entries(operations).flatMap(([resource, ops]) =>
		Object.keys(ops).map((op) => `${resource}.${op}`),
	);
	expect(all.filter((op) => !cases.some((c) => c.operation === op))).toEqual([]);
});

describe('Marketplace node: what it sends is what the documentation asks for', () => {
	test.each(
		cases.map(
			(c, i) => [`${c.operation}: ${c.sends.map((s) => s.request).join(' + ')}`, i] as const,
		),
	)('%s', async (_name, index) => {
		const c = cases[index];
		recorder.reset(c.answers);
		const result = await runNode({
			node: new Marketplace(),
			credentialTypes: [credentialType],
			credentials: { marketplaceApi: { baseUrl: recorder.baseUrl, apiKey: API_KEY } },
			parameters: c.parameters,
			inputItems: c.inputItems,
		});
		expectSent(recorder.requests, c.sends);
		expect(result.error).toBeUndefined();
	});
});

describe('Marketplace Trigger: registering and deleting its endpoint', () => {
	const WEBHOOK_ID = '0b7c2a8e-3d4f-4e5a-8b6c-7d8e9f0a1b2c';
	// n8n's production webhook address: <base>/<webhookId>/<path of the node's webhook>
	const HOOK_URL = `https://n8n.example.com/webhook/${WEBHOOK_ID}/webhook`;

	test('activation creates one endpoint for its URL and event types; deactivation lists, then deletes it', async () => {
		const harness = await createTriggerHarness({
			node: new MarketplaceTrigger(),
			credentialTypes: [credentialType],
			credentials: { marketplaceApi: { baseUrl: recorder.baseUrl, apiKey: API_KEY } },
			parameters: {
				eventTypes: ['order.created', 'order.cancelled'],
				description: 'Orders to n8n',
				options: {},
			},
			webhookBaseUrl: 'https://n8n.example.com/webhook',
			webhookId: WEBHOOK_ID,
		});
		try {
			const endpoint = {
				...ENDPOINT,
				id: 41,
				url: HOOK_URL,
				description: 'Orders to n8n',
				eventTypes: ['order.created', 'order.cancelled'],
			};
			recorder.reset({
				'POST /v1/webhook-endpoints': {
					status: 201,
					body: { webhookEndpoint: endpoint, secret: SECRET },
				},
				// the activation check: the service's test delivery reached the trigger (401: no secret saved yet)
				'POST /v1/webhook-endpoints/41/test': {
					body: { id: 7, status: 'Failed', attempts: 1, responseStatusCode: 401 },
				},
			});
			await harness.create();
			expectSent(recorder.requests, [
				{
					request: 'POST /v1/webhook-endpoints',
					body: {
						url: HOOK_URL,
						description: 'Orders to n8n',
						eventTypes: ['order.created', 'order.cancelled'],
					},
				},
				{ request: 'POST /v1/webhook-endpoints/41/test' },
			]);

			recorder.reset({
				'GET /v1/webhook-endpoints': { body: { webhookEndpoints: [endpoint] } },
				'DELETE /v1/webhook-endpoints/41': { status: 204, body: undefined },
			});
			await harness.delete();
			expectSent(recorder.requests, [
				{ request: 'GET /v1/webhook-endpoints' },
				{ request: 'DELETE /v1/webhook-endpoints/41' },
			]);
		} finally {
			await harness.close();
		}
	});
});

describe('Marketplace Polling Trigger: its order read', () => {
	test('the first poll reads orders from the chosen start, brandIds comma-separated, the date in UTC', async () => {
		const poller = createPollHarness({
			node: new MarketplacePollingTrigger(),
			credentialTypes: [credentialType],
			credentials: { marketplaceApi: { baseUrl: recorder.baseUrl, apiKey: API_KEY } },
			parameters: {
				events: ['created'],
				filters: { brandIds: '2, 4' },
				options: { startDate: '2026-11-20T18:00:00+01:00' },
			},
		});
		recorder.reset({ 'GET /v1/orders': { body: { orders: [ORDER] } } });
		await poller.poll('trigger');
		expectSent(recorder.requests, [
			{ request: 'GET /v1/orders?brandIds=2,4&startDate=2026-11-20T17:00:00Z' },
		]);
	});
});

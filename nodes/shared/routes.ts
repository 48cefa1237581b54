/**
 * The one route table of the Marketplace Management Service API, read by the node's transport and
 * by the test sandbox. Paths the service's documentation leaves out are fixed here, once.
 *
 * Pure data: no n8n imports.
 */

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** How list-valued query parameters are written: comma-separated or as repeated keys, per operation. */
export type ListEncoding =
	/** one key, values joined by commas: `brandIds=1,2` */
	| 'comma'
	/** the key repeated once per value: `brandIds=1&brandIds=2` */
	| 'repeat';

export interface Pagination {
	/** name of the collection member of the response, e.g. `products` */
	collection: string;
	/** page size when `limit` is omitted (undefined: the whole set is returned) */
	defaultLimit?: number;
	/** largest allowed `limit` */
	maxLimit: number;
}

export interface Route {
	method: HttpMethod;
	/** path under the service root, with `{name}` placeholders */
	path: string;
	/** permission the API key needs; undefined: any valid key */
	permission?: string;
	/** encoding of the route's list-valued query parameters */
	listEncoding?: ListEncoding;
	/** present on paginated reads */
	pagination?: Pagination;
	/** when the response carries no pagination, the member holding the list (absent: the body itself) */
	collection?: string;
	/** true for writes: they carry an Idempotency-Key */
	write?: boolean;
}

export const ROUTES = {
	connectSaleChannel: {
		method: 'POST',
		path: '/v1/brands/{brandId}/sale-channels/connect',
		permission: 'saleChannelAuth.write',
		write: true,
	},
	listProducts: {
		method: 'GET',
		path: '/v1/products',
		permission: 'products.read',
		listEncoding: 'comma',
		pagination: { collection: 'products', defaultLimit: 10, maxLimit: 100 },
	},
	listOrders: {
		method: 'GET',
		path: '/v1/orders',
		permission: 'orders.read',
		listEncoding: 'comma',
		collection: 'orders',
	},
	getOrder: {
		method: 'GET',
		path: '/v1/orders/{id}',
		permission: 'orders.read',
	},
	listReturns: {
		method: 'GET',
		path: '/v1/returns',
		permission: 'returns.read',
		listEncoding: 'comma',
		pagination: { collection: 'returns', defaultLimit: 10, maxLimit: 100 },
	},
	listPurchaseOrders: {
		method: 'GET',
		path: '/v1/vendor/purchase-orders',
		permission: 'purchaseOrders.read',
		listEncoding: 'repeat',
		pagination: { collection: 'purchaseOrders', defaultLimit: 10, maxLimit: 100 },
	},
	exportPurchaseOrders: {
		method: 'GET',
		path: '/v1/vendor/purchase-orders/export',
		permission: 'purchaseOrders.read',
		listEncoding: 'comma',
		collection: 'purchaseOrders',
	},
	markOrdersPacked: {
		method: 'POST',
		path: '/v1/fulfillment/orders/packed',
		permission: 'fulfillment.write',
		write: true,
	},
	getBrandHealth: {
		method: 'GET',
		path: '/v1/brand-health',
		permission: 'brand-health.read',
		listEncoding: 'repeat',
	},
	listInventoryForecasts: {
		method: 'GET',
		path: '/v1/inventory-forecasts',
		permission: 'inventory.read',
		listEncoding: 'comma',
		pagination: { collection: 'forecasts', defaultLimit: 25, maxLimit: 100 },
	},
	listBrands: {
		method: 'GET',
		path: '/v1/brands',
		permission: 'brands.read',
		/** limit omitted: the whole accessible set, `{ brands }` without pagination */
		pagination: { collection: 'brands', maxLimit: 100 },
	},
	createWebhookEndpoint: {
		method: 'POST',
		path: '/v1/webhook-endpoints',
		write: true,
	},
	listWebhookEndpoints: {
		method: 'GET',
		path: '/v1/webhook-endpoints',
		collection: 'webhookEndpoints',
	},
	getWebhookEndpoint: {
		method: 'GET',
		path: '/v1/webhook-endpoints/{id}',
	},
	updateWebhookEndpoint: {
		method: 'PATCH',
		path: '/v1/webhook-endpoints/{id}',
		write: true,
	},
	deleteWebhookEndpoint: {
		method: 'DELETE',
		path: '/v1/webhook-endpoints/{id}',
		write: true,
	},
	testWebhookEndpoint: {
		method: 'POST',
		path: '/v1/webhook-endpoints/{id}/test',
		write: true,
	},
	rotateWebhookEndpointSecret: {
		method: 'POST',
		path: '/v1/webhook-endpoints/{id}/rotate-secret',
		write: true,
	},
	listWebhookDeliveries: {
		method: 'GET',
		path: '/v1/webhook-endpoints/{id}/deliveries',
		pagination: { collection: 'deliveries', defaultLimit: 10, maxLimit: 100 },
	},
} as const satisfies Record<string, Route>;

export type RouteName = keyof typeof ROUTES;

/** Largest number of order ids one mark-packed request accepts (sandbox and node agree). */
export const MARK_PACKED_MAX_BATCH = 100;

/**
 * Event types a webhook endpoint can subscribe to, with the names the nodes show for them
 * (`webhook.test` cannot be subscribed to). The one list of them: every other list is derived.
 */
export const EVENT_TYPES = [
	{ value: 'order.created', name: 'Order Created', description: 'An order arrives for a brand' },
	{ value: 'order.cancelled', name: 'Order Cancelled', description: 'An order is cancelled' },
	{ value: 'order.returned', name: 'Order Returned', description: 'An order is returned' },
	{
		value: 'brand_health.band_entered',
		name: 'Brand Health Band Entered',
		description: 'A brand health dimension enters a band',
	},
	{
		value: 'brand_health.band_exited',
		name: 'Brand Health Band Exited',
		description: 'A brand health dimension leaves a band',
	},
] as const;

export type SubscribableEventType = (typeof EVENT_TYPES)[number]['value'];

export const SUBSCRIBABLE_EVENT_TYPES: readonly SubscribableEventType[] = EVENT_TYPES.map(
	(t) => t.value,
);

/** The chosen event types (a node parameter's value): known, unique, in the table's order. */
export function normaliseEventTypes(value: unknown): SubscribableEventType[] {
	const chosen = new Set(Array.isArray(value) ? value.map(String) : []);
	return SUBSCRIBABLE_EVENT_TYPES.filter((type) => chosen.has(type));
}

/** The event types as n8n options, sorted by name as n8n's lint rules want. */
export const EVENT_TYPE_OPTIONS = [...EVENT_TYPES]
	.sort((a, b) => a.name.localeCompare(b.name))
	.map(({ name, value, description }) => ({ name, value, description }));

/** Order statuses the service's filters know; the sandbox also uses Cancelled and Returned. */
export const ORDER_STATUSES = ['Created', 'Packed', 'Cancelled', 'Returned'] as const;

/** Purchase order statuses the service's filters know. */
export const PURCHASE_ORDER_STATUSES = ['Confirmed', 'Closed'] as const;

/** Fills `{name}` placeholders of a route path; values are URI-encoded. */
export function fillPath(path: string, params: Record<string, string | number>): string {
	return path.replace(/\{(\w+)\}/g, (_, name: string) => {
		const value = params[name];
		if (value === undefined) throw new Error(`missing path parameter ${name}`);
		return encodeURIComponent(String(value));
	});
}

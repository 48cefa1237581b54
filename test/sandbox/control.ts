import type { RouteName } from '../../nodes/shared/routes';
import type { FaultMode } from './faults';
import type { Delivery, DeliveryAttempt, EventEnvelope, Order, User } from './model';
import type { LoggedRequest } from './requestLog';
import type { SendOptions } from './delivery';
import type { deliveryDetail, endpointView } from './views';

export type DeliveryDetail = ReturnType<typeof deliveryDetail>;
export type ControlEndpoint = ReturnType<typeof endpointView> & {
	ownerUserId: number;
	secret: string;
	previousSecret: string | null;
	previousSecretUntil: string | null;
};
export interface EmittedEvent {
	event: EventEnvelope;
	deliveryIds: number[];
}
export interface FaultRequest {
	route: RouteName;
	mode: FaultMode;
	when?: 'before' | 'after';
	count?: number;
	retryAfterSeconds?: number;
	hangMs?: number;
}
export interface SendResult {
	statusCode: number | null;
	error: string | null;
	webhookId: string;
	timestamp: number;
	payload: string;
	signatureHeader: string;
}

/** Typed HTTP client of the sandbox control API (/_sandbox/...). Everything goes over HTTP. */
export class SandboxControl {
	constructor(readonly baseUrl: string) {}

	private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
		const response = await fetch(`${this.baseUrl}/_sandbox${path}`, {
			method,
			headers: body === undefined ? {} : { 'content-type': 'application/json' },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const text = await response.text();
		if (!response.ok) throw new Error(`control ${method} ${path} -> ${response.status}: ${text}`);
		return (text ? JSON.parse(text) : undefined) as T;
	}

	info() {
		return this.call<{ baseUrl: string; demoApiKey: string; options: Record<string, unknown> }>(
			'GET',
			'/info',
		);
	}
	reset() {
		return this.call<{ reset: true; demoApiKey: string }>('POST', '/reset', {});
	}

	createUser(spec: { permissions?: string[]; brandIds?: number[]; name?: string } = {}) {
		return this.call<{ userId: number; apiKey: string; user: User }>('POST', '/users', spec);
	}
	updateUser(userId: number, spec: { permissions?: string[]; brandIds?: number[] }) {
		return this.call<{ user: User }>('PATCH', `/users/${userId}`, spec);
	}
	/** another key of the same user (optionally with its own permissions) */
	createKey(userId: number, spec: { permissions?: string[] } = {}) {
		return this.call<{ userId: number; apiKey: string }>('POST', `/users/${userId}/keys`, spec);
	}
	revokeKey(apiKey: string) {
		return this.call<{ revoked: true }>('POST', `/keys/${encodeURIComponent(apiKey)}/revoke`, {});
	}

	createOrder(spec: {
		brandId: number;
		status?: 'Created' | 'Packed';
		fulfillmentModel?: string;
		saleChannelId?: number;
	}) {
		return this.call<EmittedEvent & { order: Order }>('POST', '/orders', spec);
	}
	cancelOrder(orderId: number) {
		return this.call<EmittedEvent & { order: Order }>('POST', `/orders/${orderId}/cancel`, {});
	}
	returnOrder(orderId: number) {
		return this.call<EmittedEvent & { order: Order }>('POST', `/orders/${orderId}/return`, {});
	}
	generateOrders(spec: { count: number; brandId?: number; status?: string }) {
		return this.call<{ created: number; firstId: number; lastId: number }>(
			'POST',
			'/orders/generate',
			spec,
		);
	}
	generateProducts(spec: { count: number; brandId?: number }) {
		return this.call<{ created: number; firstId: number; lastId: number; total: number }>(
			'POST',
			'/products/generate',
			spec,
		);
	}
	setBand(brandId: number, spec: { dimension: string; band: string; category?: string }) {
		return this.call<{ brandHealth: unknown; events: EmittedEvent[] }>(
			'POST',
			`/brand-health/${brandId}/band`,
			spec,
		);
	}
	/** emits an event; with endpointIds it goes to those endpoints regardless of subscription and scope */
	emitEvent(spec: { type: string; data?: Record<string, unknown>; endpointIds?: number[] }) {
		return this.call<EmittedEvent>('POST', '/events', spec);
	}

	/** runtime settings: timestampSkewSeconds is added to the webhook-timestamp of every delivery attempt */
	settings(spec: { timestampSkewSeconds?: number } = {}) {
		return this.call<{ settings: { timestampSkewSeconds: number } }>('POST', '/settings', spec);
	}
	clock() {
		return this.call<{ now: string; offsetSeconds: number }>('GET', '/clock');
	}
	/** moves the virtual clock and runs every attempt that became due, each at its exact scheduled time */
	advanceClock(seconds: number) {
		return this.call<{
			now: string;
			offsetSeconds: number;
			attempts: { deliveryId: number; attempt: DeliveryAttempt }[];
		}>('POST', '/clock/advance', { seconds });
	}
	/** the same, by whole milliseconds */
	advanceClockMs(milliseconds: number) {
		return this.call<{ now: string; offsetSeconds: number }>('POST', '/clock/advance', {
			milliseconds,
		});
	}

	injectFault(spec: FaultRequest) {
		return this.call<{ fault: Required<FaultRequest> & { remaining: number } }>(
			'POST',
			'/faults',
			spec,
		);
	}
	faults() {
		return this.call<{ faults: (Required<FaultRequest> & { remaining: number })[] }>(
			'GET',
			'/faults',
		);
	}
	clearFaults() {
		return this.call<void>('DELETE', '/faults');
	}

	async requests(since?: number): Promise<LoggedRequest[]> {
		return (
			await this.call<{ requests: LoggedRequest[] }>(
				'GET',
				`/requests${since === undefined ? '' : `?since=${since}`}`,
			)
		).requests;
	}
	clearRequests() {
		return this.call<void>('DELETE', '/requests');
	}

	async deliveries(endpointId?: number): Promise<DeliveryDetail[]> {
		return (
			await this.call<{ deliveries: DeliveryDetail[] }>(
				'GET',
				`/deliveries${endpointId === undefined ? '' : `?endpointId=${endpointId}`}`,
			)
		).deliveries;
	}
	/** sends a delivery's event again with the same webhook-id (a duplicate), one attempt */
	async redeliver(deliveryId: number): Promise<DeliveryDetail> {
		return (
			await this.call<{ delivery: DeliveryDetail }>(
				'POST',
				`/deliveries/${deliveryId}/redeliver`,
				{},
			)
		).delivery;
	}
	async endpoints(): Promise<ControlEndpoint[]> {
		return (await this.call<{ webhookEndpoints: ControlEndpoint[] }>('GET', '/webhook-endpoints'))
			.webhookEndpoints;
	}
	/** changes an endpoint's URL without the create-time checks (e.g. to a private address) */
	setEndpointUrl(endpointId: number, url: string) {
		return this.call<unknown>('PATCH', `/webhook-endpoints/${endpointId}`, { url });
	}
	/** one raw signed request to the endpoint URL, optionally tampered or with a skewed timestamp */
	send(endpointId: number, options: SendOptions = {}) {
		return this.call<SendResult>('POST', `/webhook-endpoints/${endpointId}/send`, options);
	}

	/** unauthenticated read of stored records: orders, products, returns, purchaseOrders, forecasts, brands, brandHealth, connections, users, categories */
	state<T = Record<string, unknown>>(collection: string, id: number): Promise<T>;
	state<T = Record<string, unknown>>(collection: string): Promise<T[]>;
	async state(collection: string, id?: number): Promise<unknown> {
		if (id !== undefined) return this.call('GET', `/state/${collection}/${id}`);
		return (await this.call<Record<string, unknown[]>>('GET', `/state/${collection}`))[collection];
	}
}

export type { Delivery };

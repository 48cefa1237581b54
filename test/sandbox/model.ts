/** Records the sandbox keeps. Dates of API-visible records are ISO 8601 UTC strings. */

export interface User {
	id: number;
	name: string;
	permissions: string[];
	brandIds: number[];
}

export interface ApiKeyRecord {
	key: string;
	userId: number;
	revoked: boolean;
	/** when set, the key's own permissions; otherwise the user's */
	permissions?: string[];
}

export interface Brand {
	id: number;
	name: string;
	country: string;
	createdAt: string;
}

export interface Category {
	id: number;
	name: string;
}

export interface Product {
	id: number;
	brandId: number;
	sku: string;
	name: string;
	categoryId: number;
	category: string;
	price: number;
	currency: string;
	stock: number;
	status: 'Active' | 'Inactive';
	createdAt: string;
	updatedAt: string;
}

export interface OrderItem {
	productId: number;
	sku: string;
	quantity: number;
	price: number;
}

export type OrderStatus = 'Created' | 'Packed' | 'Cancelled' | 'Returned';

export interface Order {
	id: number;
	brandId: number;
	orderNumber: string;
	status: OrderStatus;
	fulfillmentModel: string;
	saleChannelId: number;
	items: OrderItem[];
	totalAmount: number;
	currency: string;
	createdAt: string;
	updatedAt: string;
}

export interface ReturnRecord {
	id: number;
	orderId: number;
	brandId: number;
	status: 'Requested' | 'Received' | 'Refunded';
	reason: string;
	createdAt: string;
	updatedAt: string;
}

export interface PurchaseOrder {
	id: number;
	brandId: number;
	saleChannelId: number;
	poNumber: string;
	status: 'Confirmed' | 'Closed';
	lines: { sku: string; quantity: number; unitCost: number }[];
	expectedDeliveryDate: string;
	createdAt: string;
	updatedAt: string;
}

export interface HealthDimension {
	dimension: string;
	band: string;
	score: number;
	category: string;
}

export interface BrandHealth {
	brandId: number;
	categories: string[];
	dimensions: HealthDimension[];
	updatedAt: string;
}

export interface Forecast {
	id: number;
	brandId: number;
	productId: number;
	sku: string;
	horizonDays: number;
	forecastUnits: number;
	stockOnHand: number;
	daysOfCover: number;
	stockoutRisk: 'Low' | 'Medium' | 'High';
	generatedAt: string;
}

export interface SaleChannel {
	id: number;
	name: string;
	authType: 'apiKey' | 'oauth' | 'credentials';
}

export interface Connection {
	id: number;
	brandId: number;
	saleChannelName: string;
	status: string;
	connectionDate: string;
	connectionError?: string;
	oauthUrl?: string;
	sellerFulfillmentSetup?: Record<string, unknown>;
}

export interface WebhookEndpoint {
	id: number;
	ownerUserId: number;
	url: string;
	description: string;
	eventTypes: string[];
	status: 'Enabled' | 'Disabled';
	disabledReason: string | null;
	createdAt: number;
	updatedAt: number;
	secret: string;
	previousSecret: string | null;
	/** virtual ms until which the previous secret also signs */
	previousSecretUntil: number | null;
	/** virtual ms from which "no successful delivery for 5 days" is measured */
	healthySince: number;
}

export interface EventEnvelope {
	id: string;
	type: string;
	createdAt: string;
	data: Record<string, unknown>;
}

export interface DeliveryAttempt {
	number: number;
	/** virtual time of the attempt */
	at: string;
	atMs: number;
	/** webhook-timestamp header sent (real Unix seconds, plus any skew) */
	timestampSent: number;
	statusCode: number | null;
	error: string | null;
	signatureHeader: string;
	durationMs: number;
}

export type DeliveryStatus = 'Pending' | 'Delivered' | 'Failed';

export interface Delivery {
	id: number;
	webhookEndpointId: number;
	kind: 'event' | 'test' | 'redelivery';
	event: EventEnvelope;
	/** the exact body bytes sent on every attempt */
	payload: string;
	status: DeliveryStatus;
	maxAttempts: number;
	attempts: DeliveryAttempt[];
	/** virtual ms of the next attempt while Pending */
	nextAttemptAt: number | null;
	failureReason: string | null;
	createdAt: number;
	updatedAt: number;
}

import { ALL_PERMISSIONS } from './permissions';
import type { Order, OrderStatus, Product } from './model';
import { Prng } from './prng';
import { Store } from './store';

/** The demo API key printed at start-up: all permissions, brands 1-5 (brands 6 and 7 are outside). */
export const DEMO_API_KEY = 'mk_demo_5b7e2c9a41d04f6e8a3c';
export const DEMO_USER_ID = 1;
export const IN_SCOPE_BRAND_IDS = [1, 2, 3, 4, 5];
export const OUT_OF_SCOPE_BRAND_IDS = [6, 7];

const BRAND_NAMES = [
	'Northwind Apparel',
	'Contoso Home',
	'Fabrikam Footwear',
	'Tailspin Beauty',
	'Litware Electronics',
	'Adatum Outdoor',
	'Proseware Kids',
];
/** "Home, Garden" has a comma on purpose: brand health reads categories as repeated keys. */
export const CATEGORY_NAMES = [
	'Apparel',
	'Footwear',
	'Home, Garden',
	'Beauty',
	'Electronics',
	'Outdoor',
];
export const HEALTH_DIMENSIONS = [
	'ListingQuality',
	'DeliveryPerformance',
	'CustomerSatisfaction',
	'PricingCompetitiveness',
];
export const HEALTH_BANDS = ['Excellent', 'Good', 'AtRisk', 'Critical'];
export const FULFILLMENT_MODELS = ['Merchant', 'Marketplace'];
export const SALE_CHANNELS = [
	{ id: 1, name: 'Amazon', authType: 'apiKey' as const },
	{ id: 2, name: 'Shopify', authType: 'oauth' as const },
	{ id: 3, name: 'Zalando', authType: 'credentials' as const },
];

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const PRODUCTS_PER_IN_SCOPE_BRAND = 64;
const PRODUCTS_PER_OTHER_BRAND = 20;
const SEED_ORDERS = 96;
const SEED_PURCHASE_ORDERS = 64;

export function bandForScore(score: number): string {
	if (score >= 85) return 'Excellent';
	if (score >= 70) return 'Good';
	if (score >= 50) return 'AtRisk';
	return 'Critical';
}

export function scoreForBand(band: string): number {
	return { Excellent: 92, Good: 77, AtRisk: 60, Critical: 35 }[band] ?? 50;
}

/** Builds the deterministic demo data set; times are relative to `nowMs`. */
export function seedStore(seed: number, nowMs: number): Store {
	const store = new Store(new Prng(seed));
	const rng = store.rng;
	store.seededAt = nowMs;
	const iso = (ms: number) => new Date(ms).toISOString();

	store.users.push({
		id: store.nextId('user'),
		name: 'Demo merchant',
		permissions: [...ALL_PERMISSIONS],
		brandIds: [...IN_SCOPE_BRAND_IDS],
	});
	store.keys.set(DEMO_API_KEY, { key: DEMO_API_KEY, userId: DEMO_USER_ID, revoked: false });
	store.demoApiKey = DEMO_API_KEY;

	BRAND_NAMES.forEach((name, i) =>
		store.brands.push({
			id: store.nextId('brand'),
			name,
			country: rng.pick(['DE', 'FR', 'NL', 'IT', 'ES']),
			createdAt: iso(nowMs - (400 - i) * DAY),
		}),
	);
	CATEGORY_NAMES.forEach((name) => store.categories.push({ id: store.nextId('category'), name }));
	store.saleChannels = SALE_CHANNELS.map((c) => ({ ...c }));

	for (const brand of store.brands) {
		const count = IN_SCOPE_BRAND_IDS.includes(brand.id)
			? PRODUCTS_PER_IN_SCOPE_BRAND
			: PRODUCTS_PER_OTHER_BRAND;
		addProducts(store, count, brand.id, nowMs - 30 * DAY);
	}

	for (let i = 0; i < SEED_ORDERS; i++) {
		const status: OrderStatus = (
			[
				'Created',
				'Created',
				'Created',
				'Packed',
				'Packed',
				'Packed',
				'Cancelled',
				'Returned',
			] as const
		)[i % 8];
		const brandId = store.brands[i % store.brands.length].id;
		const createdAt = nowMs - (SEED_ORDERS - i) * 2.5 * HOUR - rng.int(0, 3_000_000);
		addOrder(store, { brandId, status }, createdAt);
	}

	for (let i = 0; i < SEED_PURCHASE_ORDERS; i++) {
		const brandId = store.brands[i % store.brands.length].id;
		const createdAt = nowMs - (SEED_PURCHASE_ORDERS - i) * 6 * HOUR;
		const products = store.products.filter((p) => p.brandId === brandId);
		store.purchaseOrders.push({
			id: store.nextId('purchaseOrder', 7001),
			brandId,
			saleChannelId: SALE_CHANNELS[i % SALE_CHANNELS.length].id,
			poNumber: `PO-${202600 + i}`,
			status: i % 3 === 2 ? 'Closed' : 'Confirmed',
			lines: [0, 1].map(() => {
				const p = rng.pick(products);
				return { sku: p.sku, quantity: rng.int(10, 200), unitCost: p.price / 2 };
			}),
			expectedDeliveryDate: iso(createdAt + 14 * DAY).slice(0, 10),
			createdAt: iso(createdAt),
			updatedAt: iso(createdAt + HOUR),
		});
	}

	for (const brand of store.brands) {
		const categories = [
			CATEGORY_NAMES[(brand.id - 1) % CATEGORY_NAMES.length],
			CATEGORY_NAMES[(brand.id + 1) % CATEGORY_NAMES.length],
		];
		if (brand.id === 2 && !categories.includes('Home, Garden')) categories.push('Home, Garden');
		const dimensions = categories.flatMap((category) =>
			HEALTH_DIMENSIONS.map((dimension) => {
				const score = rng.int(30, 99);
				return { dimension, band: bandForScore(score), score, category };
			}),
		);
		store.brandHealth.push({
			brandId: brand.id,
			categories,
			dimensions,
			updatedAt: iso(nowMs - DAY),
		});
	}

	for (const product of store.products.filter((p) => p.id % 2 === 0)) {
		const forecastUnits = rng.int(0, 400);
		const stockOnHand = product.stock;
		const daysOfCover = forecastUnits === 0 ? 999 : Math.round((stockOnHand / forecastUnits) * 30);
		store.forecasts.push({
			id: store.nextId('forecast'),
			brandId: product.brandId,
			productId: product.id,
			sku: product.sku,
			horizonDays: 30,
			forecastUnits,
			stockOnHand,
			daysOfCover,
			stockoutRisk: daysOfCover < 14 ? 'High' : daysOfCover < 30 ? 'Medium' : 'Low',
			generatedAt: iso(nowMs - 6 * HOUR),
		});
	}
	return store;
}

/** Adds `count` products (spread over the existing brands unless `brandId` is given). */
export function addProducts(
	store: Store,
	count: number,
	brandId: number | undefined,
	createdAtMs: number,
): Product[] {
	const rng = store.rng;
	const added: Product[] = [];
	for (let i = 0; i < count; i++) {
		const id = store.nextId('product');
		const bId = brandId ?? store.brands[i % store.brands.length].id;
		const category = store.categories[id % store.categories.length];
		const product: Product = {
			id,
			brandId: bId,
			sku: `SKU-${bId}-${String(id).padStart(6, '0')}`,
			name: `${rng.pick(['Classic', 'Urban', 'Eco', 'Pro', 'Lite', 'Prime'])} ${rng.pick(['Jacket', 'Sneaker', 'Lamp', 'Serum', 'Speaker', 'Tent', 'Mug'])} ${id}`,
			categoryId: category.id,
			category: category.name,
			price: rng.int(500, 25_000) / 100,
			currency: 'EUR',
			stock: rng.int(0, 500),
			status: id % 11 === 0 ? 'Inactive' : 'Active',
			createdAt: new Date(createdAtMs + i * 1000).toISOString(),
			updatedAt: new Date(createdAtMs + i * 1000).toISOString(),
		};
		store.products.push(product);
		added.push(product);
	}
	return added;
}

export interface NewOrder {
	brandId: number;
	status?: OrderStatus;
	fulfillmentModel?: string;
	saleChannelId?: number;
}

/** Adds one order of a brand, created at `createdAtMs`. */
export function addOrder(store: Store, spec: NewOrder, createdAtMs: number): Order {
	const rng = store.rng;
	const id = store.nextId('order', 1001);
	const products = store.products.filter((p) => p.brandId === spec.brandId);
	const items = products.length
		? Array.from({ length: rng.int(1, 3) }, () => {
				const p = rng.pick(products);
				return { productId: p.id, sku: p.sku, quantity: rng.int(1, 4), price: p.price };
			})
		: [];
	const status = spec.status ?? 'Created';
	const order: Order = {
		id,
		brandId: spec.brandId,
		orderNumber: `MM-${id}`,
		status,
		fulfillmentModel: spec.fulfillmentModel ?? rng.pick(FULFILLMENT_MODELS),
		saleChannelId: spec.saleChannelId ?? rng.pick(SALE_CHANNELS).id,
		items,
		totalAmount: Math.round(items.reduce((sum, it) => sum + it.price * it.quantity, 0) * 100) / 100,
		currency: 'EUR',
		createdAt: new Date(createdAtMs).toISOString(),
		updatedAt: new Date(createdAtMs + (status === 'Created' ? 0 : HOUR)).toISOString(),
	};
	store.orders.push(order);
	if (status === 'Returned') addReturn(store, order, createdAtMs + HOUR);
	return order;
}

export function addReturn(store: Store, order: Order, createdAtMs: number) {
	const record = {
		id: store.nextId('return', 5001),
		orderId: order.id,
		brandId: order.brandId,
		status: store.rng.pick(['Requested', 'Received', 'Refunded'] as const),
		reason: store.rng.pick(['Damaged', 'WrongSize', 'NotAsDescribed', 'ChangedMind']),
		createdAt: new Date(createdAtMs).toISOString(),
		updatedAt: new Date(createdAtMs).toISOString(),
	};
	store.returns.push(record);
	return record;
}

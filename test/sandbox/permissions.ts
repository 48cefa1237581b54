/** Permissions a key may carry (the route table names which one each operation needs). */
export const ALL_PERMISSIONS = [
	'products.read',
	'orders.read',
	'returns.read',
	'purchaseOrders.read',
	'brand-health.read',
	'inventory.read',
	'brands.read',
	'fulfillment.write',
	'saleChannelAuth.write',
] as const;

/** Read permission the owner of an endpoint needs to receive an event of a type. */
export function permissionForEvent(type: string): string | undefined {
	if (type.startsWith('order.')) return 'orders.read';
	if (type.startsWith('brand_health.')) return 'brand-health.read';
	return undefined;
}

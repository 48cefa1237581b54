/**
 * Order records as the service's order list returns them, read by both triggers (the polling
 * trigger's change detection, the webhook trigger's sample). Pure: no n8n imports.
 */

/** An order record as the list returns it; only these fields are read. */
export interface OrderRecord {
	id?: unknown;
	status?: unknown;
	createdAt?: unknown;
	updatedAt?: unknown;
	[field: string]: unknown;
}

/** Unix ms of an ISO timestamp, or undefined when it is not one. */
export function timeOf(value: unknown): number | undefined {
	if (typeof value !== 'string') return undefined;
	const ms = Date.parse(value);
	return Number.isNaN(ms) ? undefined : ms;
}

/** The most recent order (by createdAt, then id) among those in a wanted status (all when none is named). */
export function latestOrder(
	orders: readonly OrderRecord[],
	statuses: readonly string[],
): OrderRecord | undefined {
	let best: OrderRecord | undefined;
	let bestTime = -Infinity;
	for (const order of orders) {
		if (statuses.length > 0 && !statuses.includes(String(order.status))) continue;
		const time = timeOf(order.createdAt) ?? -Infinity;
		if (
			best === undefined ||
			time > bestTime ||
			(time === bestTime && Number(order.id) > Number(best.id))
		) {
			best = order;
			bestTime = time;
		}
	}
	return best;
}

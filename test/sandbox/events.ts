import { randomUUID } from 'node:crypto';
import type { EventEnvelope, WebhookEndpoint } from './model';
import { permissionForEvent } from './permissions';
import type { Store } from './store';

export function newEnvelope(
	type: string,
	data: Record<string, unknown>,
	createdAt: string,
): EventEnvelope {
	return { id: `evt_${randomUUID()}`, type, createdAt, data };
}

/**
 * Endpoints an event goes to, decided when it happens: Enabled, subscribed to the
 * type, and owned by a user holding the read permission with the event's brand in scope.
 */
export function recipientsFor(store: Store, event: EventEnvelope): WebhookEndpoint[] {
	const brandId = typeof event.data.brandId === 'number' ? event.data.brandId : undefined;
	const permission = permissionForEvent(event.type);
	return store.endpoints.filter((endpoint) => {
		const owner = store.user(endpoint.ownerUserId);
		if (!owner || endpoint.status !== 'Enabled' || !endpoint.eventTypes.includes(event.type))
			return false;
		if (permission && !owner.permissions.includes(permission)) return false;
		return brandId === undefined || owner.brandIds.includes(brandId);
	});
}

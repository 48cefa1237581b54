import type { Delivery, WebhookEndpoint } from './model';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The endpoint as the API shows it (2.1): never the secret. */
export function endpointView(e: WebhookEndpoint) {
	return {
		id: e.id,
		url: e.url,
		description: e.description,
		eventTypes: [...e.eventTypes],
		status: e.status,
		disabledReason: e.disabledReason,
		createdAt: iso(e.createdAt),
		updatedAt: iso(e.updatedAt),
	};
}

/** The delivery record as the API shows it (2.2). */
export function deliveryView(d: Delivery) {
	const last = d.attempts[d.attempts.length - 1];
	return {
		id: d.id,
		webhookEndpointId: d.webhookEndpointId,
		eventId: d.event.id,
		eventType: d.event.type,
		status: d.status,
		attempts: d.attempts.length,
		responseStatusCode: last?.statusCode ?? null,
		lastAttemptAt: last?.at ?? null,
		nextAttemptAt: iso(d.nextAttemptAt),
		createdAt: iso(d.createdAt),
		updatedAt: iso(d.updatedAt),
	};
}

/** The delivery with everything the control API shows: event, payload, attempts, failure reason. */
export function deliveryDetail(d: Delivery) {
	return {
		...deliveryView(d),
		kind: d.kind,
		event: d.event,
		payload: d.payload,
		failureReason: d.failureReason,
		attemptLog: d.attempts,
	};
}

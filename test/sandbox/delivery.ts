import { checkTarget } from './addressCheck';
import { newEnvelope, recipientsFor } from './events';
import type { Delivery, DeliveryAttempt, EventEnvelope, WebhookEndpoint } from './model';
import { postOnce, signatureHeader, USER_AGENT } from './sender';
import type { SandboxState } from './state';

/** Waits after attempt 1..7 before the next one, in seconds. */
export const RETRY_SCHEDULE_SECONDS = [60, 300, 1800, 7200, 18_000, 36_000, 86_400];
export const MAX_ATTEMPTS = RETRY_SCHEDULE_SECONDS.length + 1;
export const DISABLE_AFTER_MS = 5 * 24 * 3_600_000;
export const SECRET_OVERLAP_MS = 24 * 3_600_000;

export interface SendOptions {
	event?: { id?: string; type?: string; createdAt?: string; data?: Record<string, unknown> };
	tamper?: 'body' | 'signature' | 'id';
	timestampOffsetSeconds?: number;
}

/**
 * The delivery engine: fans events out to endpoints, signs and posts each attempt, retries on the
 * 6.4 schedule measured on the virtual clock, fails and disables per 3.1/3.2.
 */
export class DeliveryEngine {
	private inFlight = new Map<number, Promise<void>>();
	private timer: NodeJS.Timeout | undefined;
	private advancing: Promise<unknown> = Promise.resolve();
	private isAdvancing = false;
	private attemptListeners = new Set<(d: Delivery, a: DeliveryAttempt) => void>();

	constructor(private readonly state: SandboxState) {}

	start(): void {
		this.timer = setInterval(() => {
			if (!this.isAdvancing) this.runDue(false);
		}, this.state.options.tickMs);
		this.timer.unref();
	}

	async stop(): Promise<void> {
		clearInterval(this.timer);
		await this.settle();
	}

	/** Waits for every attempt under way. */
	async settle(): Promise<void> {
		while (this.inFlight.size) await Promise.allSettled([...this.inFlight.values()]);
	}

	/** An event happened: one delivery per recipient, first attempt right away. */
	emit(
		type: string,
		data: Record<string, unknown>,
		endpointIds?: number[],
	): { event: EventEnvelope; deliveries: Delivery[] } {
		const { store, clock } = this.state;
		const event = newEnvelope(type, data, clock.iso());
		const endpoints = endpointIds
			? endpointIds
					.map((id) => store.endpoint(id))
					.filter((e): e is WebhookEndpoint => e?.status === 'Enabled')
			: recipientsFor(store, event);
		const deliveries = endpoints.map((endpoint) =>
			this.createDelivery(endpoint, event, 'event', MAX_ATTEMPTS),
		);
		if (deliveries.length) setImmediate(() => this.runDue(false));
		return { event, deliveries };
	}

	/** The test operation: a webhook.test delivery with exactly one attempt, awaited. */
	async test(endpoint: WebhookEndpoint): Promise<Delivery> {
		const event = newEnvelope(
			'webhook.test',
			{ webhookEndpointId: endpoint.id },
			this.state.clock.iso(),
		);
		const delivery = this.createDelivery(endpoint, event, 'test', 1);
		await this.attempt(delivery, this.state.clock.now());
		return delivery;
	}

	/** Sends an earlier delivery's event again (same webhook-id and body): a duplicate, one attempt. */
	async redeliver(original: Delivery): Promise<Delivery> {
		const endpoint = this.state.store.endpoint(original.webhookEndpointId);
		if (!endpoint) throw new Error('endpoint gone');
		const delivery = this.createDelivery(
			endpoint,
			original.event,
			'redelivery',
			1,
			original.payload,
		);
		await this.attempt(delivery, this.state.clock.now());
		return delivery;
	}

	/**
	 * Moves the virtual clock forward by `seconds`, stopping at each due attempt so that it runs at
	 * exactly its scheduled virtual time. Resolves with the attempts made.
	 */
	advance(seconds: number): Promise<{ deliveryId: number; attempt: DeliveryAttempt }[]> {
		const run = async () => {
			this.isAdvancing = true;
			const made: { deliveryId: number; attempt: DeliveryAttempt }[] = [];
			const listener = (d: Delivery, attempt: DeliveryAttempt) =>
				made.push({ deliveryId: d.id, attempt });
			this.attemptListeners.add(listener);
			try {
				await this.settle();
				const ms = Math.round(seconds * 1000);
				// the offset grows by exactly `ms`, however much real time the attempts below take
				const offsetAfter = this.state.clock.offsetMilliseconds + ms;
				const target = this.state.clock.now() + ms;
				for (;;) {
					const due = this.pending().filter((d) => (d.nextAttemptAt as number) <= target);
					if (!due.length) break;
					const next = Math.min(...due.map((d) => d.nextAttemptAt as number));
					this.state.clock.setAtLeast(next);
					this.runDue(true, next);
					await this.settle();
				}
				this.state.clock.setOffsetAtLeast(offsetAfter);
				return made;
			} finally {
				this.attemptListeners.delete(listener);
				this.isAdvancing = false;
			}
		};
		const result = this.advancing.then(run, run);
		this.advancing = result.catch(() => undefined);
		return result;
	}

	/** An endpoint stopped receiving (disabled or deleted): its pending deliveries fail. */
	failPending(endpointId: number, reason: string): void {
		for (const d of this.pending().filter((p) => p.webhookEndpointId === endpointId))
			this.finish(d, 'Failed', reason);
	}

	/** One raw signed request to an endpoint, optionally tampered or with a skewed timestamp. */
	async send(endpoint: WebhookEndpoint, options: SendOptions) {
		const { clock } = this.state;
		const given = options.event ?? {};
		const event: EventEnvelope = {
			...newEnvelope(
				given.type ?? 'order.created',
				given.data ?? { brandId: 1, orderId: 1001 },
				given.createdAt ?? clock.iso(),
			),
			...(given.id ? { id: given.id } : {}),
		};
		let payload = JSON.stringify(event);
		const timestamp = Math.floor(Date.now() / 1000) + (options.timestampOffsetSeconds ?? 0);
		let signature = signatureHeader(
			this.secretsOf(endpoint, clock.now()),
			event.id,
			timestamp,
			payload,
		);
		let webhookId = event.id;
		if (options.tamper === 'body') payload = payload.replace('"type":', '"type" :');
		if (options.tamper === 'signature') signature = `v1,${Buffer.alloc(32, 7).toString('base64')}`;
		if (options.tamper === 'id') webhookId = `${event.id}x`;
		const target = await checkTarget(endpoint.url, this.state.options.allowHttpLoopback);
		if (!target.ok)
			return {
				statusCode: null,
				error: target.reason,
				webhookId,
				timestamp,
				payload,
				signatureHeader: signature,
			};
		const outcome = await postOnce(
			endpoint.url,
			target,
			this.headers(webhookId, timestamp, signature),
			payload,
			this.state.options.deliveryTimeoutMs,
		);
		return {
			statusCode: outcome.statusCode,
			error: outcome.error,
			webhookId,
			timestamp,
			payload,
			signatureHeader: signature,
		};
	}

	private pending(): Delivery[] {
		return this.state.store.deliveries.filter(
			(d) => d.status === 'Pending' && d.nextAttemptAt !== null && !this.inFlight.has(d.id),
		);
	}

	private createDelivery(
		endpoint: WebhookEndpoint,
		event: EventEnvelope,
		kind: Delivery['kind'],
		maxAttempts: number,
		payload = JSON.stringify(event),
	): Delivery {
		const { store, clock } = this.state;
		const now = clock.now();
		const delivery: Delivery = {
			id: store.nextId('delivery'),
			webhookEndpointId: endpoint.id,
			kind,
			event,
			payload,
			status: 'Pending',
			maxAttempts,
			attempts: [],
			nextAttemptAt: kind === 'event' ? now : null,
			failureReason: null,
			createdAt: now,
			updatedAt: now,
		};
		store.deliveries.push(delivery);
		return delivery;
	}

	/** Starts every due attempt; exact: at its scheduled time (clock advance), else at the current time. */
	private runDue(exact: boolean, limit = this.state.clock.now()): void {
		for (const d of this.pending().filter((p) => (p.nextAttemptAt as number) <= limit)) {
			void this.attempt(d, exact ? (d.nextAttemptAt as number) : this.state.clock.now());
		}
	}

	private attempt(delivery: Delivery, at: number): Promise<void> {
		const running = this.runAttempt(delivery, at).finally(() => this.inFlight.delete(delivery.id));
		this.inFlight.set(delivery.id, running);
		return running;
	}

	private async runAttempt(delivery: Delivery, at: number): Promise<void> {
		const { store, options } = this.state;
		const endpoint = store.endpoint(delivery.webhookEndpointId);
		if (!endpoint) return this.finish(delivery, 'Failed', 'EndpointDeleted');
		if (endpoint.status === 'Disabled' && delivery.kind === 'event')
			return this.finish(delivery, 'Failed', 'EndpointDisabled');
		const target = await checkTarget(endpoint.url, options.allowHttpLoopback);
		if (!target.ok) return this.finish(delivery, 'Failed', `PrivateAddress: ${target.reason}`);

		const timestamp = Math.floor(Date.now() / 1000) + this.state.settings.timestampSkewSeconds;
		const signature = signatureHeader(
			this.secretsOf(endpoint, at),
			delivery.event.id,
			timestamp,
			delivery.payload,
		);
		const outcome = await postOnce(
			endpoint.url,
			target,
			this.headers(delivery.event.id, timestamp, signature),
			delivery.payload,
			options.deliveryTimeoutMs,
		);
		const attempt: DeliveryAttempt = {
			number: delivery.attempts.length + 1,
			at: new Date(at).toISOString(),
			atMs: at,
			timestampSent: timestamp,
			statusCode: outcome.statusCode,
			error: outcome.error,
			signatureHeader: signature,
			durationMs: outcome.durationMs,
		};
		delivery.attempts.push(attempt);
		delivery.updatedAt = at;
		for (const listener of this.attemptListeners) listener(delivery, attempt);

		if (outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300) {
			endpoint.healthySince = Math.max(endpoint.healthySince, at);
			return this.finish(delivery, 'Delivered', null);
		}
		if (delivery.attempts.length < delivery.maxAttempts) {
			delivery.nextAttemptAt = at + RETRY_SCHEDULE_SECONDS[delivery.attempts.length - 1] * 1000;
			return;
		}
		this.finish(delivery, 'Failed', 'AttemptsExhausted');
		if (
			delivery.kind === 'event' &&
			endpoint.status === 'Enabled' &&
			at - endpoint.healthySince >= DISABLE_AFTER_MS
		) {
			endpoint.status = 'Disabled';
			endpoint.disabledReason = 'FailingDeliveries';
			endpoint.updatedAt = at;
			this.failPending(endpoint.id, 'EndpointDisabled');
		}
	}

	private finish(delivery: Delivery, status: 'Delivered' | 'Failed', reason: string | null): void {
		delivery.status = status;
		delivery.failureReason = reason;
		delivery.nextAttemptAt = null;
		delivery.updatedAt = Math.max(delivery.updatedAt, this.state.clock.now());
	}

	/** The current secret, plus the previous one during the 24 h after a rotation. */
	private secretsOf(endpoint: WebhookEndpoint, at: number): string[] {
		const overlap =
			endpoint.previousSecret &&
			endpoint.previousSecretUntil !== null &&
			at < endpoint.previousSecretUntil;
		return overlap ? [endpoint.secret, endpoint.previousSecret as string] : [endpoint.secret];
	}

	private headers(webhookId: string, timestamp: number, signature: string): Record<string, string> {
		return {
			'content-type': 'application/json',
			'user-agent': USER_AGENT,
			'webhook-id': webhookId,
			'webhook-timestamp': String(timestamp),
			'webhook-signature': signature,
		};
	}
}

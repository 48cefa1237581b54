/**
 * Does the service reach this trigger? On activation (and when "Listen for test event" starts), the
 * trigger asks the service for a test delivery to its webhook URL (Webhook Endpoint > Test) and reads
 * the delivery record it gets back: status, attempts and the HTTP status the receiver answered.
 *
 * What proves that the delivery reached this trigger's route: the record shows only an HTTP status
 * (the service ignores answer bodies), and the answers a webhook.test gets on this route are
 * - 401 while the secret is not saved yet: n8n stores the route before it calls create() and saves
 *   the static data (the secret) only after create() returns (2.41.1: ActiveWorkflowManager.addWebhooks;
 *   TestWebhooks.needsWebhook registers the test route, calls create(), registers again with the
 *   static data), so the test delivery made inside create() is refused for "no secret";
 * - 2xx once the secret is saved (checkExists finding an endpoint whose secret n8n already holds).
 * n8n answers 404 for a webhook path it does not serve; proxies and tunnels answer 404 for a route
 * they do not know, 502/503/504 when n8n is not reachable behind them, 3xx for a redirect (which
 * the service does not follow). So 401 and 2xx count as "reached", anything else does not. A
 * proxy that itself asks for credentials (401) or a catch-all that answers 2xx would be taken for
 * this trigger: the README says so.
 */
import type { IDataObject, IHookFunctions, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { transportClock } from '../shared/transport/clock';
import { apiRequest, newIdempotencyKey, type TransportSettings } from '../shared/transport/request';
import {
	errorObjectOf,
	isTransient,
	nodeApiError,
	readFailure,
} from '../shared/transport/transportErrors';
import { isPending, readDeliveryRecord, type DeliveryRecord } from './deliveryRecord';

/**
 * The Test call waits for the one delivery attempt, which the service gives 10 s: a longer timeout,
 * and one retry only (each retry is another test delivery).
 */
export const PROBE_TRANSPORT: TransportSettings = {
	timeoutMs: 20_000,
	retry: { maxAttempts: 2, baseDelayMs: 500, maxDelayMs: 2_000 },
};

/** A test delivery the service has not attempted yet is read again this often, this far apart. */
const PENDING_READS = 5;
const PENDING_WAIT_MS = 1_000;

export type ProbeVerdict =
	| { reached: true; httpStatus: number }
	| {
			reached: false;
			/** false: may pass by itself (the service has not attempted it yet) */
			final: boolean;
			/** what the service saw, in words */
			saw: string;
			/** what to check */
			check: string;
	  };

const CHECK_ADDRESS =
	'Check that N8N_WEBHOOK_URL (WEBHOOK_URL on n8n 1.x) is the public https address of this n8n, that the reverse proxy or tunnel in front of n8n is running and forwards this path to it unchanged, and that no firewall keeps the service out';

/** What a test delivery's record says about reachability. Pure. */
export function judgeDelivery(outcome: DeliveryRecord): ProbeVerdict {
	const code = outcome.httpStatus;
	if (code !== null && ((code >= 200 && code < 300) || code === 401))
		return { reached: true, httpStatus: code };
	if (isPending(outcome)) {
		return {
			reached: false,
			final: false,
			saw: 'the service had not attempted its test delivery yet',
			check: 'n8n tries the activation again',
		};
	}
	if (outcome.attempts === 0) {
		return {
			reached: false,
			final: true,
			saw: 'the service sent no request: it does not deliver to this address (the host resolves to a private or reserved IP address, or the URL is not https)',
			check:
				'Set N8N_WEBHOOK_URL (WEBHOOK_URL on n8n 1.x) to a public https address that reaches this n8n (a reverse proxy or tunnel), restart n8n and activate again',
		};
	}
	if (code === null) {
		return {
			reached: false,
			final: true,
			saw: 'its test delivery got no HTTP answer (connection refused, no answer within 10 seconds, or a DNS or TLS failure)',
			check: CHECK_ADDRESS,
		};
	}
	if (code >= 300 && code < 400) {
		return {
			reached: false,
			final: true,
			saw: `its test delivery was answered with a redirect (HTTP ${code}), which the service does not follow`,
			check:
				'Set N8N_WEBHOOK_URL to the final https address (no http-to-https or other redirect in front of n8n)',
		};
	}
	if (code === 404) {
		return {
			reached: false,
			final: true,
			saw: 'its test delivery was answered with HTTP 404 by something other than this trigger (an n8n that does not serve this webhook, or a proxy or tunnel that forwards it elsewhere)',
			check: `${CHECK_ADDRESS}; N8N_WEBHOOK_URL must lead to this n8n, not another instance`,
		};
	}
	if (code === 502 || code === 503 || code === 504 || code === 530) {
		return {
			reached: false,
			final: true,
			saw: `its test delivery was answered with HTTP ${code}: a proxy or tunnel answered but could not reach n8n behind it`,
			check: CHECK_ADDRESS,
		};
	}
	return {
		reached: false,
		final: true,
		saw: `its test delivery was answered with HTTP ${code}, which is not this trigger's answer (a proxy or another server answered)`,
		check: CHECK_ADDRESS,
	};
}

/** The message n8n shows in its activation error (it shows the message only, not the description). */
function unreachableMessage(
	url: string,
	verdict: Extract<ProbeVerdict, { reached: false }>,
): string {
	return `The Marketplace service could not reach this trigger at ${url}: ${verdict.saw}. ${verdict.check}.`;
}

/** Reads the endpoint's newest deliveries for one of them (a record answered before its attempt was made). */
async function readDelivery(
	ctx: IHookFunctions,
	endpointId: number,
	deliveryId: number,
	transport: TransportSettings,
): Promise<DeliveryRecord | undefined> {
	const { body } = await apiRequest.call(
		ctx,
		{
			route: 'listWebhookDeliveries',
			pathParams: { id: endpointId },
			query: { page: 1, limit: 10 },
		},
		transport,
	);
	const list = body && typeof body === 'object' ? (body as IDataObject).deliveries : undefined;
	if (!Array.isArray(list)) return undefined;
	return list.map(readDeliveryRecord).find((d) => d?.deliveryId === deliveryId);
}

/**
 * Asks the service for a test delivery to the endpoint and returns its record once the attempt is
 * made (or the last record read). Errors of the Test call are thrown as the transport made them.
 */
async function testDelivery(ctx: IHookFunctions, endpointId: number): Promise<DeliveryRecord> {
	const transport = PROBE_TRANSPORT;
	const { body } = await apiRequest.call(
		ctx,
		{
			route: 'testWebhookEndpoint',
			pathParams: { id: endpointId },
			idempotencyKey: newIdempotencyKey(),
		},
		transport,
	);
	let outcome = readDeliveryRecord(body) ?? { status: '', attempts: 0, httpStatus: null };
	for (
		let read = 0;
		read < PENDING_READS && isPending(outcome) && outcome.deliveryId !== undefined;
		read++
	) {
		await transportClock().sleep(PENDING_WAIT_MS);
		outcome = (await readDelivery(ctx, endpointId, outcome.deliveryId, transport)) ?? outcome;
	}
	return outcome;
}

/**
 * The activation check: throws, with a message naming the URL, what the service saw and what to
 * check, when the service's test delivery did not reach this trigger. n8n retries a throwing
 * create/checkExists (2.41.1: 5 times, 1-8 s apart), which is what a failure that may pass needs.
 */
export async function checkReachability(
	ctx: IHookFunctions,
	endpointId: number,
	url: string,
	/** runs before the check throws (create() removes the endpoint it made) */
	onFailure: () => Promise<void> = async () => {},
): Promise<DeliveryRecord> {
	let outcome: DeliveryRecord;
	try {
		outcome = await testDelivery(ctx, endpointId);
	} catch (error) {
		await onFailure();
		const failure = readFailure(error);
		const transient = isTransient(failure);
		throw nodeApiError(ctx.getNode(), errorObjectOf(error), {
			message:
				`Could not check that the Marketplace service reaches this trigger at ${url}: Webhook Endpoint > Test failed (${failure.message}). ` +
				(transient
					? 'The service may be busy; n8n tries the activation again.'
					: 'Check the credential and its permissions.'),
			httpCode: failure.status === undefined ? undefined : String(failure.status),
		});
	}
	const verdict = judgeDelivery(outcome);
	if (verdict.reached) {
		ctx.logger.info(
			`Marketplace Trigger: the service reached ${url} (test delivery answered ${verdict.httpStatus})`,
			{ endpointId },
		);
		return outcome;
	}
	const message = unreachableMessage(url, verdict);
	ctx.logger.warn(message, { endpointId, url, ...outcome });
	await onFailure();
	if (!verdict.final) {
		throw new NodeApiError(ctx.getNode(), { message } as JsonObject, { message, httpCode: '503' });
	}
	throw new NodeOperationError(ctx.getNode(), message, {
		description: `Delivery record of the test: status ${outcome.status || 'not given'}, ${outcome.attempts} attempt(s), HTTP status ${outcome.httpStatus ?? 'none'}.`,
	});
}

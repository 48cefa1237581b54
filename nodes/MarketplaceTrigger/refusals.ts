/**
 * Deliveries the trigger cannot verify: each is answered 401 and starts nothing, logged with what a
 * user can check, and counted on the next accepted event's item (`refusedDeliveries`). Where a
 * rotation elsewhere explains what it saw, the trigger rotates the secret again to hold the current one.
 */
import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

import type { TransportSettings } from '../shared/transport/request';
import { readFailure } from '../shared/transport/transportErrors';
import type { VerifyFailure } from '../shared/webhookVerifier';
import type { EndpointMemory } from './memory';
import { rotateSecret, withNewSecret } from './secrets';
import { SECRET_OVERLAP_MS, type EndpointStore } from './store';

/**
 * A rotation made to recover from one made elsewhere happens at most this often per endpoint: an
 * unverifiable request may be a forgery, and forgeries must not be able to spend the API quota.
 */
export const RECOVERY_INTERVAL_MS = 10 * 60_000;

/** What a user can check for each kind of refusal. */
const REFUSAL_ADVICE: Record<VerifyFailure, string> = {
	'missing-header':
		'Not a delivery as the service sends it: a proxy in front of n8n dropped a webhook-* header, or the request came from elsewhere.',
	'duplicate-header':
		'A webhook-* header came more than once: a proxy in front of n8n added or merged headers, or the request came from elsewhere.',
	'bad-timestamp':
		'The webhook-timestamp header is not whole seconds: a proxy in front of n8n changed it, or the request came from elsewhere.',
	'timestamp-too-old':
		"Check this n8n host's clock (NTP); a proxy or queue that holds requests for minutes makes them stale too.",
	'timestamp-too-new': "Check this n8n host's clock (NTP): it is behind the service's.",
	'no-v1-signature':
		'The webhook-signature header has no v1 entry: a proxy in front of n8n changed it, or the request came from elsewhere.',
	'signature-mismatch':
		'The body was changed on its way (a proxy or tunnel that re-encodes, decompresses or reformats it) or the request is forged.',
	'no-secret':
		'The trigger holds no signing secret for this URL: unpublish and publish the workflow to register its endpoint again.',
};

/**
 * A delivery signed with a secret the trigger does not hold: the secret was rotated elsewhere
 * (another workflow or API client). Rotating again gives the trigger the current secret; the service
 * keeps signing with the previous one for 24 hours, so the other holder is not cut off at once.
 * At most once per RECOVERY_INTERVAL_MS per endpoint, in this process and across processes (the
 * time is kept in the record). True when it rotated (the record in `store` then holds the new secret).
 */
export async function recoverSecret(
	ctx: IWebhookFunctions,
	store: EndpointStore,
	memory: EndpointMemory,
	nowMs: number,
	settings: TransportSettings,
): Promise<boolean> {
	const record = store.record;
	if (!record) return false;
	const last = Math.max(memory.lastRecoveryAt, record.recoveredAt ?? 0);
	if (nowMs - last < RECOVERY_INTERVAL_MS) return false;
	memory.lastRecoveryAt = nowMs;
	try {
		const secret = await rotateSecret(ctx, record.endpointId, settings);
		store.record = { ...withNewSecret(record, secret, nowMs), recoveredAt: nowMs };
		store.recordChanged();
		ctx.logger.warn(
			`Marketplace Trigger: the signing secret of webhook endpoint ${record.endpointId} was rotated outside this workflow; ` +
				"it rotated again to hold the current secret (the other holder's secret stays valid for 24 hours)",
			{ endpointId: record.endpointId, url: store.url },
		);
		return true;
	} catch (error) {
		ctx.logger.warn(
			`Marketplace Trigger could not rotate the secret of webhook endpoint ${record.endpointId}: ${readFailure(error).message}`,
		);
		return false;
	}
}

/**
 * Notes a refused delivery (a log line a user can act on, and a count for the next event's item)
 * and returns the body of its 401. A signature that matches no secret is taken for a rotation
 * elsewhere only after 24 hours without a verified delivery: within them the service would also
 * sign with the secret the trigger holds.
 */
export async function refuse(
	ctx: IWebhookFunctions,
	store: EndpointStore,
	memory: EndpointMemory,
	verdict: { reason: VerifyFailure; message: string },
	webhookId: unknown,
	nowMs: number,
	settings: TransportSettings,
): Promise<IDataObject> {
	let advice = REFUSAL_ADVICE[verdict.reason];
	const record = store.record;
	if (verdict.reason === 'signature-mismatch' && record) {
		const verifiedAt = Math.max(
			memory.lastVerifiedAt ?? 0,
			record.lastVerifiedAt ?? 0,
			record.secretAt ?? 0,
		);
		if (nowMs - verifiedAt >= SECRET_OVERLAP_MS) {
			advice +=
				' No delivery was verified for 24 hours, so the secret may also have been rotated elsewhere.';
			await recoverSecret(ctx, store, memory, nowMs, settings);
		} else {
			advice += ` It is not a secret rotation elsewhere: a delivery verified at ${new Date(verifiedAt).toISOString()} and the service signs with the previous secret too for 24 hours after a rotation.`;
		}
	}
	const at = new Date(nowMs).toISOString();
	const before = memory.refusals;
	memory.refusals = {
		count: (before?.count ?? 0) + 1,
		since: before?.since ?? at,
		lastAt: at,
		lastReason: verdict.reason,
		lastMessage: `${verdict.message}. ${advice}`,
	};
	ctx.logger.warn(
		`Marketplace Trigger refused a delivery (401, ${verdict.reason}): ${verdict.message}. ${advice}`,
		{
			url: store.url,
			webhookId: typeof webhookId === 'string' ? webhookId : undefined,
		},
	);
	return { error: 'invalid-signature', reason: verdict.reason };
}

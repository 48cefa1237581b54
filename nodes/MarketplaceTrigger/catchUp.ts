/**
 * Catch Up Missed Orders: every order runs once, also when its order.created delivery never came
 * (n8n was down or unreachable, a proxy dropped it, the service disabled the endpoint). The service's
 * own advice for a gap: list the orders with a start date covering it.
 *
 * n8n runs the check: trigger() emits one check item when the workflow starts (n8n starts, or the
 * workflow is published) and, with the option Check Every 5 Minutes on, one on n8n's cron. The check
 * item's run reads the orders in its execute() (`caughtUpOrders`), and each order goes through the
 * same store as every delivery (once.ts): an order that ran, by its event or an earlier check, outputs
 * nothing, and its late event then outputs nothing either.
 *
 * How far it has caught up: `checkedUntil` in the static data, the time of the last check, written by
 * the check's run (n8n saves a run's static data when the run ends). The next check reads the orders
 * created from CHECK_MARGIN_MS before it, but not more than LOOKED_BACK_MS back: the store recognises
 * only its newest keys (once.ts KEYS_KEPT), and the service itself re-sends for about 42 hours. The
 * first check of a workflow reads nothing and starts the record: older orders were never its to run.
 */
import type {
	IDataObject,
	IExecuteFunctions,
	IRun,
	ITriggerFunctions,
	ITriggerResponse,
} from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { normaliseEventTypes } from '../shared/routes';
import { readAll } from '../shared/transport/pagination';
import { isoSeconds } from '../shared/transport/queryEncoding';
import type { TransportSettings } from '../shared/transport/request';
import { ORDER_CREATED } from './once';

/** The field of the item trigger() emits for a check: why it checks. */
export const CHECK_FIELD = 'marketplaceCheck';

/** Orders created this long before the last check are read again (their deliveries may have been under way). */
export const CHECK_MARGIN_MS = 15 * 60_000;

/** A check reads at most this far back: two days, beyond the service's own 42 hours of re-sending. */
export const LOOKED_BACK_MS = 48 * 3_600_000;

/** n8n's cron expression of the check on an interval: every 5 minutes (the quota is 120 requests a minute per key). */
export const CHECK_CRON = '0 */5 * * * *';

/** A check's read: bounded, so that the close function's wait for it is (about 50 s at worst). */
const CHECK_TRANSPORT: TransportSettings = {
	timeoutMs: 15_000,
	retry: { maxAttempts: 3, baseDelayMs: 1_000, maxDelayMs: 5_000 },
};

/** How long the close function waits for the checks it started, in steps of this. */
const CLOSE_WAIT_STEPS = 120;
const CLOSE_WAIT_STEP_MS = 500;

interface CheckOptions {
	catchUpMissedOrders?: boolean;
	checkEveryFiveMinutes?: boolean;
	fetchCurrentState?: boolean;
}

/** Catch Up Missed Orders applies: the option on and Order Created subscribed. */
export function catchUpApplies(options: CheckOptions, subscribed: string[]): boolean {
	return options.catchUpMissedOrders !== false && subscribed.includes(ORDER_CREATED);
}

/**
 * trigger() of the node: one check now, and one every 5 minutes where the user chose it. The close
 * function (deactivation, shutdown) waits for the checks it started: a check's run saves the static
 * data whole when it ends, and must not save it over what the next activation writes (a new secret).
 * n8n removes its cron itself.
 */
export async function startChecks(ctx: ITriggerFunctions): Promise<ITriggerResponse> {
	const options = ctx.getNodeParameter('options', {}) as CheckOptions;
	const subscribed = normaliseEventTypes(ctx.getNodeParameter('eventTypes', []));
	if (ctx.getMode() === 'manual' || !catchUpApplies(options, subscribed)) return {};
	const running = new Set<Promise<unknown>>();
	const check = (reason: string) => {
		const done = ctx.helpers.createDeferredPromise<IRun>();
		const ended = done.promise.catch(() => undefined).finally(() => running.delete(ended));
		running.add(ended);
		ctx.emit([[{ json: { [CHECK_FIELD]: reason } }]], undefined, done);
	};
	check('start');
	if (options.checkEveryFiveMinutes === true)
		ctx.helpers.registerCron({ expression: CHECK_CRON }, () => check('interval'));
	return {
		closeFunction: async () => {
			for (let step = 0; running.size > 0 && step < CLOSE_WAIT_STEPS; step++)
				await sleep(CLOSE_WAIT_STEP_MS);
		},
	};
}

/**
 * The check: the orders created since where it has caught up, oldest first, each as an order.created
 * item marked `caughtUp`; whether each runs is once.ts's to decide. It moves `checkedUntil` to `nowMs`
 * once the orders are read. Throws what the transport throws.
 */
export async function caughtUpOrders(
	ctx: IExecuteFunctions,
	nowMs: number,
	itemIndex: number,
): Promise<IDataObject[]> {
	const staticData = ctx.getWorkflowStaticData('node');
	const checkedUntil = staticData.checkedUntil;
	if (typeof checkedUntil !== 'number') {
		staticData.checkedUntil = nowMs;
		return [];
	}
	const since = Math.max(checkedUntil - CHECK_MARGIN_MS, nowMs - LOOKED_BACK_MS);
	const orders = await readAll.call(ctx, {
		route: 'listOrders',
		query: { startDate: isoSeconds(since) },
		returnAll: true,
		itemIndex,
		settings: CHECK_TRANSPORT,
	});
	staticData.checkedUntil = nowMs;
	const withCurrent =
		(ctx.getNodeParameter('options', itemIndex, {}) as CheckOptions).fetchCurrentState === true;
	return orders
		.map((order) => ({ order, at: Date.parse(String(order.createdAt)) }))
		.filter(({ order, at }) => at >= since && Number.isSafeInteger(order.id))
		.sort((a, b) => a.at - b.at || Number(a.order.id) - Number(b.order.id))
		.map(({ order }) => ({
			id: `caught_up_${ORDER_CREATED}_${String(order.id)}`,
			type: ORDER_CREATED,
			createdAt: order.createdAt,
			data: { brandId: order.brandId, orderId: order.id },
			caughtUp: true,
			...(withCurrent ? { current: order } : {}),
		}));
}

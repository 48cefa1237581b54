/**
 * Catch Up Missed Orders: every order runs once, also when its order.created delivery never came
 * (n8n was down or unreachable, a proxy dropped it, the service disabled the endpoint). The service's
 * own advice for a gap: list the orders with a start date covering it.
 *
 * n8n runs the check: trigger() emits one check item when the workflow starts (n8n starts, or the
 * workflow is published) and, with the option Check Every 5 Minutes on, one on n8n's cron. The item
 * names the window to read (`since`, `until`); the check's run reads the orders in it in execute()
 * (`caughtUpOrders`), and each order goes through the same store as every delivery (once.ts): an order
 * that ran, by its event or an earlier check, outputs nothing, and its late event outputs nothing too.
 * A check whose read failed is a failed execution, which n8n can retry with the same window.
 *
 * How far it has caught up: `checkedUntil` in the static data, the time of the check at the last
 * start, which trigger() writes and n8n saves (with the emit, and after trigger() returns); between
 * starts trigger() remembers its last check itself. A window begins CHECK_MARGIN_MS before the last
 * check, but at most LOOKED_BACK_MS back: the store must still hold the keys of the orders that ran
 * meanwhile (README: History Size of two days). A workflow's first start reads nothing: older orders
 * were never its to run. Runs never write the static data: a queue-mode worker's run gets none.
 */
import type {
	IDataObject,
	IExecuteFunctions,
	ITriggerFunctions,
	ITriggerResponse,
} from 'n8n-workflow';

import { normaliseEventTypes } from '../shared/routes';
import { transportClock } from '../shared/transport/clock';
import { readAll } from '../shared/transport/pagination';
import { isoSeconds } from '../shared/transport/queryEncoding';
import { ORDER_CREATED } from './once';

/** The field of the item trigger() emits for a check: why it checks. */
export const CHECK_FIELD = 'marketplaceCheck';

/** Orders created this long before the last check are read again (their deliveries may have been under way). */
export const CHECK_MARGIN_MS = 15 * 60_000;

/** A check reads at most this far back: two days, beyond the service's own 42 hours of re-sending. */
export const LOOKED_BACK_MS = 48 * 3_600_000;

/** n8n's cron expression of the check on an interval: every 5 minutes (the quota is 120 requests a minute per key). */
export const CHECK_CRON = '0 */5 * * * *';

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
 * trigger() of the node: the check at the start, and one every 5 minutes where the user chose it.
 * Nothing of ours runs after it returns: emit hands each check to n8n, and n8n removes its cron.
 */
export async function startChecks(ctx: ITriggerFunctions): Promise<ITriggerResponse> {
	const options = ctx.getNodeParameter('options', {}) as CheckOptions;
	const subscribed = normaliseEventTypes(ctx.getNodeParameter('eventTypes', []));
	if (ctx.getMode() === 'manual' || !catchUpApplies(options, subscribed)) return {};
	const staticData = ctx.getWorkflowStaticData('node');
	let lastCheck = typeof staticData.checkedUntil === 'number' ? staticData.checkedUntil : undefined;
	const check = (reason: string) => {
		const now = transportClock().now();
		if (lastCheck !== undefined) {
			const since = Math.max(lastCheck - CHECK_MARGIN_MS, now - LOOKED_BACK_MS);
			const window = { since: new Date(since).toISOString(), until: new Date(now).toISOString() };
			ctx.emit([[{ json: { [CHECK_FIELD]: reason, ...window } }]]);
		}
		lastCheck = now;
	};
	// n8n saves this with the emit, and after trigger() returns
	staticData.checkedUntil = transportClock().now();
	check('start');
	if (options.checkEveryFiveMinutes === true)
		ctx.helpers.registerCron({ expression: CHECK_CRON }, () => check('interval'));
	return {};
}

/**
 * The check of `window`: the orders created in it, oldest first, each as an order.created item marked
 * `caughtUp`; whether each runs is once.ts's to decide. Throws what the transport throws.
 */
export async function caughtUpOrders(
	ctx: IExecuteFunctions,
	window: IDataObject,
	itemIndex: number,
): Promise<IDataObject[]> {
	const since = Date.parse(String(window.since));
	const until = Date.parse(String(window.until));
	if (!Number.isFinite(since) || !Number.isFinite(until)) return [];
	const orders = await readAll.call(ctx, {
		route: 'listOrders',
		query: { startDate: isoSeconds(since) },
		returnAll: true,
		itemIndex,
	});
	const withCurrent =
		(ctx.getNodeParameter('options', itemIndex, {}) as CheckOptions).fetchCurrentState === true;
	return orders
		.map((order) => ({ order, at: Date.parse(String(order.createdAt)) }))
		.filter(({ order, at }) => at >= since && at <= until && Number.isSafeInteger(order.id))
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

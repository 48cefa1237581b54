/**
 * Catch Up Missed Orders: every order runs once, also when its order.created delivery never came
 * (n8n was down or unreachable, a proxy dropped it, the service disabled the endpoint). The service's
 * own advice for a gap: list the orders with a start date covering it.
 *
 * n8n runs the check: the node's first poll when the workflow starts (n8n starts, or the workflow is
 * published) returns one check item (`startCheck`), and so does the watch when the service's record
 * shows a delivery that failed (watch.ts). The check's run reads the orders in its execute()
 * (`caughtUpOrders`), and each order goes through the same store as every delivery (once.ts): an order
 * that ran, by its event or an earlier check, outputs nothing, and its late event outputs nothing too.
 *
 * Where a check reads from is the cursor's to say (marks.ts): from 15 minutes before the newest hour
 * in which the workflow ran something, at most 48 hours back, never before the workflow's first start
 * (`startedAt`, the one thing the checks keep in the static data besides the endpoint record).
 */
import type { IDataObject, IExecuteFunctions, IPollFunctions, JsonObject } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import { normaliseEventTypes } from '../shared/routes';
import { transportClock } from '../shared/transport/clock';
import { readAll } from '../shared/transport/pagination';
import { isoSeconds } from '../shared/transport/queryEncoding';
import { closeGaps, leaveGap, readCursor } from './marks';
import { ORDER_CREATED } from './once';
import { productionRecord, writeRecord } from './secrets';

/** The field of the item poll() returns for a check: why it checks. */
export const CHECK_FIELD = 'marketplaceCheck';

interface CheckOptions {
	catchUpMissedOrders?: boolean;
	fetchCurrentState?: boolean;
}

/** Catch Up Missed Orders applies: the option on and Order Created subscribed (`parameter` reads the node's). */
export function catchUpApplies(parameter: (name: string, fallback: unknown) => unknown): boolean {
	const options = parameter('options', {}) as CheckOptions;
	const subscribed = normaliseEventTypes(parameter('eventTypes', []));
	return options.catchUpMissedOrders !== false && subscribed.includes(ORDER_CREATED);
}

/** The parameters of poll() and of execute() (the first item's), for `catchUpApplies`. */
export const parameterOf =
	(ctx: IPollFunctions) =>
	(name: string, fallback: unknown): unknown =>
		ctx.getNodeParameter(name, fallback);
export const runParameter =
	(ctx: IExecuteFunctions) =>
	(name: string, fallback: unknown): unknown =>
		ctx.getNodeParameter(name, 0, fallback);

/** The notice the first item after a disabled period carries. */
export function disabledNotice(from: string | undefined, toMs: number): string {
	const to = new Date(toMs).toISOString();
	return `The Marketplace service had disabled this trigger's webhook endpoint (no successful delivery for 5 days) from ${from ?? 'an unknown time'} until ${to}; it is enabled again. Orders created meanwhile are caught up. Order cancellations, returns and brand health changes of that time were not delivered and cannot be recovered: read them with the Marketplace node (Order, Return, Brand Health).`;
}

/**
 * The item of one check, `{marketplaceCheck: reason, firstStartedAt, until}`, which execute() turns into the
 * missed orders (`caughtUpOrders`); `notice`, when given, reaches the workflow with its run.
 * `firstStartedAt` is the workflow's first start (the static data's `startedAt`, the one thing the
 * checks keep there).
 */
export function checkItem(staticData: IDataObject, reason: string, notice?: string): IDataObject {
	const first = staticData.startedAt;
	return {
		[CHECK_FIELD]: reason,
		...(typeof first === 'number' ? { firstStartedAt: new Date(first).toISOString() } : {}),
		until: new Date(transportClock().now()).toISOString(),
		...(notice ? { notice } : {}),
	};
}

/**
 * The check when the workflow starts (n8n starts, or it is published: the first poll of an activation,
 * watch.ts), none at its first start, which only notes `startedAt` while the catch-up applies (n8n saves
 * the static data after the activation): deliveries n8n accepted before a crash may not have run. It
 * also carries the notice the activation left (the endpoint was Disabled), which then is removed.
 */
export function startCheck(ctx: IPollFunctions): IDataObject | undefined {
	const staticData = ctx.getWorkflowStaticData('node');
	const applies = catchUpApplies(parameterOf(ctx));
	const firstStart = typeof staticData.startedAt !== 'number';
	// kept only while the catch-up applies: turned on later, it starts from then
	if (firstStart && applies) staticData.startedAt = transportClock().now();
	const notice = takeDisabledNotice(staticData);
	return (!firstStart && applies) || notice ? checkItem(staticData, 'start', notice) : undefined;
}

/**
 * The notice the activation left when it enabled a Disabled endpoint again (lifecycle.ts), taken out
 * of the record: the start's check carries it, or, where n8n ran the activation's hooks beside that
 * check (2.41 registers webhooks and polls at once), the watch's next look.
 */
export function takeDisabledNotice(staticData: IDataObject): string | undefined {
	const production = productionRecord(staticData);
	const period = production?.record.disabledPeriod;
	if (!production || !period) return undefined;
	const told = { ...production.record };
	delete told.disabledPeriod;
	writeRecord(staticData, production.url, told);
	return disabledNotice(period.from, Date.parse(period.to));
}

/**
 * The check an item of poll() asks for: the orders created since its window began, oldest first, each as an
 * order.created item marked `caughtUp`; whether each runs is once.ts's to decide. Throws what the
 * transport throws.
 */
export async function caughtUpOrders(
	ctx: IExecuteFunctions,
	check: IDataObject,
	itemIndex: number,
	historySize: number,
): Promise<IDataObject[]> {
	const until = Date.parse(String(check.until));
	const firstStartedAt = Date.parse(String(check.firstStartedAt));
	if (!Number.isFinite(until) || !Number.isFinite(firstStartedAt)) return [];
	const { since, gaps } = await readCursor(ctx, until, firstStartedAt, historySize);
	let orders: IDataObject[];
	try {
		orders = await readAll.call(ctx, {
			route: 'listOrders',
			query: { startDate: isoSeconds(since) },
			returnAll: true,
			itemIndex,
		});
	} catch (error) {
		// the next check reads from here, whatever runs meanwhile; the read's error is the one to show
		await leaveGap(ctx, since, historySize).catch((storeError: Error) =>
			ctx.logger.warn(`Marketplace Trigger could not record a check's gap: ${storeError.message}`),
		);
		throw error instanceof NodeApiError
			? error
			: new NodeApiError(ctx.getNode(), error as JsonObject, { itemIndex });
	}
	await closeGaps(ctx, gaps, historySize);
	const withCurrent =
		(ctx.getNodeParameter('options', itemIndex, {}) as CheckOptions).fetchCurrentState === true;
	return (
		orders
			.map((order) => ({ order, at: Date.parse(String(order.createdAt)) }))
			// no upper bound: `until` is n8n's clock, `createdAt` the service's, and the store keeps out what ran
			.filter(({ order, at }) => at >= since && Number.isSafeInteger(order.id))
			.sort((a, b) => a.at - b.at || Number(a.order.id) - Number(b.order.id))
			.map(({ order }) => ({
				id: `caught_up_${ORDER_CREATED}_${String(order.id)}`,
				type: ORDER_CREATED,
				createdAt: order.createdAt,
				data: { brandId: order.brandId, orderId: order.id },
				caughtUp: true,
				...(withCurrent ? { current: order } : {}),
			}))
	);
}

/**
 * Catch Up Missed Orders: every order runs once, also when its order.created delivery never came
 * (n8n was down or unreachable, a proxy dropped it, the service disabled the endpoint). The service's
 * own advice for a gap: list the orders with a start date covering it.
 *
 * n8n runs the check: trigger() emits one check item when the workflow starts (n8n starts, or the
 * workflow is published) and, with the option Check Every 5 Minutes on, one on n8n's cron. The check's
 * run reads the orders in its execute() (`caughtUpOrders`), and each order goes through the same store
 * as every delivery (once.ts): an order that ran, by its event or an earlier check, outputs nothing,
 * and its late event outputs nothing too.
 *
 * How far it has caught up is what the store says: every run records the hour it ran in (once.ts
 * `hour:` marks). A check reads the orders created from CHECK_MARGIN_MS before the newest hour,
 * before the check's own, in which the workflow ran something: up to then it was receiving its
 * deliveries. Without a mark in the last LOOKED_BACK_MS it reads that far back. It never reads orders
 * created before the workflow's first start (`startedAt`, the one thing trigger() keeps in the static
 * data): they were never its to run. A check whose read fails records no hour mark but a gap mark
 * where its window began, so the next check reads from there, whatever ran meanwhile; the check that
 * reads it removes it.
 */
import type {
	IDataObject,
	IExecuteFunctions,
	ITriggerFunctions,
	ITriggerResponse,
	JsonObject,
} from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import { normaliseEventTypes } from '../shared/routes';
import { transportClock } from '../shared/transport/clock';
import { readAll } from '../shared/transport/pagination';
import { isoSeconds } from '../shared/transport/queryEncoding';
import { hourMark, ORDER_CREATED, recordInTurn } from './once';

/** The field of the item trigger() emits for a check: why it checks. */
export const CHECK_FIELD = 'marketplaceCheck';

/** Orders created this long before the newest marked hour are read too (their deliveries may have been under way). */
export const CHECK_MARGIN_MS = 15 * 60_000;

/** A check reads at most this far back: two days, beyond the service's own 42 hours of re-sending. */
export const LOOKED_BACK_MS = 48 * 3_600_000;

const HOUR_MS = 3_600_000;

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
 * trigger() of the node: the check at the start (none at the workflow's first start), and one every
 * 5 minutes where the user chose it. Nothing of ours runs after it returns: emit hands each check to
 * n8n, and n8n removes its cron.
 */
export async function startChecks(ctx: ITriggerFunctions): Promise<ITriggerResponse> {
	const options = ctx.getNodeParameter('options', {}) as CheckOptions;
	const subscribed = normaliseEventTypes(ctx.getNodeParameter('eventTypes', []));
	if (ctx.getMode() === 'manual' || !catchUpApplies(options, subscribed)) return {};
	const staticData = ctx.getWorkflowStaticData('node');
	const firstStart = typeof staticData.startedAt !== 'number';
	// n8n saves it after trigger() returns
	if (firstStart) staticData.startedAt = transportClock().now();
	const startedAt = new Date(staticData.startedAt as number).toISOString();
	const check = (reason: string) => {
		const until = new Date(transportClock().now()).toISOString();
		ctx.emit([[{ json: { [CHECK_FIELD]: reason, startedAt, until } }]]);
	};
	if (!firstStart) check('start');
	if (options.checkEveryFiveMinutes === true)
		ctx.helpers.registerCron({ expression: CHECK_CRON }, () => check('interval'));
	return {};
}

/**
 * Where a check reads from (Unix ms; pure): 15 minutes before the newest hour, before the check's
 * own, in which the workflow ran something (a mark of the check's own hour may come from runs after
 * it, and a retry must read what the check read), or from a gap a failed check left, whichever is
 * older; never more than 48 hours back, nor before the workflow's first start.
 */
export function windowStart(
	marks: { ran: number[]; gaps: number[] },
	checkHour: number,
	until: number,
	startedAt: number,
): number {
	const lastRan = marks.ran.find((hour) => hour < checkHour);
	const fromRuns = lastRan === undefined ? until - LOOKED_BACK_MS : lastRan - CHECK_MARGIN_MS;
	return Math.max(Math.min(fromRuns, ...marks.gaps), until - LOOKED_BACK_MS, startedAt);
}

/**
 * The check an item of trigger() asks for: the orders created since its window began, oldest first, each as an
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
	const startedAt = Date.parse(String(check.startedAt));
	if (!Number.isFinite(until) || !Number.isFinite(startedAt)) return [];
	// the check's own hour and the 48 before it, newest first
	const hours = Array.from(
		{ length: LOOKED_BACK_MS / HOUR_MS + 1 },
		(_, back) => (Math.floor(until / HOUR_MS) - back) * HOUR_MS,
	);
	const { ran, gaps } = await lookUpMarks(ctx, hours, historySize);
	const since = windowStart({ ran, gaps }, hours[0], until, startedAt);
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
		await markGaps(ctx, [since], historySize, true).catch((storeError: Error) =>
			ctx.logger.warn(`Marketplace Trigger could not record a check's gap: ${storeError.message}`),
		);
		throw error instanceof NodeApiError
			? error
			: new NodeApiError(ctx.getNode(), error as JsonObject, { itemIndex });
	}
	await markGaps(ctx, gaps, historySize, false);
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

/** The mark of a check that could not read its window, which began in the hour of `sinceMs` (UTC). */
export function gapMark(sinceMs: number): string {
	return `gap:${new Date(sinceMs).toISOString().slice(0, 13)}`;
}

/**
 * Which of `hours` (Unix ms of hour starts, newest first) have a mark in once.ts's store: the workflow ran
 * something then (`ran`), or a check could not read from then (`gaps`). n8n's helper only looks by
 * recording, so the marks it did not find are removed again in the same turn; the store keeps them
 * all meanwhile (a larger maxEntries), so no key of an event is pushed out by the look.
 */
async function lookUpMarks(
	ctx: IExecuteFunctions,
	hours: number[],
	historySize: number,
): Promise<{ ran: number[]; gaps: number[] }> {
	const marks = [...hours.map(hourMark), ...hours.map(gapMark)];
	const options = { mode: 'entries', maxEntries: historySize + marks.length } as const;
	const found = await recordInTurn(ctx, async () => {
		const result = await ctx.helpers.checkProcessedAndRecord(marks, 'node', options);
		if (result.new.length > 0) await ctx.helpers.removeProcessed(result.new, 'node', options);
		return new Set(result.processed.map(String));
	});
	return {
		ran: hours.filter((hour) => found.has(hourMark(hour))),
		gaps: hours.filter((hour) => found.has(gapMark(hour))),
	};
}

/** Records the gap a failed check leaves, or (`keep` false) removes gaps a check has read. */
async function markGaps(
	ctx: IExecuteFunctions,
	hours: number[],
	historySize: number,
	keep: boolean,
): Promise<void> {
	if (hours.length === 0) return;
	const options = { mode: 'entries', maxEntries: historySize } as const;
	const marks = hours.map(gapMark);
	await recordInTurn(ctx, async () => {
		await ctx.helpers.removeProcessed(marks, 'node', options);
		// recorded again as the newest key: a gap stays in the store as long as any key after it
		if (keep) await ctx.helpers.checkProcessedAndRecord(marks, 'node', options);
	});
}

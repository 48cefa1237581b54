/**
 * The catch-up's cursor: how far the workflow has caught up, kept as marks in once.ts's store (its
 * key table names them). Every published run records the mark of the hour it ran in (`activeHourMark`, with
 * its own keys, run.ts); a check reads the marks (`readCursor`) to know where its window begins; a
 * check whose read fails leaves a gap mark (`leaveGap`) so the next reads from there, and the check
 * that read it removes it (`closeGaps`).
 */
import type { IExecuteFunctions } from 'n8n-workflow';

import { alone } from './once';

/** Orders created this long before the newest marked hour are read too (their deliveries may have been under way). */
export const CHECK_MARGIN_MS = 15 * 60_000;

/** A check reads at most this far back: two days, beyond the service's own 42 hours of re-sending. */
export const LOOKED_BACK_MS = 48 * 3_600_000;

const HOUR_MS = 3_600_000;

const utcHour = (ms: number) => new Date(ms).toISOString().slice(0, 13);

/** The mark every published run records with its keys (one with no output too): a run in the hour of `nowMs` (UTC). */
export function activeHourMark(nowMs: number): string {
	return `hour:${utcHour(nowMs)}`;
}

/** The mark of a check that could not read its window, which began in the hour of `sinceMs` (UTC). */
export function gapMark(sinceMs: number): string {
	return `gap:${utcHour(sinceMs)}`;
}

/**
 * Where a check reads from (Unix ms; pure): 15 minutes before the newest hour, before the check's
 * own, in which the workflow had a published run (a mark of the check's own hour may come from runs after
 * it, and a retry must read what the check read), or from a gap a failed check left, whichever is
 * older; never more than 48 hours back, nor before the workflow's first start.
 */
export function windowStart(
	marks: { ran: number[]; gaps: number[] },
	checkHour: number,
	until: number,
	firstStartedAt: number,
): number {
	const lastRan = marks.ran.find((hour) => hour < checkHour);
	const fromRuns = lastRan === undefined ? until - LOOKED_BACK_MS : lastRan - CHECK_MARGIN_MS;
	return Math.max(Math.min(fromRuns, ...marks.gaps), until - LOOKED_BACK_MS, firstStartedAt);
}

/**
 * Where the check of `until` reads from (`since`), and the gaps it found (to close once it has read).
 * n8n's helper only looks by recording, so the marks it did not find are removed again in the same
 * turn; the store keeps them all meanwhile (a larger maxEntries), so no key of an event is pushed out.
 */
export async function readCursor(
	ctx: IExecuteFunctions,
	until: number,
	firstStartedAt: number,
	historySize: number,
): Promise<{ since: number; gaps: number[] }> {
	// the check's own hour and the 48 before it, newest first
	const hours = Array.from(
		{ length: LOOKED_BACK_MS / HOUR_MS + 1 },
		(_, back) => (Math.floor(until / HOUR_MS) - back) * HOUR_MS,
	);
	const marks = [...hours.map(activeHourMark), ...hours.map(gapMark)];
	const options = { mode: 'entries', maxEntries: historySize + marks.length } as const;
	const found = await alone(ctx, async () => {
		const result = await ctx.helpers.checkProcessedAndRecord(marks, 'node', options);
		if (result.new.length > 0) await ctx.helpers.removeProcessed(result.new, 'node', options);
		return new Set(result.processed.map(String));
	});
	const ran = hours.filter((hour) => found.has(activeHourMark(hour)));
	const gaps = hours.filter((hour) => found.has(gapMark(hour)));
	return { since: windowStart({ ran, gaps }, hours[0], until, firstStartedAt), gaps };
}

/** Leaves the gap of a check that could not read from `sinceMs` on: the next check reads from there. */
export async function leaveGap(
	ctx: IExecuteFunctions,
	sinceMs: number,
	historySize: number,
): Promise<void> {
	const options = { mode: 'entries', maxEntries: historySize } as const;
	const marks = [gapMark(sinceMs)];
	await alone(ctx, async () => {
		// recorded again as the newest key: a gap stays in the store as long as any key after it
		await ctx.helpers.removeProcessed(marks, 'node', options);
		await ctx.helpers.checkProcessedAndRecord(marks, 'node', options);
	});
}

/** Removes the gaps a check has read past. */
export async function closeGaps(
	ctx: IExecuteFunctions,
	hours: number[],
	historySize: number,
): Promise<void> {
	if (hours.length === 0) return;
	const options = { mode: 'entries', maxEntries: historySize } as const;
	await alone(
		ctx,
		async () => await ctx.helpers.removeProcessed(hours.map(gapMark), 'node', options),
	);
}

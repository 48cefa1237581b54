/**
 * "Once": the one place that decides whether an item of the trigger runs the workflow. It lives in
 * the node's execute(), which n8n runs at the start of every run webhook() or trigger() starts (on
 * the worker in queue mode), because only there does n8n offer its deduplication helper.
 *
 * The store: n8n's deduplication store, this node's row of the `processed_data` table (mode
 * 'entries', the newest History Size keys of all kinds; the oldest go first).
 *
 * | fact                                        | key               | where     | kept for          | written by           | read by         |
 * | ------------------------------------------- | ----------------- | --------- | ----------------- | -------------------- | --------------- |
 * | this event ran                              | `event:<id>`      | the store | History Size keys | execute(), published | execute()       |
 * | this order ran (its order.created, a check) | `order:<orderId>` | the store | History Size keys | execute(), published | execute()       |
 * | the workflow ran something in this hour     | `hour:<UTC hour>` | the store | History Size keys | execute(), published | the check (catchUp.ts) |
 * | a check could not read from this hour on    | `gap:<UTC hour>`  | the store | until a check reads it | the check   | the check (catchUp.ts) |
 *
 * So a copy of an event (same webhook-id, or the order.created of an order a check ran) may start an
 * execution, but that execution outputs nothing and no node after the trigger runs. What n8n's store
 * cannot promise: it reads and writes the row whole without a lock, so two processes (queue-mode
 * workers) recording at one instant can each find a key new, or one can drop the other's key. Runs of
 * one process are recorded one after the other (`recordInTurn`), so only separate processes can meet.
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

/**
 * Keys the store keeps by default (option History Size; the oldest go first): a copy is recognised
 * while fewer keys came after it. n8n reads and writes the whole row for every run: about 0.3 ms of
 * CPU per event at 2,000 keys, 5 ms at 10,000 (test/bench/historySize.bench.ts).
 */
export const DEFAULT_HISTORY_SIZE = 2_000;
export const MIN_HISTORY_SIZE = 100;
export const MAX_HISTORY_SIZE = 100_000;

export const ORDER_CREATED = 'order.created';

/** The option History Size, checked before anything is recorded. */
export function historySizeOf(ctx: IExecuteFunctions): number {
	const { historySize = DEFAULT_HISTORY_SIZE } = ctx.getNodeParameter('options', 0, {}) as {
		historySize?: number;
	};
	if (
		!Number.isInteger(historySize) ||
		historySize < MIN_HISTORY_SIZE ||
		historySize > MAX_HISTORY_SIZE
	) {
		throw new NodeOperationError(
			ctx.getNode(),
			`History Size must be a whole number from ${MIN_HISTORY_SIZE} to ${MAX_HISTORY_SIZE} (it is ${String(historySize)})`,
			{ itemIndex: 0 },
		);
	}
	return historySize;
}

/** The mark that the workflow ran an event or a check in the hour of `nowMs` (UTC). */
export function hourMark(nowMs: number): string {
	return `hour:${new Date(nowMs).toISOString().slice(0, 13)}`;
}

/** The key of one item: its order for an order.created event or a caught-up order, else its event id. */
export function keyOf(json: IDataObject): string {
	const orderId = (json.data as IDataObject | undefined)?.orderId;
	if (json.type === ORDER_CREATED && Number.isSafeInteger(orderId))
		return `order:${String(orderId)}`;
	return `event:${String(json.id)}`;
}

/** Runs of this process, per workflow and node, record one after another (see the table's last line). */
const turns = new Map<string, Promise<unknown>>();

async function recordInTurn<T>(ctx: IExecuteFunctions, work: () => Promise<T>): Promise<T> {
	const turn = `${ctx.getWorkflow().id ?? ''}|${ctx.getNode().id}`;
	const previous = turns.get(turn) ?? Promise.resolve();
	const mine = previous.then(work, work);
	const settled = mine.catch(() => undefined);
	turns.set(turn, settled);
	try {
		return await mine;
	} finally {
		if (turns.get(turn) === settled) turns.delete(turn);
	}
}

/** What recording found: the keys that are new, or the error the store gave. */
export type Recorded = { fresh: Set<string> } | { error: Error };

/**
 * Records `keys`, and the mark of the hour of `nowMs` (none when undefined: a check of this run
 * failed), in n8n's deduplication store and returns the keys that were not there before. A key given
 * twice counts once.
 */
export async function recordOnce(
	ctx: IExecuteFunctions,
	keys: string[],
	historySize: number,
	nowMs: number | undefined,
): Promise<Recorded> {
	const unique = [...new Set([...keys, ...(nowMs === undefined ? [] : [hourMark(nowMs)])])];
	if (unique.length === 0) return { fresh: new Set() };
	try {
		const result = await recordInTurn(
			ctx,
			async () =>
				await ctx.helpers.checkProcessedAndRecord(unique, 'node', {
					mode: 'entries',
					maxEntries: historySize,
				}),
		);
		return { fresh: new Set(result.new.map(String)) };
	} catch (error) {
		return { error: error instanceof Error ? error : new Error(String(error)) };
	}
}

/** The mark of a check that could not read its window, which began in the hour of `sinceMs` (UTC). */
export function gapMark(sinceMs: number): string {
	return `gap:${new Date(sinceMs).toISOString().slice(0, 13)}`;
}

/**
 * Which of `hours` (Unix ms of hour starts, newest first) have a mark in the store: the workflow ran
 * something then (`ran`), or a check could not read from then (`gaps`). n8n's helper only looks by
 * recording, so the marks it did not find are removed again in the same turn; the store keeps them
 * all meanwhile (a larger maxEntries), so no key of an event is pushed out by the look.
 */
export async function marksIn(
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
export async function markGaps(
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

/**
 * The items that run: those whose key is new. When the store failed, every item runs, marked with
 * `storageWarning` (a copy of it may run again): an event is never dropped for the store's sake.
 */
export function itemsThatRun(
	candidates: Array<{ json: IDataObject; from: number }>,
	recorded: Recorded,
): INodeExecutionData[] {
	const out: INodeExecutionData[] = [];
	const taken = new Set<string>();
	for (const { json, from } of candidates) {
		const key = keyOf(json);
		if ('error' in recorded) {
			out.push({
				json: {
					...json,
					storageWarning: `n8n's database could not record this event (${recorded.error.message}): it ran, but a copy of it may run again`,
				},
				pairedItem: { item: from },
			});
			continue;
		}
		if (!recorded.fresh.has(key) || taken.has(key)) continue;
		taken.add(key);
		out.push({ json, pairedItem: { item: from } });
	}
	return out;
}

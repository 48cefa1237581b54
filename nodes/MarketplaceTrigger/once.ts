/**
 * "Once": the one place that decides whether an item of the trigger runs the workflow. It lives in
 * the node's execute(), which n8n runs at the start of every run webhook() or trigger() starts (on
 * the worker in queue mode), because only there does n8n offer its deduplication helper.
 *
 * The store: n8n's deduplication store, this node's row of the `processed_data` table (mode
 * 'entries', the newest History Size keys of all kinds; the oldest go first).
 *
 * | fact                                       | key               | kept for          | written by             | read by   |
 * | ------------------------------------------ | ----------------- | ----------------- | ---------------------- | --------- |
 * | this order ran (its order.created, a check) | `order:<orderId>` | History Size keys | execute(), published   | execute() |
 * | this event ran (any other event)           | `event:<id>`      | History Size keys | execute(), published   | execute() |
 * | the workflow ran something in this hour    | `hour:<UTC hour>` | History Size keys | execute(), published   | the check |
 * | a check could not read from this hour on   | `gap:<UTC hour>`  | History Size keys | the check (catchUp.ts) | the check |
 *
 * An order.created event is keyed by its order, not by its id: a copy of it (same webhook-id, which
 * the service makes the event's id) names the same order, and so does a check that caught it up. So a
 * copy may start an execution, but that execution outputs nothing and no node after the trigger runs.
 * The hour marks are the catch-up's cursor (catchUp.ts). What n8n's store cannot promise: it reads
 * and writes the row whole without a lock, so two processes (queue-mode workers) recording at one
 * instant can each find a key new, or one can drop the other's key. Runs of one process are recorded
 * one after the other (`recordInTurn`), so only separate processes can meet.
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

export async function recordInTurn<T>(ctx: IExecuteFunctions, work: () => Promise<T>): Promise<T> {
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

/**
 * "Once": the one place that decides whether an item of the trigger runs the workflow. It lives in
 * the node's execute(), which n8n runs at the start of every run webhook() or poll() starts (on
 * the worker in queue mode), because only there does n8n offer its deduplication helper.
 *
 * The store: n8n's deduplication store, this node's row of the `processed_data` table (mode
 * 'entries', the newest History Size keys of all kinds; the oldest go first). Every key it holds:
 *
 * | key                  | the fact                                     | written by                  | read by      |
 * | -------------------- | -------------------------------------------- | --------------------------- | ------------ |
 * | `order:<orderId>`    | this order ran (its order.created, or a check caught it up) | run.ts            | run.ts       |
 * | `event:<eventId>`    | this event ran (any other type)              | run.ts                      | run.ts       |
 * | `hour:<UTC hour>`    | a published run in this hour (any, no output too) | run.ts (`activeHourMark`, marks.ts) | marks.ts    |
 * | `gap:<UTC hour>`     | a check could not read from this hour on     | marks.ts                    | marks.ts     |
 *
 * `orderId` is `data.orderId` of the event; `eventId` its `id`, which the service also sends as the
 * webhook-id header, the same on every retry. An order.created event is keyed by its order: a copy of
 * it names the same order, and so does a check that caught it up, so that copy's run outputs nothing.
 * What n8n's store cannot promise: it reads and writes the row whole without a lock, so two processes
 * (queue-mode workers) recording at one instant can each find a key new, or one can drop the other's
 * key. Runs of one process take turns (`claim`), so only separate processes can meet.
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

/**
 * Keys the store keeps by default (option History Size; the oldest go first): a copy is recognised
 * while fewer keys came after it. n8n reads and writes the whole row for every write: 0.6-0.8 ms of
 * CPU per event at 2,000 keys, 1.9-3.2 ms at 5,000, 3.8-6.3 ms at 10,000, the bound (test/bench/historySize.bench.ts).
 */
export const DEFAULT_HISTORY_SIZE = 2_000;
export const MIN_HISTORY_SIZE = 100;
export const MAX_HISTORY_SIZE = 10_000;

export const ORDER_CREATED = 'order.created';

/** The option History Size, checked before anything is recorded. */
export function historySizeOf(ctx: IExecuteFunctions): number {
	const { historySize = DEFAULT_HISTORY_SIZE } = ctx.getNodeParameter('options', 0, {}) as {
		historySize?: number;
	};
	if (!Number.isInteger(historySize) || historySize < MIN_HISTORY_SIZE) {
		throw new NodeOperationError(
			ctx.getNode(),
			`History Size must be a whole number of at least ${MIN_HISTORY_SIZE} (it is ${String(historySize)})`,
			{ itemIndex: 0 },
		);
	}
	// a workflow saved when the bound was 100,000 keeps running, on the bound
	return Math.min(historySize, MAX_HISTORY_SIZE);
}

/** The key of one item: `order:<orderId>` for an order.created event or a caught-up order, else `event:<eventId>`. */
export function keyOf(json: IDataObject): string {
	const orderId = (json.data as IDataObject | undefined)?.orderId;
	if (json.type === ORDER_CREATED && Number.isSafeInteger(orderId))
		return `order:${String(orderId)}`;
	return `event:${String(json.id)}`;
}

/**
 * The turns of this process's runs, per workflow and node. Runs that wait for a turn while a write
 * is under way are recorded together, in one write, when it ends; work that must run alone (marks.ts
 * looks marks up by recording and removing) has a turn of its own.
 */
type Job =
	| {
			kind: 'record';
			ctx: IExecuteFunctions;
			keys: string[];
			historySize: number;
			done: (fresh: Set<string>) => void;
			failed: (error: Error) => void;
	  }
	| {
			kind: 'alone';
			work: () => Promise<unknown>;
			done: (v: unknown) => void;
			failed: (error: Error) => void;
	  };

const queues = new Map<string, Job[]>();

const turnOf = (ctx: IExecuteFunctions) => `${ctx.getWorkflow().id ?? ''}|${ctx.getNode().id}`;
const asError = (error: unknown) => (error instanceof Error ? error : new Error(String(error)));

function enqueue(ctx: IExecuteFunctions, job: Job): void {
	const turn = turnOf(ctx);
	const queue = queues.get(turn);
	if (queue) {
		queue.push(job);
		return;
	}
	queues.set(turn, [job]);
	void drain(turn);
}

async function drain(turn: string): Promise<void> {
	const queue = queues.get(turn)!;
	while (queue.length > 0) {
		if (queue[0].kind === 'alone') {
			const job = queue[0];
			await job.work().then(job.done, (error) => job.failed(asError(error)));
			queue.shift();
			continue;
		}
		let end = 0;
		while (queue[end]?.kind === 'record') end++;
		const batch = queue.slice(0, end) as Array<Extract<Job, { kind: 'record' }>>;
		try {
			const result = await batch[0].ctx.helpers.checkProcessedAndRecord(
				[...new Set(batch.flatMap((job) => job.keys))],
				'node',
				{ mode: 'entries', maxEntries: batch[0].historySize },
			);
			const unclaimed = new Set(result.new.map(String));
			for (const job of batch) {
				// a key two runs of the batch hold is new for the first only
				const fresh = new Set(job.keys.filter((key) => unclaimed.has(key)));
				for (const key of fresh) unclaimed.delete(key);
				job.done(fresh);
			}
		} catch (error) {
			for (const job of batch) job.failed(asError(error));
		}
		queue.splice(0, end);
	}
	queues.delete(turn);
}

/** Runs `work` alone in this node's turn (no recording meanwhile). */
export async function alone<T>(ctx: IExecuteFunctions, work: () => Promise<T>): Promise<T> {
	return await new Promise<T>((done, failed) =>
		enqueue(ctx, { kind: 'alone', work, done: done as (v: unknown) => void, failed }),
	);
}

/** What recording found: the keys that are new, or the error the store gave. */
export type Claimed = { fresh: Set<string> } | { error: Error };

/**
 * Records `keys` in n8n's deduplication store, in this run's turn (with the runs waiting beside it),
 * and returns those that were not there before. A key given twice counts once.
 */
export async function claim(
	ctx: IExecuteFunctions,
	keys: string[],
	historySize: number,
): Promise<Claimed> {
	const unique = [...new Set(keys)];
	if (unique.length === 0) return { fresh: new Set() };
	try {
		const fresh = await new Promise<Set<string>>((done, failed) =>
			enqueue(ctx, { kind: 'record', ctx, keys: unique, historySize, done, failed }),
		);
		return { fresh };
	} catch (error) {
		return { error: asError(error) };
	}
}

/**
 * The items that run: those whose key is new. When the store failed, every item runs, marked with
 * `storageWarning` (a copy of it may run again): an event is never dropped for the store's sake.
 */
export function itemsThatRun(
	candidates: Array<{ json: IDataObject; from: number }>,
	recorded: Claimed,
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

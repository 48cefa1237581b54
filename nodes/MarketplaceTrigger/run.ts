/**
 * execute() of the Marketplace Trigger: the start of every run webhook() or trigger() hands over.
 *
 * 1. once: each item's key (a delivered event's delivery key, a caught-up order's order key: the
 *    keys of store.ts) is checked and recorded in n8n's deduplication store (`checkProcessedAndRecord`,
 *    scope node), and so is the order key of a delivered order.created, which a later catch-up then
 *    leaves out. The store lives in n8n's
 *    database, which every process of a queue-mode n8n shares and a restart keeps, so a copy that
 *    webhook() could not recognise (it reached another webhook processor, or came while that
 *    processor's save was not visible yet) runs nothing here: its run ends with no items.
 * 2. answer: the delivery that started the run gets its 2xx now that n8n has started the run
 *    (responseMode 'responseNode': n8n writes this answer to the waiting request).
 *
 * Nothing here writes the workflow's static data: inside a run on a queue-mode worker it is not the
 * saved one, and saving it would overwrite the endpoint's record.
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { TriggerProcess } from './memory';
import { deliveryKey, ORDER_CREATED, orderKey } from './store';

/** Keys the deduplication store keeps for this node; older ones give way (n8n's `maxEntries`). */
export const RUN_KEYS_KEPT = 2_000;

/**
 * The keys a run records for an item, the one that decides first, as webhook() keys them (store.ts):
 * a delivered event's delivery key (the service makes the event's id its webhook-id) and, for an
 * order.created, its order key; a caught-up order's order key. Events are told apart by id, as the
 * service does; an order is kept so that a catch-up after its event leaves it out.
 */
export function runKeysOf(json: IDataObject): string[] {
	const orderId = (json.data as IDataObject | undefined)?.orderId;
	const order = json.type === ORDER_CREATED && orderId !== undefined ? [orderKey(orderId)] : [];
	return json.caughtUp === true ? order : [deliveryKey(String(json.id)), ...order];
}

/** execute() of the node, with this process's part of the trigger. */
export function runWith(getTriggerProcess: () => TriggerProcess) {
	return async function run(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = this.getInputData();
		const mode = this.getMode();
		// a run of the editor (a sample, an Execute step) is not an event to keep out of later runs
		const once = mode === 'webhook' || mode === 'trigger';
		const kept = once
			? await keepFirstRuns(this, getTriggerProcess(), items)
			: { indexes: items.map((_, i) => i) };
		const out = kept.indexes.map((i) => ({
			json: kept.warning ? { ...items[i].json, storageWarning: kept.warning } : items[i].json,
			pairedItem: { item: i },
		}));
		if (mode === 'webhook' || mode === 'manual') await answerDelivery(this, items, out.length);
		return [out];
	};
}

/**
 * The indexes of the items whose key n8n's deduplication store had not recorded (it records them now). The calls of
 * one process go one at a time: the store reads and writes one row without a lock, so two at once
 * would lose one's keys. When the store cannot be used the items all pass, with a warning.
 */
async function keepFirstRuns(
	ctx: IExecuteFunctions,
	triggerProcess: TriggerProcess,
	items: INodeExecutionData[],
): Promise<{ indexes: number[]; warning?: string }> {
	const keys = items.map((item) => runKeysOf(item.json));
	const record = async () =>
		await ctx.helpers.checkProcessedAndRecord([...new Set(keys.flat())], 'node', {
			mode: 'entries',
			maxEntries: RUN_KEYS_KEPT,
		});
	// once more after a failure: two processes' first records at once fail one on the row's key
	const check = triggerProcess.runKeys.then(async () => await record().catch(record));
	triggerProcess.runKeys = check.then(
		() => undefined,
		() => undefined,
	);
	try {
		const processed = new Set((await check).processed.map(String));
		return { indexes: keys.flatMap(([first], i) => (processed.has(first) ? [] : [i])) };
	} catch (error) {
		const message = (error as Error).message;
		ctx.logger.warn(`Marketplace Trigger could not use n8n's deduplication store: ${message}`);
		return {
			indexes: keys.map((_, i) => i),
			warning: `n8n's deduplication store could not be used (${message}): a copy of this event that reached another n8n triggerProcess, or came after a restart, may run again.`,
		};
	}
}

/** The answer to the delivery that started this run (none for a run trigger() started). */
async function answerDelivery(
	ctx: IExecuteFunctions,
	items: INodeExecutionData[],
	ran: number,
): Promise<void> {
	const event = items.find((item) => item.json.caughtUp !== true)?.json;
	const body: IDataObject = event
		? { received: true, ...(ran === 0 ? { ignored: 'duplicate' } : {}), id: event.id }
		: { received: true, caughtUpOrders: ran };
	try {
		await ctx.sendResponse({
			body: Buffer.from(JSON.stringify(body)),
			headers: { 'content-type': 'application/json; charset=utf-8' },
			statusCode: 200,
		});
	} catch (error) {
		// the service did not hear back and sends the event again: a duplicate then
		ctx.logger.warn(
			`Marketplace Trigger could not answer the delivery: ${(error as Error).message}`,
		);
	}
}

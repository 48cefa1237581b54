/**
 * execute() of the Marketplace Trigger: the start of every run webhook() or trigger() hands over.
 *
 * 1. once: the items none of whose keys ran before, by n8n's `processed_data` table (once.ts
 *    `recordRunKeys`): a copy that webhook() could not recognise (it reached another webhook
 *    processor, or came while that processor's save was not visible yet) outputs nothing here (its
 *    execution has started).
 * 2. answer: the delivery that started the run gets its 2xx now that n8n has started the run
 *    (responseMode 'responseNode': n8n writes this answer to the waiting request).
 *
 * Nothing here writes the workflow's static data: inside a run on a queue-mode worker it is not the
 * saved one, and saving it would overwrite the endpoint's record.
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { TriggerProcess } from './memory';
import { recordRunKeys } from './once';

/** execute() of the node, with this process's part of the trigger. */
export function runWith(getTriggerProcess: () => TriggerProcess) {
	return async function run(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = this.getInputData();
		const mode = this.getMode();
		// a run of the editor (a sample, an Execute step) is not an event to keep out of later runs
		const publishedRun = mode === 'webhook' || mode === 'trigger';
		const kept = publishedRun
			? await recordRunKeys(this, getTriggerProcess(), items)
			: { indexes: items.map((_, i) => i) };
		const out = kept.indexes.map((i) => ({
			json: kept.warning ? { ...items[i].json, storageWarning: kept.warning } : items[i].json,
			pairedItem: { item: i },
		}));
		if (mode === 'webhook' || mode === 'manual') await answerDelivery(this, items, out.length);
		return [out];
	};
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

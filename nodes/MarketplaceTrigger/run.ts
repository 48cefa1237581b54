/**
 * execute() of the Marketplace Trigger: n8n runs it at the start of every run that webhook() (one
 * event) or trigger() (one check) started, with the items they handed over.
 *
 * 1. a check item becomes the orders it caught up (catchUp.ts `caughtUpOrders`);
 * 2. in a published run, every event and order is recorded in n8n's deduplication store, and only
 *    those not recorded before go on (once.ts); with them the run's hour is marked: the catch-up's
 *    cursor, which the next check reads (catchUp.ts). A run of the editor (a sample) records nothing.
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { transportClock } from '../shared/transport/clock';
import { caughtUpOrders, CHECK_FIELD } from './catchUp';
import { historySizeOf, itemsThatRun, keyOf, recordOnce } from './once';

export async function runItems(
	ctx: IExecuteFunctions,
	continueOnFail: boolean,
): Promise<INodeExecutionData[][]> {
	const items = ctx.getInputData();
	const historySize = historySizeOf(ctx);
	const candidates: Array<{ json: IDataObject; from: number }> = [];
	const failed: INodeExecutionData[] = [];
	for (const [index, item] of items.entries()) {
		if (item.json[CHECK_FIELD] === undefined) {
			candidates.push({ json: item.json, from: index });
			continue;
		}
		try {
			for (const json of await caughtUpOrders(ctx, item.json, index, historySize))
				candidates.push({ json, from: index });
		} catch (error) {
			const failure =
				error instanceof NodeApiError || error instanceof NodeOperationError
					? error
					: new NodeOperationError(ctx.getNode(), error as Error, { itemIndex: index });
			if (!continueOnFail) throw failure;
			failed.push({ json: { error: failure.message }, pairedItem: { item: index } });
		}
	}
	if (ctx.getMode() === 'manual')
		return [
			[...candidates.map(({ json, from }) => ({ json, pairedItem: { item: from } })), ...failed],
		];
	const recorded = await recordOnce(
		ctx,
		candidates.map(({ json }) => keyOf(json)),
		historySize,
		// a check that failed leaves its hour unmarked (its gap mark says where to read from)
		failed.length === 0 ? transportClock().now() : undefined,
	);
	if ('error' in recorded)
		ctx.logger.warn(`Marketplace Trigger could not record its events: ${recorded.error.message}`);
	return [[...itemsThatRun(candidates, recorded), ...failed]];
}

/**
 * execute() of the Marketplace Trigger: n8n runs it at the start of every run that webhook() (one
 * event) or poll() (one check) started, with the items they handed over.
 *
 * 1. a check item becomes the orders it caught up (catchUp.ts `caughtUpOrders`);
 * 2. in a published run, every event and order is recorded in n8n's deduplication store, and only
 *    those not recorded before go on (once.ts); with them goes the mark of the run's hour, which moves
 *    the catch-up's cursor (marks.ts `activeHourMark`). A run of the editor (a sample) records nothing;
 * 3. a check's notice (the endpoint had been disabled) rides on the first item that goes on.
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { transportClock } from '../shared/transport/clock';
import { catchUpApplies, caughtUpOrders, CHECK_FIELD, runParameter } from './catchUp';
import { activeHourMark } from './marks';
import { claim, historySizeOf, itemsThatRun, keyOf } from './once';

export async function admitItems(
	ctx: IExecuteFunctions,
	continueOnFail: boolean,
): Promise<INodeExecutionData[][]> {
	const items = ctx.getInputData();
	const historySize = historySizeOf(ctx);
	const candidates: Array<{ json: IDataObject; from: number }> = [];
	const failed: INodeExecutionData[] = [];
	const notices: Array<{ notice: string; from: number }> = [];
	const catchUp = catchUpApplies(runParameter(ctx));
	for (const [index, item] of items.entries()) {
		if (item.json[CHECK_FIELD] === undefined) {
			candidates.push({ json: item.json, from: index });
			continue;
		}
		if (typeof item.json.notice === 'string')
			notices.push({ notice: item.json.notice, from: index });
		if (!catchUp) continue;
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
	const keys = candidates.map(({ json }) => keyOf(json));
	// the catch-up's cursor moves with what ran; a check that failed leaves its hour unmarked (its gap says where to read from)
	if (failed.length === 0) keys.push(activeHourMark(transportClock().now()));
	const recorded = await claim(ctx, keys, historySize);
	if ('error' in recorded)
		ctx.logger.warn(`Marketplace Trigger could not record its events: ${recorded.error.message}`);
	return [withNotices(itemsThatRun(candidates, recorded), notices, failed)];
}

/**
 * A check's notice (the endpoint had been disabled) rides on the first item that runs, or is an item
 * of its own when none runs: the workflow is told once, by the run of that check.
 */
function withNotices(
	out: INodeExecutionData[],
	notices: Array<{ notice: string; from: number }>,
	failed: INodeExecutionData[],
): INodeExecutionData[] {
	if (notices.length === 0) return [...out, ...failed];
	const notice = notices.map((n) => n.notice).join(' ');
	if (out.length === 0)
		return [{ json: { notice }, pairedItem: { item: notices[0].from } }, ...failed];
	const [first, ...rest] = out;
	return [{ ...first, json: { ...first.json, notice } }, ...rest, ...failed];
}

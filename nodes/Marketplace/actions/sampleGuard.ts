/**
 * A test run must not write what a sample names. The Marketplace Trigger's test event (*Execute
 * step* in n8n 2.41's panel, which shows "Listening for test event" while it waits) and the Polling
 * Trigger's "Fetch Test Event" build their item from the user's newest real order (marked
 * `sample: true`); run from the editor, the rest of the workflow would change that order at the
 * service, though nobody chose it. So in a manual run the writes hold back every item that
 * descends from such a sample: it is output marked `heldBack`, with the reason, and nothing is sent,
 * unless Options > Write Sample Items is on.
 *
 * Descent is n8n's own paired-item resolution, the one behind `$('Trigger').item` in an expression
 * (n8n-workflow's WorkflowDataProxy): for each of the node's ancestors that is one of the two
 * triggers, the item's paired ancestor in that trigger's output is read. An item whose ancestry cannot
 * be resolved (a node that drops paired items, a trigger that did not run) is written, as before.
 * Runs other than manual ones (production: webhook, trigger), an AI Agent's tool calls (the node's
 * `…Tool` type) and manual runs from any other trigger are not touched.
 */
import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { isRecord } from '../../shared/isRecord';
import { SAMPLE_FIELD } from '../../shared/sample';
import { param } from './readers';

/** The option of every write that lets sample items through. */
export const writeSampleItemsOption: INodeProperties = {
	displayName: 'Write Sample Items',
	name: 'writeSampleItems',
	type: 'boolean',
	default: false,
	description:
		"Whether to write items that come from a Marketplace trigger's test event (a sample made from your real data) when the workflow runs from the editor. Off: they are output as held back and nothing is sent. Production runs always write.",
};

/** Node types whose test event is a sample: the two triggers, as n8n names community nodes (`<package>.<name>`). */
const SAMPLE_TRIGGER_TYPE = /(^|\.)marketplace(Polling)?Trigger$/;

export interface SampleOrigin {
	/** the trigger node's name */
	trigger: string;
}

/** The sample an input item of this write descends from, if it must be held back; else undefined. */
export type SampleCheck = (itemIndex: number) => SampleOrigin | undefined;

const never: SampleCheck = () => undefined;

/** The triggers among the node's ancestors, or none where the run is not a manual one or n8n cannot tell. */
function sampleTriggers(ctx: IExecuteFunctions): string[] {
	if (ctx.getMode() !== 'manual') return [];
	const node = ctx.getNode();
	// as an AI Agent's tool (n8n names the tool variant `<type>Tool`) the agent decides what to write
	if (node.type.endsWith('Tool')) return [];
	// declared on IExecuteFunctions (FunctionsBase) by n8n-workflow 2.41.0 and by the n8n-workflow of
	// n8n 2.0.3 (2.0.1) and 1.123.81 (1.120.31); n8n-core's NodeExecutionContext implements it in each
	try {
		return ctx
			.getParentNodes(node.name)
			.filter((p) => !p.disabled && SAMPLE_TRIGGER_TYPE.test(p.type))
			.map((p) => p.name);
	} catch {
		// n8n cannot resolve the node's ancestors: no trigger is known to have sent a sample
		return [];
	}
}

/** The paired ancestor of input item `itemIndex` in `trigger`'s output, as `$('trigger').item` reads it. */
function pairedTriggerItem(
	ctx: IExecuteFunctions,
	itemIndex: number,
	trigger: string,
): IDataObject | undefined {
	try {
		const proxy = ctx.getWorkflowDataProxy(itemIndex);
		const item = (proxy.$(trigger) as { item?: unknown }).item;
		return isRecord(item) && isRecord(item.json) ? item.json : undefined;
	} catch {
		// n8n cannot pair the item with the trigger's output: not known to be a sample
		return undefined;
	}
}

const checks = new WeakMap<IExecuteFunctions, SampleCheck>();

/**
 * The check for this run of the node (one per execute context, so the ancestors are looked up once):
 * which input items come from a sample and are not to be written.
 */
export function sampleCheck(ctx: IExecuteFunctions): SampleCheck {
	const known = checks.get(ctx);
	if (known) return known;
	const triggers = sampleTriggers(ctx);
	const check: SampleCheck =
		triggers.length === 0
			? never
			: (itemIndex) => {
					const options = param<IDataObject>(ctx, 'options', itemIndex, {});
					if (isRecord(options) && options.writeSampleItems === true) return undefined;
					for (const trigger of triggers) {
						const json = pairedTriggerItem(ctx, itemIndex, trigger);
						if (json?.[SAMPLE_FIELD] === true) return { trigger };
					}
					return undefined;
				};
	checks.set(ctx, check);
	return check;
}

/** The output of a held-back item: `{ heldBack, heldBackReason, ...fields }` (the fields name what was not written). */
export function heldBackRecord(origin: SampleOrigin, fields: IDataObject = {}): IDataObject {
	return {
		heldBack: true,
		heldBackReason: `Not written: this item comes from a sample, the test event of "${origin.trigger}", made from your real data. A run from the editor does not write sample items, so nothing was sent to the service. To write it, turn on "Write Sample Items" in this node's Options.`,
		...fields,
	};
}

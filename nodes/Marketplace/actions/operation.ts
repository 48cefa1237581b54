/**
 * The two shapes an operation file exports (one file per operation, description beside execute).
 */
import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';

/** Runs once per input item: `parse` checks every item before `run` sends anything. */
export interface ItemOperation<Input = unknown> {
	kind: 'item';
	description: INodeProperties[];
	/** reads and checks the item's parameters; throws InputError naming the field */
	parse(this: IExecuteFunctions, itemIndex: number): Input;
	/** sends the request(s) and returns the records to output for this item */
	run(this: IExecuteFunctions, input: Input, itemIndex: number): Promise<IDataObject[]>;
}

/**
 * Runs once for all input items (batch writes), pairing every output item itself; with
 * `continueOnFail` a failed item is output with its error.
 */
export interface BatchOperation {
	kind: 'batch';
	description: INodeProperties[];
	execute(
		this: IExecuteFunctions,
		items: INodeExecutionData[],
		continueOnFail: boolean,
	): Promise<INodeExecutionData[]>;
}

export type Operation = ItemOperation<unknown> | BatchOperation;

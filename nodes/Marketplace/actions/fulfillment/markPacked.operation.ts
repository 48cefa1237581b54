import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { MARK_PACKED_MAX_BATCH } from '../../../shared/routes';
import {
	apiRequest,
	newIdempotencyKey,
	type TransportSettings,
} from '../../../shared/transport/request';
import { toIdempotencyKey, toIdList, toLimit, toWholeNumber } from '../../../shared/validation';
import { forOperation, idempotencyKeyOption } from '../descriptions';
import { param, requestSettings } from '../readers';
import type { BatchOperation } from '../operation';
import { errorItem, toNodeError } from '../itemErrors';
import { isRecord } from '../../../shared/isRecord';
import { heldBackRecord, sampleCheck, writeSampleItemsOption } from '../sampleGuard';

/**
 * POST /v1/fulfillment/orders/packed. Order ids come from every input item; they go out in as few
 * requests as the batch size allows; each per-order result returns to the item it came from. Items
 * from a trigger's sample in a run from the editor are held back (sampleGuard.ts): their ids are not sent.
 * Failed orders can be resent (only them) under a new Idempotency-Key. A partial failure fails the
 * node only when the user asks for it.
 */
export const description = forOperation('fulfillment', 'markPacked', [
	{
		displayName: 'Order IDs',
		name: 'orderIds',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. 1042',
		description:
			'The order ID(s) of each input item: one ID, a comma-separated list or an array, usually an expression that reads the order ID field of the item',
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			{
				displayName: 'Batch Size',
				name: 'batchSize',
				type: 'number',
				typeOptions: { minValue: 1, maxValue: MARK_PACKED_MAX_BATCH },
				default: MARK_PACKED_MAX_BATCH,
				description: 'Order IDs per request (the service accepts up to 100)',
			},
			{
				displayName: 'Fail on Any Failed Order',
				name: 'failOnItemError',
				type: 'boolean',
				default: false,
				description:
					'Whether to stop the workflow with an error when any order could not be marked packed. Off: failed orders are output with their error.',
			},
			{
				...idempotencyKeyOption,
				description:
					'Key for exactly-once across re-runs, read from the first item; batch N is sent as <key>-N. Empty: new keys per batch, kept across retries.',
			},
			{
				displayName: 'Resend Failed Orders',
				name: 'resendRounds',
				type: 'number',
				typeOptions: { minValue: 0, maxValue: 5 },
				default: 0,
				description:
					'How many times to resend only the orders that failed, each time under a new Idempotency-Key',
			},
			writeSampleItemsOption,
		],
	},
]);

interface ItemResult {
	success: boolean;
	status?: string;
	error?: IDataObject;
	note?: string;
}

interface PackResult extends ItemResult {
	orderId: number;
	requestId?: string;
	attempts: number;
}

interface Settings {
	batchSize: number;
	resendRounds: number;
	failOnItemError: boolean;
	key: string | undefined;
	transport: TransportSettings;
}

function readSettings(ctx: IExecuteFunctions): Settings {
	const options = param<IDataObject>(ctx, 'options', 0, {});
	return {
		batchSize: toLimit(
			options.batchSize ?? MARK_PACKED_MAX_BATCH,
			'Options > Batch Size',
			MARK_PACKED_MAX_BATCH,
		),
		resendRounds:
			options.resendRounds === undefined
				? 0
				: toWholeNumber(options.resendRounds, 'Options > Resend Failed Orders', 0, 5),
		failOnItemError: options.failOnItemError === true,
		key: toIdempotencyKey(options.idempotencyKey, 'Options > Idempotency Key'),
		transport: requestSettings(ctx, 0),
	};
}

/** Reads the per-item results tolerantly: failed = `success: false` or an `error` member. */
function readResults(body: unknown): Map<number, ItemResult> {
	const results = new Map<number, ItemResult>();
	const list = isRecord(body) && Array.isArray(body.results) ? body.results : [];
	for (const entry of list) {
		if (!isRecord(entry)) continue;
		const orderId = Number(entry.orderId);
		if (!Number.isInteger(orderId)) continue;
		const error = isRecord(entry.error) ? entry.error : undefined;
		results.set(orderId, {
			success: entry.success !== false && error === undefined,
			status: typeof entry.status === 'string' ? entry.status : undefined,
			error,
		});
	}
	return results;
}

const CONFLICT = /(^|\/)conflict$/;

/**
 * An earlier attempt of this request failed with a 5xx (or its connection broke) and the service
 * ran the retry afresh: orders that attempt packed now answer `conflict`. Those are read back, and
 * the ones that are Packed are reported as packed, with a note.
 */
async function settleConflicts(
	this: IExecuteFunctions,
	perOrder: Map<number, ItemResult>,
	transport: TransportSettings,
): Promise<void> {
	for (const [orderId, result] of perOrder) {
		if (result.success || !CONFLICT.test(String(result.error?.type ?? ''))) continue;
		const { body } = await apiRequest.call(
			this,
			{ route: 'getOrder', pathParams: { id: orderId } },
			transport,
		);
		if ((body as IDataObject).status === 'Packed') {
			perOrder.set(orderId, {
				success: true,
				status: 'Packed',
				error: undefined,
				note: 'Packed; an earlier attempt of this request whose answer was lost probably packed it (or it was packed already)',
			});
		}
	}
}

function chunks<T>(list: T[], size: number): T[][] {
	const out: T[][] = [];
	for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
	return out;
}

export async function execute(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
	continueOnFail: boolean,
): Promise<INodeExecutionData[]> {
	let settings: Settings;
	try {
		settings = readSettings(this);
	} catch (error) {
		// The options are read from the first item; a bad one fails the node before anything is sent.
		throw toNodeError(this, error, 0);
	}

	// 1. Check every item before anything is sent.
	const idsByItem: Array<number[] | undefined> = [];
	const output: Array<INodeExecutionData[]> = items.map(() => []);
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		try {
			idsByItem[itemIndex] = toIdList(param(this, 'orderIds', itemIndex), 'Order IDs', true);
		} catch (error) {
			const nodeError = toNodeError(this, error, itemIndex);
			if (!continueOnFail) throw nodeError;
			output[itemIndex].push(errorItem(nodeError, itemIndex));
		}
	}

	// 2. Items from a sample are not sent; one request per batch of the other items' distinct order
	// ids; every result kept by order id.
	const sample = sampleCheck(this);
	const heldBack = idsByItem.map((ids, itemIndex) => (ids ? sample(itemIndex) : undefined));
	const results = new Map<number, PackResult>();
	const requestErrors = new Map<number, ReturnType<typeof toNodeError>>();
	const order = [...new Set(idsByItem.flatMap((ids, i) => (heldBack[i] ? [] : (ids ?? []))))];

	let batchNumber = 0;
	const send = async (ids: number[], round: number) => {
		for (const batch of chunks(ids, settings.batchSize)) {
			batchNumber++;
			const key = settings.key
				? `${settings.key}-${batchNumber}${round > 0 ? `-resend${round}` : ''}`
				: newIdempotencyKey();
			try {
				const response = await apiRequest.call(
					this,
					{ route: 'markOrdersPacked', body: { orderIds: batch }, idempotencyKey: key },
					settings.transport,
				);
				const perOrder = readResults(response.body);
				if (response.uncertain && !response.replayed) {
					await settleConflicts.call(this, perOrder, settings.transport);
				}
				for (const orderId of batch) {
					const result = perOrder.get(orderId);
					const previous = results.get(orderId);
					results.set(orderId, {
						orderId,
						success: result?.success ?? false,
						status: result?.status,
						error: result
							? result.error
							: { detail: 'The service returned no result for this order' },
						...(result?.note ? { note: result.note } : {}),
						requestId: response.requestId,
						attempts: (previous?.attempts ?? 0) + 1,
					});
				}
			} catch (error) {
				const firstItem = idsByItem.findIndex((list) => list?.includes(batch[0]));
				const nodeError = toNodeError(this, error, firstItem);
				if (!continueOnFail) throw nodeError;
				for (const orderId of batch) requestErrors.set(orderId, nodeError);
			}
		}
	};
	await send(order, 0);
	for (let round = 1; round <= settings.resendRounds; round++) {
		const failed = order.filter((id) => results.get(id)?.success === false);
		if (failed.length === 0) break;
		await send(failed, round);
	}

	// 3. One output item per (input item, order id), paired with its input item.
	const failures: string[] = [];
	idsByItem.forEach((ids, itemIndex) => {
		const origin = heldBack[itemIndex];
		for (const orderId of ids ?? []) {
			if (origin) {
				output[itemIndex].push({
					json: heldBackRecord(origin, { orderId }),
					pairedItem: { item: itemIndex },
				});
				continue;
			}
			const requestError = requestErrors.get(orderId);
			if (requestError) {
				output[itemIndex].push(errorItem(requestError, itemIndex, { orderId }));
				continue;
			}
			const result = results.get(orderId) as PackResult;
			if (!result.success)
				failures.push(
					`${orderId} (${String(result.error?.detail ?? result.error?.title ?? 'failed')})`,
				);
			output[itemIndex].push({
				json: { ...result } as unknown as IDataObject,
				pairedItem: { item: itemIndex },
			});
		}
	});
	if (settings.failOnItemError && failures.length > 0) {
		throw new NodeOperationError(
			this.getNode(),
			`${failures.length} order${failures.length === 1 ? '' : 's'} could not be marked packed: ${failures.slice(0, 10).join(', ')}${failures.length > 10 ? ', ...' : ''}`,
			{
				description:
					'The other orders were marked packed. Turn off "Fail on Any Failed Order" to output failed orders as items instead.',
			},
		);
	}
	return output.flat();
}

export const markPacked: BatchOperation = { kind: 'batch', description, execute };

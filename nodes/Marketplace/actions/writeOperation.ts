import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { RouteName } from '../../shared/routes';
import { apiRequest, type TransportSettings } from '../../shared/transport/request';
import { forOperation, writeOptions } from './descriptions';
import type { ItemOperation } from './operation';
import { idempotencyKeyFor, requestSettings } from './readers';
import { heldBackRecord, sampleCheck } from './sampleGuard';

export interface WriteInput {
	pathParams?: Record<string, string | number>;
	body?: IDataObject;
	idempotencyKey: string;
	settings: TransportSettings;
}

/**
 * A single write (POST/PATCH/DELETE) per item, carrying an Idempotency-Key: the user's (Options >
 * Idempotency Key) or one generated per item and kept across retries. An item from a trigger's
 * sample in a run from the editor is held back (sampleGuard.ts): output with the reason, not sent.
 */
export function writeOperation(spec: {
	resource: string;
	operation: string;
	route: RouteName;
	properties: INodeProperties[];
	parse: (
		ctx: IExecuteFunctions,
		itemIndex: number,
	) => { pathParams?: Record<string, string | number>; body?: IDataObject };
	/** turns the response body into output records (default: the body itself) */
	present?: (body: IDataObject, input: WriteInput) => IDataObject[];
	/**
	 * For writes the Idempotency-Key cannot protect after a 5xx (the service releases the key):
	 * called before the first attempt, it returns the check the transport runs before any retry,
	 * which finds the effect of an earlier attempt and answers with it instead.
	 */
	reconcile?: (
		ctx: IExecuteFunctions,
		input: WriteInput,
		itemIndex: number,
	) => Promise<() => Promise<IDataObject | undefined>>;
}): ItemOperation<WriteInput> {
	return {
		kind: 'item',
		description: forOperation(spec.resource, spec.operation, [...spec.properties, writeOptions]),
		parse(itemIndex) {
			return {
				...spec.parse(this, itemIndex),
				idempotencyKey: idempotencyKeyFor(this, itemIndex),
				settings: requestSettings(this, itemIndex),
			};
		},
		async run(input, itemIndex) {
			const sample = sampleCheck(this)(itemIndex);
			if (sample) return [heldBackRecord(sample, { ...input.pathParams })];
			const reconcile = spec.reconcile ? await spec.reconcile(this, input, itemIndex) : undefined;
			const response = await apiRequest.call(
				this,
				{
					route: spec.route,
					pathParams: input.pathParams,
					body: input.body,
					idempotencyKey: input.idempotencyKey,
					itemIndex,
					reconcile,
				},
				input.settings,
			);
			const body = (response.body ?? {}) as IDataObject;
			return spec.present ? spec.present(body, input) : [body];
		},
	};
}

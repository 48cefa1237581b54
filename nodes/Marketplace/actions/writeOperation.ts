import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { RouteName } from '../../shared/routes';
import {
	apiRequest,
	type TransportSettings,
	type UncertainWrite,
} from '../../shared/transport/request';
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

interface WriteSpec {
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
}

type Reconcile = (
	ctx: IExecuteFunctions,
	input: WriteInput,
	itemIndex: number,
) => Promise<() => Promise<IDataObject | undefined>>;

/**
 * Every write happens once or says it may not have: after a 5xx or no answer the service may have
 * run it and has released its Idempotency-Key, so it is sent again only when its effect can be
 * looked for first (`reconcile`); otherwise (`ifUncertain`) the item fails saying what may have
 * happened and what to do (the transport's rule, request.ts).
 */
type AfterUncertainFailure =
	| {
			/**
			 * Called before the first attempt, it returns the check the transport runs before any
			 * retry, which finds the effect of an earlier attempt and answers with it instead.
			 */
			reconcile: Reconcile;
			ifUncertain?: undefined;
	  }
	| { reconcile?: undefined; ifUncertain: UncertainWrite };

/**
 * A single write (POST/PATCH/DELETE) per item, carrying an Idempotency-Key: the user's (Options >
 * Idempotency Key) or one generated per item and kept across retries. An item from a trigger's
 * sample in a run from the editor is held back (sampleGuard.ts): output with the reason, not sent.
 */
export function writeOperation(spec: WriteSpec & AfterUncertainFailure): ItemOperation<WriteInput> {
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
					ifUncertain: spec.ifUncertain,
				},
				input.settings,
			);
			const body = (response.body ?? {}) as IDataObject;
			return spec.present ? spec.present(body, input) : [body];
		},
	};
}

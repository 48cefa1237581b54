/**
 * Readers of the parameters several operations share; each checks its value and names the field
 * in its error.
 */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { readRequestOptions } from '../../shared/requestOptions';
import { newIdempotencyKey, type TransportSettings } from '../../shared/transport/request';
import { toIdempotencyKey, toIdList, toLimit } from '../../shared/validation';

/** Reads an item's parameter; n8n's own errors for missing parameters are rare, so keep it plain. */
export function param<T>(ctx: IExecuteFunctions, name: string, itemIndex: number, fallback?: T): T {
	return ctx.getNodeParameter(name, itemIndex, fallback as never) as T;
}

export function requestSettings(ctx: IExecuteFunctions, itemIndex: number): TransportSettings {
	return readRequestOptions(param<IDataObject>(ctx, 'requestOptions', itemIndex, {}));
}

/** The user's idempotency key for this item (Options > Idempotency Key), else a new one. */
export function idempotencyKeyFor(ctx: IExecuteFunctions, itemIndex: number): string {
	const options = param<IDataObject>(ctx, 'options', itemIndex, {});
	return (
		toIdempotencyKey(options.idempotencyKey, 'Options > Idempotency Key') ?? newIdempotencyKey()
	);
}

export interface PageInput {
	returnAll: boolean;
	limit?: number;
}

export function readPageParams(
	ctx: IExecuteFunctions,
	itemIndex: number,
	maxLimit: number,
): PageInput {
	const returnAll = param<boolean>(ctx, 'returnAll', itemIndex, false);
	if (returnAll) return { returnAll };
	return { returnAll, limit: toLimit(param(ctx, 'limit', itemIndex, 50), 'Limit', maxLimit) };
}

export function readFilters(ctx: IExecuteFunctions, itemIndex: number): IDataObject {
	return param<IDataObject>(ctx, 'filters', itemIndex, {});
}

/** `filters.brandIds` as a list of ids (empty when not set). */
export function brandIdsOf(filters: IDataObject): number[] {
	return toIdList(filters.brandIds, 'Filters > Brand IDs');
}

/**
 * The service's record of one delivery to an endpoint (the Test answer, or one of Get Deliveries'
 * records, newest first): its status, its attempts and the HTTP status this n8n answered. The service
 * names these fields only in words, so they are read tolerantly. Pure.
 */
import type { IDataObject } from 'n8n-workflow';

export interface DeliveryRecord {
	deliveryId?: number;
	/** the event type, when the record names it */
	eventType?: string;
	/** the record's status as the service spells it ('' when absent) */
	status: string;
	attempts: number;
	/** the HTTP status the receiver answered the last attempt with; null: no answer */
	httpStatus: number | null;
	/** when the event was created (Unix ms), when the record says */
	createdAt?: number;
}

const firstNumber = (record: IDataObject, keys: string[]): number | undefined => {
	for (const key of keys) {
		const value = record[key];
		if (typeof value === 'number' && Number.isFinite(value)) return value;
	}
	return undefined;
};

/** Reads a delivery record; undefined when `body` is not an object. */
export function readDeliveryRecord(body: unknown): DeliveryRecord | undefined {
	if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
	const outer = body as IDataObject;
	const record = (
		outer.delivery && typeof outer.delivery === 'object' ? outer.delivery : outer
	) as IDataObject;
	const attemptsValue = record.attempts;
	const attempts = Array.isArray(attemptsValue)
		? attemptsValue.length
		: typeof attemptsValue === 'number'
			? attemptsValue
			: 0;
	const createdAt = Date.parse(String(record.createdAt));
	const eventType = record.eventType ?? (record.event as IDataObject | undefined)?.type;
	return {
		deliveryId: typeof record.id === 'number' ? record.id : undefined,
		eventType: typeof eventType === 'string' ? eventType : undefined,
		status: typeof record.status === 'string' ? record.status : '',
		attempts,
		httpStatus:
			firstNumber(record, [
				'responseStatusCode',
				'responseStatus',
				'httpStatus',
				'statusCode',
				'lastResponseStatus',
			]) ?? null,
		...(Number.isFinite(createdAt) ? { createdAt } : {}),
	};
}

export const isFailed = (record: DeliveryRecord) => record.status.toLowerCase() === 'failed';

/** Not attempted yet: the service has made no attempt and has not given up. */
export const isPending = (record: DeliveryRecord) => record.attempts === 0 && !isFailed(record);

/**
 * The Request Options parameter every node shows (how long to wait for an answer, how often to
 * try) and its one reader, so all nodes accept the same values.
 */
import type { IDataObject, INodeProperties } from 'n8n-workflow';

import { DEFAULT_TRANSPORT, type TransportSettings } from './transport/request';
import { toWholeNumber } from './validation';

/** Longest accepted request timeout: 10 minutes. */
const MAX_TIMEOUT_MS = 600_000;
const MAX_ATTEMPTS = 10;

export const requestOptionsProperty: INodeProperties = {
	displayName: 'Request Options',
	name: 'requestOptions',
	type: 'collection',
	placeholder: 'Add Option',
	default: {},
	options: [
		{
			displayName: 'Max Attempts',
			name: 'maxAttempts',
			type: 'number',
			typeOptions: { minValue: 1, maxValue: MAX_ATTEMPTS },
			default: 5,
			description:
				'Attempts per request, counting the first. Rate limits (429), server errors, network errors and idempotency-in-progress are retried with the same Idempotency-Key.',
		},
		{
			displayName: 'Timeout (Ms)',
			name: 'timeout',
			type: 'number',
			typeOptions: { minValue: 100, maxValue: MAX_TIMEOUT_MS },
			default: 30000,
			description: 'Milliseconds to wait for each answer before trying again',
		},
	],
};

/** Transport settings from the parameter's value; an InputError names a value out of bounds. */
export function readRequestOptions(options: IDataObject | undefined): TransportSettings {
	const maxAttempts =
		options?.maxAttempts === undefined
			? DEFAULT_TRANSPORT.retry.maxAttempts
			: toWholeNumber(options.maxAttempts, 'Request Options > Max Attempts', 1, MAX_ATTEMPTS);
	const timeoutMs =
		options?.timeout === undefined
			? DEFAULT_TRANSPORT.timeoutMs
			: toWholeNumber(options.timeout, 'Request Options > Timeout (Ms)', 100, MAX_TIMEOUT_MS);
	return { ...DEFAULT_TRANSPORT, timeoutMs, retry: { ...DEFAULT_TRANSPORT.retry, maxAttempts } };
}

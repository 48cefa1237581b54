/**
 * The service waits 10 seconds for a delivery's answer: the reads a delivery makes before it answers
 * (the current state, a sample) use a short timeout and two attempts at most (worst case
 * about 3 + 0.5 + 3 s), and a rate-limit wait that would push the answer past the limit answers 503
 * instead.
 */
import type { TransportSettings } from '../shared/transport/request';

export const WITHIN_ANSWER_LIMIT: TransportSettings = {
	timeoutMs: 3_000,
	retry: { maxAttempts: 2, baseDelayMs: 250, maxDelayMs: 1_000 },
	budgetMs: 7_000,
};

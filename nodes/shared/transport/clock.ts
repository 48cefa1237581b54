/**
 * Time as the transport sees it: n8n's `sleep`, the system clock and Math.random in n8n. Tests
 * replace it to prove the retry and pacing schedules without waiting them out, and the trigger's
 * secret bookkeeping (rotation overlap, the 24 hours without a verified delivery) reads it too.
 */
import { sleep } from 'n8n-workflow';

export interface TransportClock {
	now(): number;
	sleep(ms: number): Promise<void>;
	/** a number in [0, 1), for the retry jitter */
	random(): number;
}

const systemClock: TransportClock = {
	now: () => Date.now(),
	sleep: async (ms) => await sleep(ms),
	random: () => Math.random(),
};

let current: TransportClock = systemClock;

export function transportClock(): TransportClock {
	return current;
}

/** Replaces the transport's clock (tests); no argument restores the system clock. */
export function setTransportClock(clock: TransportClock = systemClock): void {
	current = clock;
}

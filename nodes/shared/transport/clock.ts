/**
 * Time as the transport sees it: n8n's `sleep`, the system clock and Math.random in n8n. The
 * trigger's signature checks, rotation overlap and catch-up windows read it too. The jest suites put
 * a clock of their own in its place (test/transportClock.ts), so they prove the retry and pacing
 * schedules without waiting them out.
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

export function transportClock(): TransportClock {
	return systemClock;
}

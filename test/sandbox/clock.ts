/**
 * The sandbox's virtual clock: real time plus an offset that tests move forward.
 * Delivery schedules, idempotency retention, secret overlap and endpoint disabling read it.
 */
export class VirtualClock {
	private offsetMs = 0;

	now(): number {
		return Date.now() + this.offsetMs;
	}

	iso(ms: number = this.now()): string {
		return new Date(ms).toISOString();
	}

	/** Moves the clock so that now() reads `ms` (never backwards). */
	setAtLeast(ms: number): void {
		const delta = ms - this.now();
		if (delta > 0) this.offsetMs += delta;
	}

	get offsetSeconds(): number {
		return this.offsetMs / 1000;
	}

	reset(): void {
		this.offsetMs = 0;
	}
}

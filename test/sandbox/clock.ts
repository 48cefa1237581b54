/**
 * The sandbox's virtual clock: real time plus an offset that tests move forward.
 * Delivery schedules, the rate-limit windows (requests and failed authentications), idempotency
 * retention, secret overlap and endpoint disabling read it.
 */
export class VirtualClock {
	private offsetMs = 0;

	private waiters: { at: number; wake: () => void }[] = [];

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
		this.wakeDue();
	}

	/** Moves the clock so that it is at least `ms` ahead of real time (never backwards). */
	setOffsetAtLeast(ms: number): void {
		if (ms > this.offsetMs) this.offsetMs = ms;
		this.wakeDue();
	}

	private wakeDue(): void {
		const now = this.now();
		for (const waiter of this.waiters.filter((w) => w.at <= now)) waiter.wake();
	}

	/** Resolves once `ms` have passed on this clock: in real time, or sooner when a test moves it. */
	async wait(ms: number): Promise<void> {
		await new Promise<void>((resolve) => {
			const waiter = {
				at: this.now() + ms,
				wake: () => {
					clearTimeout(timer);
					this.waiters = this.waiters.filter((w) => w !== waiter);
					resolve();
				},
			};
			const timer = setTimeout(waiter.wake, ms);
			this.waiters.push(waiter);
		});
	}

	get offsetMilliseconds(): number {
		return this.offsetMs;
	}

	get offsetSeconds(): number {
		return this.offsetMs / 1000;
	}

	reset(): void {
		this.offsetMs = 0;
	}
}

/**
 * A transport clock for tests: every wait the transport asks for is recorded and passes at once,
 * moving this clock and the sandbox's virtual clock (which its rate limit reads) forward together.
 * So a test proves the schedule (the waits asked for) without waiting it out.
 */
import { setTransportClock, type TransportClock } from '../transportClock';
import type { SandboxControl } from '../sandbox/control';

export class SteppedClock implements TransportClock {
	/** every wait the transport asked for, in ms, in order */
	readonly waits: number[] = [];

	private offsetMs = 0;

	/** `random` is the retry jitter's draw: 0.5 makes each backoff 3/4 of its step. */
	constructor(
		private readonly sandbox?: SandboxControl,
		private readonly draw = 0.5,
	) {}

	now(): number {
		return Date.now() + this.offsetMs;
	}

	async sleep(ms: number): Promise<void> {
		this.waits.push(ms);
		const whole = Math.ceil(ms);
		this.offsetMs += whole;
		await this.sandbox?.advanceClockMs(whole);
	}

	random(): number {
		return this.draw;
	}

	/**
	 * Moves this clock and the sandbox's forward without a wait being asked for (time passing between
	 * events); the sandbox's deliveries are then signed at this clock's time, as the service's are at its own.
	 */
	async advance(ms: number): Promise<void> {
		this.offsetMs += ms;
		await this.sandbox?.advanceClockMs(ms);
		await this.sandbox?.settings({ timestampSkewSeconds: Math.round(this.offsetMs / 1000) });
	}

	/** Empties `waits`. */
	clear(): void {
		this.waits.length = 0;
	}
}

/** Installs a SteppedClock for each test of the file and restores the system clock after it. */
export function useSteppedClock(sandbox: () => SandboxControl, draw?: number): () => SteppedClock {
	let clock: SteppedClock | undefined;
	beforeEach(() => {
		clock = new SteppedClock(sandbox(), draw);
		setTransportClock(clock);
	});
	afterEach(async () => {
		setTransportClock();
		await sandbox().settings({ timestampSkewSeconds: 0 });
	});
	return () => clock!;
}

/**
 * A transport clock for concurrent executions: each wait ends when this clock reaches its end, as on
 * the system clock, so concurrent waits overlap instead of adding up as SteppedClock's do. The clock
 * (and the sandbox's) moves to the earliest pending end once no wait has been asked for during
 * `quietMs` of real time, so the loopback answers in flight arrive first, as they would; one that
 * arrives later is a slow network, a schedule the transport must handle as well.
 */
export class ConcurrentClock implements TransportClock {
	/** every wait the transport asked for, in ms, in the order asked */
	readonly waits: number[] = [];

	private offsetMs = 0;

	private pending: { at: number; wake: () => void }[] = [];

	private timer: NodeJS.Timeout | undefined;

	constructor(
		private readonly sandbox?: SandboxControl,
		private readonly draw = 0.5,
		private readonly quietMs = 20,
	) {}

	now(): number {
		return Date.now() + this.offsetMs;
	}

	async sleep(ms: number): Promise<void> {
		this.waits.push(ms);
		await new Promise<void>((wake) => {
			this.pending.push({ at: this.now() + ms, wake });
			this.schedule();
		});
	}

	random(): number {
		return this.draw;
	}

	/** how far this clock has moved ahead of real time */
	get movedMs(): number {
		return this.offsetMs;
	}

	private schedule(): void {
		clearTimeout(this.timer);
		this.timer = setTimeout(() => void this.step(), this.quietMs);
	}

	private async step(): Promise<void> {
		if (this.pending.length === 0) return;
		const delta = Math.ceil(Math.min(...this.pending.map((p) => p.at)) - this.now());
		if (delta > 0) {
			this.offsetMs += delta;
			await this.sandbox?.advanceClockMs(delta);
		}
		const now = this.now();
		const due = this.pending.filter((p) => p.at <= now);
		this.pending = this.pending.filter((p) => p.at > now);
		for (const p of due) p.wake();
		if (this.pending.length > 0) this.schedule();
	}
}

/**
 * A transport clock for tests: every wait the transport asks for is recorded and passes at once,
 * moving this clock and the sandbox's virtual clock (which its rate limit reads) forward together.
 * So a test proves the schedule (the waits asked for) without waiting it out.
 */
import { setTransportClock, type TransportClock } from '../../nodes/shared/transport/clock';
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

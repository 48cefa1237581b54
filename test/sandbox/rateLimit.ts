/** Fixed-window counters, as the service counts; the sandbox passes its virtual clock's time. */
export interface WindowState {
	allowed: boolean;
	remaining: number;
	/** whole seconds until the window resets (at least 1) */
	resetSeconds: number;
}

export class FixedWindowLimiter {
	private windows = new Map<string, { start: number; count: number }>();

	constructor(
		readonly quota: number,
		readonly windowSeconds: number,
	) {}

	/** Counts one request of `id` and tells whether it is within the quota. */
	hit(id: string, now: number): WindowState {
		const windowMs = this.windowSeconds * 1000;
		let window = this.windows.get(id);
		if (!window || now >= window.start + windowMs) {
			window = { start: now, count: 0 };
			this.windows.set(id, window);
		}
		window.count++;
		return {
			allowed: window.count <= this.quota,
			remaining: Math.max(0, this.quota - window.count),
			resetSeconds: Math.max(1, Math.ceil((window.start + windowMs - now) / 1000)),
		};
	}

	reset(): void {
		this.windows.clear();
	}

	policyHeader(): string {
		return `"default";q=${this.quota};w=${this.windowSeconds}`;
	}

	static stateHeader(state: WindowState): string {
		return `"default";r=${state.remaining};t=${state.resetSeconds}`;
	}
}

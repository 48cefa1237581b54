import { VirtualClock } from './clock';
import { DeliveryEngine } from './delivery';
import { FaultBook } from './faults';
import { IdempotencyStore } from './idempotency';
import type { ResolvedOptions } from './options';
import { FixedWindowLimiter } from './rateLimit';
import { RequestLog } from './requestLog';
import { seedStore } from './seed';
import { loadState } from './stateFile';
import type { Store } from './store';

/** Everything one sandbox instance holds; nothing lives at module level. */
export class SandboxState {
	readonly clock = new VirtualClock();
	readonly limiter: FixedWindowLimiter;
	readonly authFailLimiter: FixedWindowLimiter;
	readonly idempotency: IdempotencyStore;
	readonly faults = new FaultBook();
	readonly log = new RequestLog();
	readonly engine: DeliveryEngine;
	store: Store;
	/** runtime settings changed through the control API */
	settings = { timestampSkewSeconds: 0 };
	baseUrl = '';
	/** the data came from options.stateFile, not from the seed */
	readonly restored: boolean;

	constructor(readonly options: ResolvedOptions) {
		this.limiter = new FixedWindowLimiter(options.quota, options.windowSeconds);
		this.authFailLimiter = new FixedWindowLimiter(
			options.authFailQuota,
			options.authFailWindowSeconds,
		);
		this.idempotency = new IdempotencyStore(() => this.clock.now());
		const saved = loadState(options.stateFile);
		if (saved) this.clock.setAtLeast(saved.clockNow);
		this.store = saved?.store ?? seedStore(options.seed, this.clock.now());
		this.restored = saved !== undefined;
		this.engine = new DeliveryEngine(this);
	}

	get errorsUrl(): string {
		return `${this.baseUrl}/errors`;
	}

	/** Back to the freshly seeded state (clock, limits, keys, log, faults and deliveries included). */
	async reset(): Promise<void> {
		await this.engine.settle();
		this.clock.reset();
		this.limiter.reset();
		this.authFailLimiter.reset();
		this.idempotency.reset();
		this.faults.clear();
		this.log.clear();
		this.settings = { timestampSkewSeconds: 0 };
		this.store = seedStore(this.options.seed, this.clock.now());
	}
}

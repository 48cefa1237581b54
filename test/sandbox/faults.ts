import { ROUTES, type RouteName } from '../../nodes/shared/routes';
import { type FieldError } from './errors';

export type FaultMode = '500' | '429' | 'hang' | 'drop';

/** "The next `count` requests to `route` answer `mode`, before or after the effect is applied." */
export interface FaultSpec {
	route: RouteName;
	mode: FaultMode;
	when: 'before' | 'after';
	count: number;
	/** Retry-After of a 429 fault (default 1) */
	retryAfterSeconds?: number;
	/** how long a hang lasts before the request continues (default 15000 ms), on the virtual clock: moving it ends the hang sooner */
	hangMs?: number;
}

export interface Fault extends Required<FaultSpec> {
	remaining: number;
}

export class FaultBook {
	private faults: Fault[] = [];

	static validate(spec: Record<string, unknown>): FieldError[] {
		const errors: FieldError[] = [];
		if (typeof spec.route !== 'string' || !(spec.route in ROUTES))
			errors.push({ pointer: '/route', detail: 'route must be a RouteName of ROUTES' });
		if (!['500', '429', 'hang', 'drop'].includes(String(spec.mode)))
			errors.push({ pointer: '/mode', detail: "mode is '500', '429', 'hang' or 'drop'" });
		if (spec.when !== undefined && spec.when !== 'before' && spec.when !== 'after')
			errors.push({ pointer: '/when', detail: "when is 'before' or 'after'" });
		if (spec.count !== undefined && !(Number.isInteger(spec.count) && (spec.count as number) > 0))
			errors.push({ pointer: '/count', detail: 'count is a positive integer' });
		return errors;
	}

	add(spec: FaultSpec): Fault {
		const fault: Fault = {
			route: spec.route,
			mode: String(spec.mode) as FaultMode,
			when: spec.when ?? 'before',
			count: spec.count ?? 1,
			retryAfterSeconds: spec.retryAfterSeconds ?? 1,
			hangMs: spec.hangMs ?? 15_000,
			remaining: spec.count ?? 1,
		};
		this.faults.push(fault);
		return fault;
	}

	/** The fault that applies to this request of `route`, if any (consumes one). */
	take(route: RouteName): Fault | undefined {
		const fault = this.faults.find((f) => f.route === route && f.remaining > 0);
		if (fault) fault.remaining--;
		this.faults = this.faults.filter((f) => f.remaining > 0);
		return fault;
	}

	list(): Fault[] {
		return [...this.faults];
	}

	clear(): void {
		this.faults = [];
	}
}

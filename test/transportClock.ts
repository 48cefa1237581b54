/**
 * The transport's clock in the jest suites (test/setupTransportClock.ts puts this module in place of
 * nodes/shared/transport/clock.ts): the product's clock until a test sets its own, so a schedule runs
 * on an injected clock and the product ships no setter.
 */
import type { TransportClock } from '../nodes/shared/transport/clock';

export type { TransportClock };

const product: { transportClock(): TransportClock } = jest.requireActual(
	'../nodes/shared/transport/clock',
);

let current: TransportClock | undefined;

export function transportClock(): TransportClock {
	return current ?? product.transportClock();
}

/** Replaces the transport's clock; no argument restores the product's. */
export function setTransportClock(clock?: TransportClock): void {
	current = clock;
}

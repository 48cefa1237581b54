/**
 * Rate-limit pacing from the `RateLimit` and `RateLimit-Policy` response headers,
 * read as RFC 8941 structured-field lists, e.g. `"default";r=50;t=30` and `"default";q=120;w=60`.
 * Pure: no n8n imports, no timers. Malformed headers are ignored (undefined), never trusted.
 */

export interface StructuredItem {
	/** the item's value: a string (quoted) or a token */
	value: string;
	params: Record<string, number | string | boolean>;
}

const TOKEN = /^[A-Za-z*][A-Za-z0-9:/!#$%&'*+\-.^_`|~]*/;
const KEY = /^[a-z*][a-z0-9_\-.*]*/;
const INTEGER = /^-?\d{1,15}(\.\d{1,3})?/;

/** Parses a structured-field List of items with parameters; undefined when malformed. */
export function parseStructuredList(header: string | undefined): StructuredItem[] | undefined {
	if (header === undefined) return undefined;
	let rest = header.trim();
	const items: StructuredItem[] = [];
	if (rest === '') return undefined;
	while (rest.length > 0) {
		let value: string;
		if (rest.startsWith('"')) {
			const end = readQuoted(rest);
			if (end === undefined) return undefined;
			value = end.value;
			rest = rest.slice(end.length);
		} else {
			const match = TOKEN.exec(rest);
			if (!match) return undefined;
			value = match[0];
			rest = rest.slice(match[0].length);
		}
		const params: StructuredItem['params'] = {};
		while (rest.startsWith(';')) {
			rest = rest.slice(1).replace(/^ +/, '');
			const key = KEY.exec(rest);
			if (!key) return undefined;
			rest = rest.slice(key[0].length);
			if (!rest.startsWith('=')) {
				params[key[0]] = true;
				continue;
			}
			rest = rest.slice(1);
			if (rest.startsWith('"')) {
				const quoted = readQuoted(rest);
				if (quoted === undefined) return undefined;
				params[key[0]] = quoted.value;
				rest = rest.slice(quoted.length);
			} else {
				const num = INTEGER.exec(rest);
				if (num) {
					params[key[0]] = Number(num[0]);
					rest = rest.slice(num[0].length);
				} else {
					const token = TOKEN.exec(rest);
					if (!token) return undefined;
					params[key[0]] = token[0];
					rest = rest.slice(token[0].length);
				}
			}
		}
		items.push({ value, params });
		rest = rest.replace(/^[ \t]+/, '');
		if (rest.length === 0) break;
		if (!rest.startsWith(',')) return undefined;
		rest = rest.slice(1).replace(/^[ \t]+/, '');
		if (rest.length === 0) return undefined;
	}
	return items;
}

function readQuoted(text: string): { value: string; length: number } | undefined {
	let value = '';
	for (let i = 1; i < text.length; i++) {
		const c = text[i];
		if (c === '\\') {
			const next = text[i + 1];
			if (next !== '"' && next !== '\\') return undefined;
			value += next;
			i++;
		} else if (c === '"') {
			return { value, length: i + 1 };
		} else if (c < ' ' || c > '~') {
			return undefined;
		} else {
			value += c;
		}
	}
	return undefined;
}

export interface RateLimitReading {
	/** requests left in the current window */
	remaining: number;
	/** seconds until the window resets */
	resetSeconds: number;
	/** quota per window, from RateLimit-Policy when present */
	quota?: number;
	/** window length in seconds, from RateLimit-Policy when present */
	windowSeconds?: number;
}

const nonNegativeInt = (v: unknown): v is number =>
	typeof v === 'number' && Number.isInteger(v) && v >= 0;

/**
 * Reads the two headers. The most constraining item of `RateLimit` (fewest requests left) wins;
 * `RateLimit-Policy` is matched to it by policy name. Undefined when `RateLimit` is absent or
 * malformed.
 */
export function readRateLimit(
	rateLimit: string | undefined,
	rateLimitPolicy: string | undefined,
): RateLimitReading | undefined {
	const items = parseStructuredList(rateLimit);
	if (!items) return undefined;
	let best: { name: string; r: number; t: number } | undefined;
	for (const item of items) {
		const { r, t } = item.params;
		if (!nonNegativeInt(r) || !nonNegativeInt(t)) continue;
		if (!best || r < best.r) best = { name: item.value, r, t };
	}
	if (!best) return undefined;
	const reading: RateLimitReading = { remaining: best.r, resetSeconds: best.t };
	const policy = parseStructuredList(rateLimitPolicy)?.find((p) => p.value === best!.name);
	if (policy && nonNegativeInt(policy.params.q) && nonNegativeInt(policy.params.w)) {
		reading.quota = policy.params.q;
		reading.windowSeconds = policy.params.w;
	}
	return reading;
}

/** What the pacer answers a caller: send now with this ticket, or ask again after `ms`. */
export type Turn = { ticket: number; waitMs: 0 } | { ticket?: undefined; waitMs: number };

/** How long callers wait for the one request that learns an unknown window's state. */
export const PROBE_WAIT_MS = 25;

/**
 * Paces the requests of one API key, made by any number of concurrent callers, so that they never
 * meet a 429 when nothing else spends the key's quota faster than the answers report it.
 *
 * - While the window has requests left, a caller sends at once; when none are left, it waits for
 *   the reset the service announced, then asks again.
 * - An answer's `r` counts only the requests the service had seen, so the requests still in flight
 *   are subtracted from it, and an answer to a request older than the last one read is ignored.
 * - While nothing is known (first request, or the window has passed), one request goes and the
 *   others wait for its answer instead of all spending an unknown remainder at once. A request whose
 *   answer may wait for other requests (`learns` false) goes too, and nobody waits for it.
 * The quota is never assumed, only read.
 *
 * `t` is whole seconds, so it may announce the reset up to a second late. When a response shows
 * that its request opened a fresh window (r = q - 1), the window ends by the moment given as
 * `sentAtMs` + w (the transport passes the answer's arrival, the latest moment the service can have
 * counted it). That estimate is used when it agrees with `t`.
 */
export class Pacer {
	private remaining: number | undefined;

	private resetAtMs = 0;

	/** end of the current window as learned from the request that opened it */
	private windowEndMs: number | undefined;

	private nextTicket = 1;

	/** tickets given out whose answer has not been read yet */
	private readonly inFlight = new Set<number>();

	/** the tickets of those that learn an unknown window's state for the others */
	private readonly learning = new Set<number>();

	/** the ticket whose answer `remaining` comes from */
	private readFrom = 0;

	/** Margin added to the announced reset, for clock granularity between the two sides. */
	constructor(private readonly marginMs = 50) {}

	/** A ticket to send now, or how long to wait before asking again. */
	reserve(nowMs: number, learns = true): Turn {
		if (this.remaining !== undefined && nowMs >= this.resetAtMs) this.remaining = undefined;
		if (this.remaining === undefined) {
			if (!learns) return { ticket: this.issue(), waitMs: 0 };
			// Nothing known: one request learns the window's state while the others wait for it.
			if (this.learning.size > 0) return { waitMs: PROBE_WAIT_MS };
			const ticket = this.issue();
			this.learning.add(ticket);
			return { ticket, waitMs: 0 };
		}
		if (this.remaining > 0) {
			this.remaining--;
			return { ticket: this.issue(), waitMs: 0 };
		}
		return { waitMs: this.resetAtMs - nowMs };
	}

	/**
	 * Settles a ticket with what its answer said about the window (undefined: the answer said
	 * nothing, or no answer came). `sentAtMs` is the latest moment the service can have counted the
	 * request (the transport passes the arrival time of the answer).
	 */
	observe(
		ticket: number,
		reading: RateLimitReading | undefined,
		nowMs: number,
		sentAtMs?: number,
	): void {
		this.inFlight.delete(ticket);
		this.learning.delete(ticket);
		if (!reading || (this.remaining !== undefined && ticket < this.readFrom)) return;
		const announced = nowMs + reading.resetSeconds * 1000;
		const opened =
			sentAtMs !== undefined &&
			reading.quota !== undefined &&
			reading.windowSeconds !== undefined &&
			reading.remaining === reading.quota - 1;
		if (opened) this.windowEndMs = sentAtMs + reading.windowSeconds! * 1000;
		const precise = this.windowEndMs;
		// The precise end is used only while it lies within the second `t` rounds up to.
		const consistent = precise !== undefined && precise <= announced && precise > announced - 1000;
		if (!consistent) this.windowEndMs = undefined;
		this.readFrom = ticket;
		this.remaining = Math.max(0, reading.remaining - this.inFlight.size);
		this.resetAtMs = (consistent ? precise : announced) + this.marginMs;
	}

	/** Nothing in flight and no window known to be running: dropping it loses no pacing. */
	idle(nowMs: number): boolean {
		return this.inFlight.size === 0 && (this.remaining === undefined || nowMs >= this.resetAtMs);
	}

	private issue(): number {
		const ticket = this.nextTicket++;
		this.inFlight.add(ticket);
		return ticket;
	}
}

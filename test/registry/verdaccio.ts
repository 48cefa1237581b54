/**
 * A private npm registry (verdaccio, installed by `.ci/registry-install` into `.ci/registry`) on
 * loopback for the registry suite: a temp storage folder and config, no uplinks, so it serves only
 * what the suite publishes and never reaches another registry.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { defaultNodeBin, freePort } from '../e2e/n8n';

const repoRoot = resolve(__dirname, '..', '..');
export const verdaccioBin = join(
	repoRoot,
	'.ci',
	'registry',
	'node_modules',
	'verdaccio',
	'bin',
	'verdaccio',
);

export interface Packument {
	versions: Record<string, unknown>;
	'dist-tags': Record<string, string>;
}

export interface Registry {
	/** `http://127.0.0.1:<port>` (no trailing slash). */
	readonly url: string;
	/** Token of the user the suite publishes as. */
	readonly token: string;
	/** Everything verdaccio printed. */
	logs(): string;
	/** `npm publish <tarball or folder>` to this registry; throws with npm's output on failure. */
	publish(what: string): void;
	/** The registry's document for a package, or undefined on 404. */
	packument(name: string): Promise<Packument | undefined>;
	stop(): Promise<void>;
}

const sleep = async (ms: number) => await new Promise((r) => setTimeout(r, ms));

/** npm with the project's Node 24 first on PATH and no npm_* settings of a parent `npm run`. */
export function npmEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
	const env: NodeJS.ProcessEnv = {
		...process.env,
		PATH: `${join(defaultNodeBin, '..')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
	};
	for (const key of Object.keys(env)) if (/^npm_/i.test(key)) delete env[key];
	// The user's ~/.npmrc (a registry, a proxy, a token) must not steer a pack or a publish to loopback.
	return { ...env, npm_config_userconfig: '/dev/null', ...extra };
}

export function runNpm(args: string[], cwd: string, env: NodeJS.ProcessEnv = npmEnv()): string {
	const r = spawnSync('npm', args, { cwd, env, encoding: 'utf8' });
	if (r.status !== 0)
		throw new Error(
			`npm ${args.join(' ')} exited ${r.status ?? r.signal}:\n${r.stdout}\n${r.stderr}`,
		);
	return r.stdout;
}

export async function startRegistry(): Promise<Registry> {
	if (!existsSync(verdaccioBin))
		throw new Error(`verdaccio is not installed at ${verdaccioBin}: run .ci/registry-install`);
	const dir = mkdtempSync(join(tmpdir(), 'verdaccio-'));
	const port = await freePort();
	const url = `http://127.0.0.1:${port}`;
	mkdirSync(join(dir, 'storage'));
	// Any name may be read; publishing needs a user (the htpasswd file in the temp folder).
	// `uplinks` is empty and no package rule names a proxy: a package that was not published here is a 404.
	writeFileSync(
		join(dir, 'config.yaml'),
		[
			`storage: ${join(dir, 'storage')}`,
			'auth:',
			'  htpasswd:',
			`    file: ${join(dir, 'htpasswd')}`,
			'    max_users: 10',
			'uplinks: {}',
			'packages:',
			"  '**':",
			'    access: $all',
			'    publish: $authenticated',
			'    unpublish: $authenticated',
			'web:',
			'  enable: false',
			'log: { type: stdout, format: pretty, level: http }',
			'',
		].join('\n'),
	);

	let output = '';
	const child: ChildProcess = spawn(
		defaultNodeBin,
		[verdaccioBin, '--config', join(dir, 'config.yaml'), '--listen', `127.0.0.1:${port}`],
		{
			cwd: dir,
			env: npmEnv(),
			stdio: ['ignore', 'pipe', 'pipe'],
			detached: true,
		},
	);
	child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
	child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
	let exited = false;
	child.on('exit', () => (exited = true));

	const stop = async () => {
		if (!exited && child.pid !== undefined) {
			try {
				process.kill(-child.pid, 'SIGTERM');
			} catch {}
			const deadline = Date.now() + 5_000;
			while (!exited && Date.now() < deadline) await sleep(50);
			if (!exited) {
				try {
					process.kill(-child.pid, 'SIGKILL');
				} catch {}
			}
		}
		rmSync(dir, { recursive: true, force: true });
	};

	try {
		const deadline = Date.now() + 30_000;
		for (;;) {
			if (exited) throw new Error(`verdaccio exited at start:\n${output}`);
			try {
				if ((await fetch(`${url}/-/ping`)).ok) break;
			} catch {}
			if (Date.now() > deadline) throw new Error(`verdaccio not ready after 30 s:\n${output}`);
			await sleep(100);
		}
		// `npm adduser` in one request: verdaccio creates the user and answers a token.
		const res = await fetch(`${url}/-/user/org.couchdb.user:publisher`, {
			method: 'PUT',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ name: 'publisher', password: 'registry-suite-1' }),
		});
		const body = (await res.json()) as { token?: string };
		if (!res.ok || !body.token)
			throw new Error(
				`verdaccio refused the publishing user: ${res.status} ${JSON.stringify(body)}`,
			);
		const token = body.token;
		const authArg = `--//127.0.0.1:${port}/:_authToken=${token}`;
		return {
			url,
			token,
			logs: () => output,
			publish: (what) => {
				runNpm(
					[
						'publish',
						resolve(what),
						`--registry=${url}/`,
						authArg,
						'--ignore-scripts',
						'--access=public',
						'--no-provenance',
					],
					dir,
				);
			},
			packument: async (name) => {
				const r = await fetch(`${url}/${encodeURIComponent(name)}`);
				if (r.status === 404) return undefined;
				if (!r.ok) throw new Error(`GET ${url}/${name} -> ${r.status}`);
				return (await r.json()) as Packument;
			},
			stop,
		};
	} catch (e) {
		await stop();
		throw e;
	}
}

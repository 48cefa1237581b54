/**
 * What n8n's queue mode needs around it, started on loopback by the suite itself: PostgreSQL and
 * Redis (binaries from `.ci/queue-services`). The load balancer in front of the `n8n webhook`
 * processors is test/e2e/reverseProxy.ts.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort } from '../e2e/n8n';
import { sleep } from '../e2e/kit';

export interface Service {
	port: number;
	stop(): Promise<void>;
}

function postgresBin(): string {
	const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(a) - Number(b));
	if (versions.length === 0) throw new Error('PostgreSQL is missing: run .ci/queue-services');
	return join('/usr/lib/postgresql', versions[versions.length - 1], 'bin');
}

/** PostgreSQL refuses to run as root: run it as the `postgres` user Debian's package creates. */
function asDbUser(args: string[]): [string, string[]] {
	return process.getuid?.() === 0
		? ['runuser', ['-u', 'postgres', '--', ...args]]
		: [args[0], args.slice(1)];
}

async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
	if (child.exitCode !== null || child.signalCode !== null) return;
	let timer: NodeJS.Timeout | undefined;
	const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
	child.kill(signal);
	await Promise.race([
		exited,
		new Promise<void>((resolve) => (timer = setTimeout(resolve, 10_000))),
	]);
	clearTimeout(timer);
	if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

async function waitUntil(
	what: string,
	check: () => boolean | Promise<boolean>,
	timeoutMs = 30_000,
): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!(await check())) {
		if (Date.now() > deadline) throw new Error(`${what} not ready after ${timeoutMs} ms`);
		await sleep(100);
	}
}

/** A fresh PostgreSQL cluster on a free port (trust auth, user n8n, database n8n, no fsync). */
export async function startPostgres(): Promise<Service & { user: string; database: string }> {
	const bin = postgresBin();
	const dir = mkdtempSync(join(tmpdir(), 'queue-pg-'));
	chmodSync(dir, 0o700);
	if (process.getuid?.() === 0) {
		const id = spawnSync('id', ['-u', 'postgres']).stdout.toString().trim();
		const gid = spawnSync('id', ['-g', 'postgres']).stdout.toString().trim();
		chownSync(dir, Number(id), Number(gid));
	}
	const run = (args: string[]) => {
		const [cmd, argv] = asDbUser(args);
		const r = spawnSync(cmd, argv, { encoding: 'utf8' });
		if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr || r.stdout}`);
	};
	run([join(bin, 'initdb'), '-D', dir, '-A', 'trust', '-U', 'n8n', '--no-sync', '-E', 'UTF8']);
	const port = await freePort();
	const [cmd, argv] = asDbUser([
		join(bin, 'postgres'),
		'-D',
		dir,
		'-p',
		String(port),
		'-k',
		dir,
		'-c',
		'listen_addresses=127.0.0.1',
		'-c',
		'fsync=off',
		'-c',
		'synchronous_commit=off',
		'-c',
		'max_connections=200',
	]);
	const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
	let log = '';
	child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
	child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
	await waitUntil(
		'PostgreSQL',
		() => /ready to accept connections/.test(log) || child.exitCode !== null,
	);
	if (child.exitCode !== null) throw new Error(`PostgreSQL exited: ${log}`);
	run([join(bin, 'createdb'), '-h', '127.0.0.1', '-p', String(port), '-U', 'n8n', 'n8n']);
	return {
		port,
		user: 'n8n',
		database: 'n8n',
		stop: async () => {
			// runuser does not pass signals on: stop the server through pg_ctl, then reap runuser
			const [pgCmd, pgArgv] = asDbUser([
				join(bin, 'pg_ctl'),
				'-D',
				dir,
				'-m',
				'immediate',
				'-w',
				'stop',
			]);
			spawnSync(pgCmd, pgArgv, { encoding: 'utf8' });
			await stopChild(child);
			rmSync(dir, { recursive: true, force: true });
		},
	};
}

/** A Redis server on a free port, nothing saved to disk. */
export async function startRedis(): Promise<Service> {
	const port = await freePort();
	const dir = mkdtempSync(join(tmpdir(), 'queue-redis-'));
	const child = spawn(
		'redis-server',
		[
			'--port',
			String(port),
			'--bind',
			'127.0.0.1',
			'--save',
			'',
			'--appendonly',
			'no',
			'--dir',
			dir,
		],
		{
			stdio: ['ignore', 'pipe', 'pipe'],
		},
	);
	let log = '';
	child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
	await waitUntil(
		'Redis',
		() => /Ready to accept connections/.test(log) || child.exitCode !== null,
	);
	if (child.exitCode !== null) throw new Error(`Redis exited: ${log}`);
	return {
		port,
		stop: async () => {
			await stopChild(child);
			rmSync(dir, { recursive: true, force: true });
		},
	};
}

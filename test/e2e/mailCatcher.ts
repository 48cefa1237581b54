/**
 * A local mail catcher for `npm run dev` and the end-to-end suite: MailDev 3 (the `maildev`
 * devDependency) in a process of its own, with an SMTP port for n8n's Send Email node and a web
 * inbox whose REST API (`GET /api/email`) the tests read.
 *
 * MailDev 3 is an ES module only, so it runs as its own command rather than inside jest.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { freePort } from './n8n';

const repoRoot = resolve(__dirname, '..', '..');
const maildevBin = join(repoRoot, 'node_modules', 'maildev', 'dist', 'bin', 'maildev.js');

export interface MailAddress {
	address: string;
	name: string;
}

/** One mail as MailDev's API gives it (the fields the tests and the dev command read). */
export interface CaughtMail {
	id: string;
	time: string;
	subject: string;
	from: MailAddress[];
	to: MailAddress[];
	cc?: MailAddress[];
	text?: string;
	html?: string;
	envelope: { from: { address: string }; to: Array<{ address: string }> };
}

export interface MailCatcherHandle {
	readonly smtpPort: number;
	/** The web inbox (and its API under /api). */
	readonly webUrl: string;
	/** Every mail caught so far, oldest first. */
	mails(): Promise<CaughtMail[]>;
	/** Resolves with the caught mails once `count` of them match `filter` (all mails by default). */
	waitForMails(
		count: number,
		filter?: (mail: CaughtMail) => boolean,
		timeoutMs?: number,
	): Promise<CaughtMail[]>;
	/** Empties the inbox. */
	clear(): Promise<void>;
	/** Everything MailDev printed. */
	logs(): string;
	close(): Promise<void>;
}

export interface StartMailCatcherOptions {
	/** SMTP port; a free one by default. */
	smtpPort?: number;
	/** Web inbox port; a free one by default. */
	webPort?: number;
	/** Where MailDev keeps the mails (it reads them back on start); a temp folder removed by close() by default. */
	mailDir?: string;
	/** Milliseconds to wait for both ports; 30 s by default. */
	readyTimeoutMs?: number;
}

/** The `smtp` credential's data for a catcher on loopback: no TLS (MailDev's STARTTLS certificate is self-signed), no login. */
export function smtpCredentialData(catcher: { smtpPort: number }) {
	return {
		user: '',
		password: '',
		host: '127.0.0.1',
		port: catcher.smtpPort,
		secure: false,
		disableStartTls: true,
		hostName: '',
	};
}

const sleep = async (ms: number) => await new Promise((r) => setTimeout(r, ms));

const smtpAnswers = async (port: number): Promise<boolean> =>
	await new Promise((r) => {
		const socket = connect(port, '127.0.0.1');
		socket.once('data', (d: Buffer) => {
			socket.destroy();
			r(d.toString().startsWith('220'));
		});
		socket.once('error', () => r(false));
	});

export async function startMailCatcher(
	opts: StartMailCatcherOptions = {},
): Promise<MailCatcherHandle> {
	if (!existsSync(maildevBin))
		throw new Error(`maildev is not installed at ${maildevBin}: run .ci/bootstrap`);
	const smtpPort = opts.smtpPort ?? (await freePort());
	const webPort = opts.webPort ?? (await freePort());
	const ownDir = opts.mailDir === undefined;
	const mailDir = opts.mailDir ?? mkdtempSync(join(tmpdir(), 'mail-catcher-'));
	const webUrl = `http://127.0.0.1:${webPort}`;
	// Both listeners on loopback only (MailDev's defaults are all interfaces); a folder of our own,
	// because without one MailDev 3 writes every instance's mails into the same /tmp/maildev.
	const args = [
		maildevBin,
		'--smtp',
		String(smtpPort),
		'--ip',
		'127.0.0.1',
		'--web',
		String(webPort),
		'--web-ip',
		'127.0.0.1',
		'--mail-directory',
		mailDir,
	];
	const child: ChildProcess = spawn(process.execPath, args, {
		cwd: repoRoot,
		stdio: ['ignore', 'pipe', 'pipe'],
		detached: true,
	});
	let output = '';
	child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
	child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
	const killGroup = () => {
		try {
			process.kill(-child.pid!, 'SIGKILL');
		} catch {}
	};
	// A test runner or dev command that exits without close() leaves no catcher behind.
	process.once('exit', killGroup);

	const close = async () => {
		process.removeListener('exit', killGroup);
		if (child.exitCode === null && child.signalCode === null) {
			const exited = new Promise((r) => child.once('exit', r));
			try {
				process.kill(-child.pid!, 'SIGTERM');
			} catch {}
			let timer: NodeJS.Timeout | undefined;
			await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 5_000)))]);
			// A pending grace timer would keep a test runner alive after MailDev exited.
			clearTimeout(timer);
			killGroup();
		}
		if (ownDir) rmSync(mailDir, { recursive: true, force: true });
	};

	const deadline = Date.now() + (opts.readyTimeoutMs ?? 30_000);
	while (true) {
		if (child.exitCode !== null) {
			await close();
			throw new Error(`maildev exited during start-up:\n${output.slice(-3000)}`);
		}
		if (Date.now() > deadline) {
			await close();
			throw new Error(
				`maildev not ready within ${opts.readyTimeoutMs ?? 30_000} ms:\n${output.slice(-3000)}`,
			);
		}
		const web = await fetch(`${webUrl}/api/healthz`).then(
			(r) => r.ok,
			() => false,
		);
		if (web && (await smtpAnswers(smtpPort))) break;
		await sleep(150);
	}

	const api = async <T>(method: string, path: string): Promise<T> => {
		const res = await fetch(`${webUrl}/api${path}`, {
			method,
			headers: { accept: 'application/json' },
		});
		const text = await res.text();
		if (!res.ok)
			throw new Error(`${method} ${webUrl}/api${path} -> ${res.status}: ${text.slice(0, 500)}`);
		return (text ? JSON.parse(text) : undefined) as T;
	};
	const mails = async () => await api<CaughtMail[]>('GET', '/email');

	return {
		smtpPort,
		webUrl,
		mails,
		waitForMails: async (count, filter = () => true, timeoutMs = 30_000) => {
			const until = Date.now() + timeoutMs;
			let last: CaughtMail[] = [];
			while (Date.now() < until) {
				last = (await mails()).filter(filter);
				if (last.length >= count) return last;
				await sleep(150);
			}
			throw new Error(
				`${last.length} of ${count} mails arrived within ${timeoutMs} ms: ${JSON.stringify(last.map((m) => m.subject))}`,
			);
		},
		clear: async () => {
			await api('DELETE', '/email/all');
		},
		logs: () => output,
		close,
	};
}

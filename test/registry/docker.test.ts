/**
 * The README's two Docker recipes, run as written but without Docker (no container runtime here), in the
 * folder layout of n8n's image: a temporary folder stands for the container's `/` (its `home/node/.n8n` is
 * n8n's user folder, `/home/node/.n8n` in n8n's image), and every container path in the commands is mapped
 * into it. The commands are read from README.md itself, so the README cannot drift from what runs here.
 *
 * - "its data in a volume": each `docker exec` runs its command in the mapped folder, `docker cp` copies
 *   the packed tarball there, `docker restart` starts n8n 2.41.1 on that user folder; then the README's
 *   uninstall command, and n8n restarted again.
 * - "from your own image": the Dockerfile's COPY and RUN lines run against the mapped folders, its ENV
 *   lines become n8n's environment, and n8n 2.41.1 starts on that user folder.
 *
 * Not run: Docker, n8n's image itself (its npm, its user, its Node), volumes, n8n 3.0 (see CONTRIBUTING.md).
 *
 *   .ci/with-node24 npm run build && .ci/with-node24 npx jest -c test/registry/jest.config.js test/registry/docker.test.ts
 */
import { spawnSync } from 'node:child_process';
import {
	copyFileSync,
	existsSync,
	lstatSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { startSandbox, type SandboxHandle } from '../sandbox';
import { startN8n, type N8nHandle } from '../e2e/n8n';

const repoRoot = resolve(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
	name: string;
	version: string;
};
const TARBALL = `${pkg.name}-${pkg.version}.tgz`;
const CONTAINER = 'n8n';
const work = mkdtempSync(join(tmpdir(), 'docker-layout-'));
const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
let sandbox: SandboxHandle;

/** The fenced blocks of README.md in `language` whose text matches `pattern`. */
function readmeBlocks(language: string, pattern: RegExp): string[] {
	const blocks = [...readme.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)]
		.filter(([, lang, text]) => lang === language && pattern.test(text))
		.map(([, , text]) => text);
	if (blocks.length === 0)
		throw new Error(`README.md has no ${language} block matching ${pattern}`);
	return blocks;
}

/** One image's root folder: container paths (`/home/node/...`, `/tmp/...`) map below it. */
function imageRoot(name: string) {
	const root = join(work, name);
	mkdirSync(join(root, 'home', 'node'), { recursive: true });
	mkdirSync(join(root, 'tmp'), { recursive: true });
	const map = (text: string) => text.replace(/(^|[\s=:'"])\/(home\/node|tmp)\b/g, `$1${root}/$2`);
	return { root, home: join(root, 'home', 'node'), map };
}

/** A command as the container's user runs it: its HOME is the mapped /home/node, no npm_* of jest's npm. */
function run(argv: string[], cwd: string, home: string): string {
	const env = Object.fromEntries(
		Object.entries(process.env).filter(([key]) => !key.startsWith('npm_')),
	);
	const result = spawnSync(argv[0], argv.slice(1), {
		cwd,
		env: { ...env, HOME: home },
		encoding: 'utf8',
	});
	if (result.status !== 0)
		throw new Error(
			`${argv.join(' ')} exited ${result.status}:\n${result.stdout}\n${result.stderr}`,
		);
	return result.stdout;
}

/**
 * Runs the docker lines of a README block on the mapped folders: `docker exec [-u user] [-w dir] n8n cmd...`,
 * `docker cp <tarball> n8n:<dir>/`. Returns the lines it did not run (`docker restart n8n`).
 */
function runDockerLines(block: string, image: ReturnType<typeof imageRoot>): string[] {
	const rest: string[] = [];
	for (const line of block.split('\n').filter((l) => l.trim() !== '')) {
		const words = line.trim().split(/\s+/);
		expect(words[0]).toBe('docker');
		if (words[1] === 'exec') {
			let i = 2;
			let cwd = image.home;
			while (words[i].startsWith('-')) {
				if (words[i] === '-w') cwd = image.map(words[i + 1]);
				else expect(words.slice(i, i + 2)).toEqual(['-u', 'node']);
				i += 2;
			}
			expect(words[i]).toBe(CONTAINER);
			run(
				words.slice(i + 1).map((w) => image.map(w)),
				cwd,
				image.home,
			);
		} else if (words[1] === 'cp') {
			expect(words[2]).toBe(TARBALL);
			const [container, dest] = words[3].split(':');
			expect(container).toBe(CONTAINER);
			expect(dest.endsWith('/')).toBe(true);
			copyFileSync(join(work, TARBALL), join(image.map(dest), TARBALL));
		} else rest.push(line.trim());
	}
	return rest;
}

/** Runs a Dockerfile's COPY and RUN lines on the mapped folders; returns its FROM image and ENV values. */
function runDockerfile(dockerfile: string, image: ReturnType<typeof imageRoot>) {
	const lines = dockerfile.replace(/\\\n/g, ' ').split('\n').filter(Boolean);
	const env: Record<string, string> = {};
	let from = '';
	for (const line of lines) {
		const [instruction, ...args] = line.trim().split(/\s+/);
		if (instruction === 'FROM') from = args.join(' ');
		else if (instruction === 'COPY') {
			expect(args).toEqual([TARBALL, expect.stringMatching(/\/$/)]);
			copyFileSync(join(work, TARBALL), join(image.map(args[1]), TARBALL));
		} else if (instruction === 'RUN')
			run(['sh', '-c', image.map(args.join(' '))], image.root, image.home);
		else if (instruction === 'ENV') {
			const [key, value] = args.join(' ').split('=');
			env[key] = value;
		} else throw new Error(`unexpected Dockerfile line: ${line}`);
	}
	return { from, env };
}

function expectOnePackageInstalled(home: string) {
	const modules = join(home, '.n8n', 'nodes', 'node_modules');
	const installed = join(modules, pkg.name);
	expect(lstatSync(installed).isSymbolicLink()).toBe(false);
	expect(JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')).version).toBe(
		pkg.version,
	);
	expect(readdirSync(modules).filter((entry) => !entry.startsWith('.'))).toEqual([pkg.name]);
}

const ourTypes = async (n8n: N8nHandle) =>
	((await (await n8n.fetch('/types/nodes.json')).json()) as Array<{ name: string }>)
		.map((type) => type.name)
		.filter((name) => name.startsWith(`${pkg.name}.`))
		.sort();

async function expectLoadedAndCredentialWorks(n8n: N8nHandle) {
	expect(n8n.packageLoadError()).toBeUndefined();
	expect(await ourTypes(n8n)).toEqual(
		['marketplace', 'marketplacePollingTrigger', 'marketplaceTool', 'marketplaceTrigger']
			.map((name) => `${pkg.name}.${name}`)
			.sort(),
	);
	const data = { baseUrl: sandbox.baseUrl, apiKey: sandbox.demoApiKey };
	const name = 'Marketplace sandbox';
	const id = await n8n.createCredential({ name, type: 'marketplaceApi', data });
	const tested = await n8n.rest<{ status: string }>('POST', '/credentials/test', {
		credentials: { id, name, type: 'marketplaceApi', data },
	});
	expect(tested.status).toBe('OK');
}

async function startOn(home: string, env: Record<string, string> = {}) {
	const n8n = await startN8n({ packageRoot: repoRoot, linkPackage: false, userFolder: home, env });
	await n8n.setupOwner();
	await n8n.login();
	return n8n;
}

function saveLog(n8n: N8nHandle | undefined, file: string) {
	mkdirSync(join(repoRoot, 'tmp'), { recursive: true });
	if (n8n) writeFileSync(join(repoRoot, 'tmp', file), n8n.logs());
}

beforeAll(async () => {
	const env = Object.fromEntries(
		Object.entries(process.env).filter(([key]) => !key.startsWith('npm_')),
	);
	const packed = spawnSync('npm', ['pack', '--ignore-scripts', `--pack-destination=${work}`], {
		cwd: repoRoot,
		env,
		encoding: 'utf8',
	});
	if (packed.status !== 0) throw new Error(`npm pack failed: ${packed.stderr}`);
	sandbox = await startSandbox({ port: 0, host: '127.0.0.1', allowHttpLoopback: true });
}, 120_000);

afterAll(async () => {
	await sandbox?.close();
	rmSync(work, { recursive: true, force: true });
});

describe("README: n8n in Docker, its data in a volume (docker exec / cp / restart on the image's /home/node/.n8n)", () => {
	const image = imageRoot('volume');
	let n8n: N8nHandle | undefined;
	afterAll(async () => {
		saveLog(n8n, 'docker-volume-n8n.log');
		await n8n?.stop();
	}, 60_000);

	test('the install commands put the one package, unpacked, into /home/node/.n8n/nodes', () => {
		const [block] = readmeBlocks('sh', /docker exec .* npm install/);
		expect(runDockerLines(block, image)).toEqual([`docker restart ${CONTAINER}`]);
		expectOnePackageInstalled(image.home);
	}, 120_000);

	test('"docker restart": n8n 2.41.1 on that folder loads the three nodes and the credential, whose test passes', async () => {
		n8n = await startOn(image.home);
		await expectLoadedAndCredentialWorks(n8n);
	}, 180_000);

	test("the README's uninstall command, then a restart: the package is gone and n8n serves none of its nodes", async () => {
		const uninstall = readme.match(/`(docker exec [^`]*npm uninstall [^`]*)`/);
		expect(uninstall).not.toBeNull();
		expect(runDockerLines(uninstall![1], image)).toEqual([]);
		expect(existsSync(join(image.home, '.n8n', 'nodes', 'node_modules', pkg.name))).toBe(false);
		await n8n!.restart();
		expect(await ourTypes(n8n!)).toEqual([]);
	}, 180_000);
});

describe("README: n8n in Docker, from your own image (the Dockerfile's lines on the image's folders)", () => {
	const image = imageRoot('image');
	let n8n: N8nHandle | undefined;
	let built: ReturnType<typeof runDockerfile>;
	afterAll(async () => {
		saveLog(n8n, 'docker-image-n8n.log');
		await n8n?.stop();
	}, 60_000);

	test("FROM n8n's image; COPY and RUN install the one package, unpacked, into /home/node/.n8n/nodes", () => {
		const [dockerfile] = readmeBlocks('dockerfile', /^FROM /m);
		built = runDockerfile(dockerfile, image);
		expect(built.from).toMatch(/^docker\.n8n\.io\/n8nio\/n8n:\d+\.\d+\.\d+$/);
		expect(built.env).toEqual({ N8N_UNVERIFIED_PACKAGES_ENABLED: 'true' });
		expectOnePackageInstalled(image.home);
	}, 120_000);

	test("n8n 2.41.1 started with the image's ENV on that folder loads the nodes and the credential", async () => {
		n8n = await startOn(image.home, built.env);
		await expectLoadedAndCredentialWorks(n8n);
	}, 180_000);
});

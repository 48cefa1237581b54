/**
 * The install path the README gives until the package is published: `npm pack` in the checkout, then
 * `npm install --omit=peer <tarball>` in n8n's nodes folder (`<N8N_USER_FOLDER>/.n8n/nodes`), then n8n
 * started. The commands run as the README writes them (npm reaches the public registry only for its own
 * metadata; the package has no dependencies to fetch), and n8n 2.41.1 must load the three nodes and the
 * credential from what npm unpacked, with no package of n8n's installed beside them.
 *
 *   .ci/with-node24 npm run build && .ci/with-node24 npx jest -c test/registry/jest.config.js test/registry/tarball.test.ts
 */
import { spawnSync } from 'node:child_process';
import {
	copyFileSync,
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
const work = mkdtempSync(join(tmpdir(), 'tarball-install-'));
const userFolder = join(work, 'home');
const nodesFolder = join(userFolder, '.n8n', 'nodes');
let n8n: N8nHandle;
let sandbox: SandboxHandle;

/** npm as the README's reader runs it (this process's Node on PATH), in `cwd`. */
function npm(args: string[], cwd: string): string {
	const env = Object.fromEntries(
		Object.entries(process.env).filter(([key]) => !key.startsWith('npm_')),
	);
	const result = spawnSync('npm', args, { cwd, env, encoding: 'utf8' });
	if (result.status !== 0)
		throw new Error(
			`npm ${args.join(' ')} exited ${result.status}:\n${result.stdout}\n${result.stderr}`,
		);
	return result.stdout;
}

beforeAll(async () => {
	// npm pack, then into the nodes folder, as the README's three lines do
	npm(['pack', '--ignore-scripts', `--pack-destination=${work}`], repoRoot);
	mkdirSync(nodesFolder, { recursive: true });
	copyFileSync(join(work, TARBALL), join(nodesFolder, TARBALL));
	npm(['install', '--omit=peer', '--no-audit', '--no-fund', `./${TARBALL}`], nodesFolder);
	sandbox = await startSandbox({ port: 0, host: '127.0.0.1', allowHttpLoopback: true });
	n8n = await startN8n({ packageRoot: repoRoot, linkPackage: false, userFolder });
	await n8n.setupOwner();
	await n8n.login();
}, 300_000);

afterAll(async () => {
	mkdirSync(join(repoRoot, 'tmp'), { recursive: true });
	if (n8n) writeFileSync(join(repoRoot, 'tmp', 'tarball-n8n.log'), n8n.logs());
	await n8n?.stop();
	await sandbox?.close();
	rmSync(work, { recursive: true, force: true });
}, 60_000);

test("npm installs the one package, unpacked, and nothing of n8n's beside it", () => {
	const installed = join(nodesFolder, 'node_modules', pkg.name);
	expect(lstatSync(installed).isSymbolicLink()).toBe(false);
	expect(JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')).version).toBe(
		pkg.version,
	);
	expect(
		readdirSync(join(nodesFolder, 'node_modules')).filter((entry) => !entry.startsWith('.')),
	).toEqual([pkg.name]);
});

test('n8n loads the three nodes and the credential from it, and the credential test passes against the sandbox', async () => {
	expect(n8n.packageLoadError()).toBeUndefined();
	const nodes = ((await (await n8n.fetch('/types/nodes.json')).json()) as Array<{ name: string }>)
		.map((type) => type.name)
		.filter((name) => name.startsWith(`${pkg.name}.`))
		.sort();
	expect(nodes).toEqual(
		[
			`${pkg.name}.marketplace`,
			`${pkg.name}.marketplacePollingTrigger`,
			`${pkg.name}.marketplaceTool`,
			`${pkg.name}.marketplaceTrigger`,
		].sort(),
	);
	const credentials = (
		(await (await n8n.fetch('/types/credentials.json')).json()) as Array<{ name: string }>
	).map((c) => c.name);
	expect(credentials).toContain('marketplaceApi');
	const data = { baseUrl: sandbox.baseUrl, apiKey: sandbox.demoApiKey };
	const id = await n8n.createCredential({
		name: 'Marketplace sandbox',
		type: 'marketplaceApi',
		data,
	});
	const tested = await n8n.rest<{ status: string }>('POST', '/credentials/test', {
		credentials: { id, name: 'Marketplace sandbox', type: 'marketplaceApi', data },
	});
	expect(tested.status).toBe('OK');
});

/**
 * The install path users take, end to end: this package packed as `npm publish` would pack it,
 * published to a private npm registry on loopback (verdaccio, test/registry/verdaccio.ts), then
 * installed BY NAME into a fresh n8n 2.41.1 through n8n's community-packages REST API (what
 * Settings > Community Nodes does), used against the sandbox, updated to a newer version through the
 * same API, and uninstalled. n8n never sees the checkout: the package reaches it only from the registry.
 *
 *   .ci/with-node24 npm run build && .ci/registry-install && .ci/with-node24 npx jest -c test/registry/jest.config.js
 *
 * Nothing leaves the machine: verdaccio has no uplinks, n8n's and npm's HTTP(S) proxy is a loopback
 * port that records and drops every connection (n8n asks api.n8n.io whether a package is banned and
 * takes a failed answer as "not banned"), and the test fails if npm tried any other registry.
 */
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import {
	existsSync,
	lstatSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	rmSync,
	writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { startSandbox, type SandboxHandle } from '../sandbox';
import { executionsOf, nodeOutput, Timings, waitFor } from '../e2e/kit';
import { freePort, startN8n, type N8nHandle, type PublicApi } from '../e2e/n8n';
import { runNpm, startRegistry, type Registry } from './verdaccio';

const repoRoot = resolve(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
	name: string;
	version: string;
	n8n: { credentials: string[]; nodes: string[] };
};
const PKG = pkg.name;
const V1 = pkg.version;
/** The update: the same files with the patch number raised. */
const V2 = V1.replace(/\d+$/, (patch) => String(Number(patch) + 1));
const TYPES = [
	`${PKG}.marketplace`,
	`${PKG}.marketplacePollingTrigger`,
	`${PKG}.marketplaceTrigger`,
];
const CUSTOM_REGISTRY_FEATURE = 'feat:communityNodes:customRegistry';

const timings = new Timings();
const suiteStarted = Date.now();
const work = mkdtempSync(join(tmpdir(), 'registry-suite-'));
let sandbox: SandboxHandle;
let registry: Registry;
let n8n: N8nHandle;
let api: PublicApi;
let tarballV2: string;
/** Every connection n8n or npm tried to make through the HTTP(S) proxy: its first request line. */
const proxied: string[] = [];
let proxy: Server;

const installedDir = () => join(n8n.userFolder, '.n8n', 'nodes', 'node_modules', PKG);
const ledger = () =>
	JSON.parse(readFileSync(join(n8n.userFolder, '.n8n', 'nodes', 'package.json'), 'utf8')) as {
		dependencies: Record<string, string>;
	};
const servedNodeTypes = async () =>
	((await (await n8n.fetch('/types/nodes.json')).json()) as Array<{ name: string }>)
		.map((t) => t.name)
		.filter((n) => n.startsWith(`${PKG}.`));
const servedCredentialTypes = async () =>
	((await (await n8n.fetch('/types/credentials.json')).json()) as Array<{ name: string }>).map(
		(c) => c.name,
	);

/** `npm pack` of `dir` into `work`; returns the tarball's path and the files in it. */
function pack(dir: string): { tarball: string; files: string[] } {
	const [packed] = JSON.parse(
		runNpm(['pack', '--ignore-scripts', '--json', `--pack-destination=${work}`], dir),
	) as Array<{
		filename: string;
		files: Array<{ path: string }>;
	}>;
	return { tarball: join(work, packed.filename), files: packed.files.map((f) => f.path) };
}

/** A loopback "proxy" that writes down each request line it gets and drops the connection. */
async function startRefusingProxy(): Promise<{ server: Server; url: string }> {
	const server = createServer((socket) => {
		socket.once('data', (d) => {
			proxied.push(d.toString('latin1').split('\r\n')[0]);
			socket.destroy();
		});
		socket.on('error', () => {});
	});
	const port = await freePort();
	await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
	return { server, url: `http://127.0.0.1:${port}` };
}

const credential = { id: '', name: 'Marketplace (installed from the registry)' };
const WF = { manual: 'regManualOrder01', trigger: 'regOrderArrives1' };
const TRIGGER_WEBHOOK_ID = randomUUID();

const credentialRef = () => ({ marketplaceApi: { id: credential.id, name: credential.name } });

/** A workflow whose start node feeds the installed action node's order read. */
function startThenGetOrder(
	id: string,
	name: string,
	start: { name: string; [key: string]: unknown },
	orderId: string,
) {
	const getOrder = { resource: 'order', operation: 'get', orderId };
	return {
		id,
		name,
		nodes: [
			{ id: `${id}-start`, typeVersion: 1, position: [0, 0], ...start },
			{
				id: `${id}-get`,
				name: 'Get Order',
				type: `${PKG}.marketplace`,
				typeVersion: 1,
				position: [260, 0],
				credentials: credentialRef(),
				parameters: getOrder,
			},
		],
		connections: { [start.name]: { main: [[{ node: 'Get Order', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	};
}

/** The manual workflow's run: one order read through the installed action node. */
async function runOrderRead(): Promise<void> {
	const ex = await n8n.runWorkflow(WF.manual);
	expect(ex.status).toBe('success');
	expect(nodeOutput(ex, 'Get Order')).toMatchObject([{ id: 1001, brandId: 1 }]);
}

/** One sandbox order event through the installed trigger, read back by the installed action node. */
async function orderEventRuns(): Promise<void> {
	const before = (await executionsOf(api, WF.trigger)).length;
	const { order, event } = await sandbox.control.createOrder({ brandId: 1 });
	const ex = await waitFor("the order event's execution", async () => {
		const list = await executionsOf(api, WF.trigger);
		return list.length > before ? list[list.length - 1] : undefined;
	});
	expect(ex).toMatchObject({ mode: 'webhook', status: 'success' });
	expect(nodeOutput(ex, 'Order Created')).toMatchObject([
		{ id: event.id, data: { orderId: order.id } },
	]);
	expect(nodeOutput(ex, 'Get Order')).toMatchObject([{ id: order.id, status: 'Created' }]);
}

/**
 * Waits for verdaccio's log line of the download of `version`'s tarball: verdaccio writes it after the
 * answer, so npm (and n8n's install) can be done before it shows (seen once under load).
 */
async function tarballServed(version: string): Promise<void> {
	const line = `GET /${PKG}/-/${PKG}-${version}.tgz`;
	await waitFor(
		`verdaccio's log of ${line}`,
		async () => (registry.logs().includes(line) ? true : undefined),
		10_000,
		100,
	);
}

async function credentialTestPasses(): Promise<void> {
	const result = await n8n.rest<{ status: string }>('POST', '/credentials/test', {
		credentials: {
			id: credential.id,
			name: credential.name,
			type: 'marketplaceApi',
			data: { baseUrl: sandbox.baseUrl, apiKey: sandbox.demoApiKey },
		},
	});
	expect(result.status).toBe('OK');
}

beforeAll(async () => {
	for (const file of [...pkg.n8n.nodes, ...pkg.n8n.credentials]) {
		if (!existsSync(join(repoRoot, file)))
			throw new Error(`${file} is missing: run \`.ci/with-node24 npm run build\` first`);
	}
	const v1 = await timings.time(`npm pack ${V1}`, async () => pack(repoRoot));
	// What n8n loads must be in the tarball, not just in the checkout.
	for (const file of [...pkg.n8n.nodes, ...pkg.n8n.credentials]) expect(v1.files).toContain(file);
	await timings.time(`npm pack ${V2} (the same files, version raised)`, async () => {
		const copy = join(work, 'next');
		mkdirSync(copy);
		execFileSync('tar', ['-xzf', v1.tarball, '-C', copy, '--strip-components=1']);
		const manifest = JSON.parse(readFileSync(join(copy, 'package.json'), 'utf8')) as {
			version: string;
		};
		writeFileSync(
			join(copy, 'package.json'),
			JSON.stringify({ ...manifest, version: V2 }, null, 2),
		);
		tarballV2 = pack(copy).tarball;
	});

	sandbox = await timings.time('sandbox start', () =>
		startSandbox({ port: 0, host: '127.0.0.1', allowHttpLoopback: true }),
	);
	registry = await timings.time('verdaccio start + publishing user', () => startRegistry());
	await timings.time(`npm publish ${V1}`, async () => registry.publish(v1.tarball));
	const refusing = await startRefusingProxy();
	proxy = refusing.server;

	const npmHome = join(work, 'npm');
	mkdirSync(npmHome);
	writeFileSync(join(npmHome, 'npmrc'), '');
	n8n = await timings.time('n8n first boot, package not installed', () =>
		startN8n({
			packageRoot: repoRoot,
			linkPackage: false,
			env: {
				// n8n's test mode: its /rest/e2e API can grant licence features (see the first test).
				E2E_TESTS: 'true',
				N8N_COMMUNITY_PACKAGES_REGISTRY: registry.url,
				// n8n's update check (`npm outdated`) runs without --registry: npm's own setting must name it.
				npm_config_registry: `${registry.url}/`,
				// No ~/.npmrc and no shared cache: npm sees only this registry.
				npm_config_userconfig: join(npmHome, 'npmrc'),
				npm_config_cache: join(npmHome, 'cache'),
				HTTP_PROXY: refusing.url,
				HTTPS_PROXY: refusing.url,
				http_proxy: refusing.url,
				https_proxy: refusing.url,
				NO_PROXY: '127.0.0.1,localhost',
				no_proxy: '127.0.0.1,localhost',
			},
		}),
	);
	await n8n.setupOwner();
	await n8n.login();
	api = await n8n.publicApi();
}, 240_000);

afterAll(async () => {
	mkdirSync(join(repoRoot, 'tmp'), { recursive: true });
	if (n8n) writeFileSync(join(repoRoot, 'tmp', 'registry-n8n.log'), n8n.logs());
	if (registry) writeFileSync(join(repoRoot, 'tmp', 'registry-verdaccio.log'), registry.logs());
	await n8n?.stop();
	await registry?.stop();
	await sandbox?.close();
	proxy?.close();
	rmSync(work, { recursive: true, force: true });
	timings.add('whole file (beforeAll to afterAll)', Date.now() - suiteStarted);
	console.log(
		`[registry] timings:\n${timings.report()}\n[registry] connections to the refusing proxy: ${JSON.stringify(proxied)}`,
	);
});

describe(`${PKG} from a private registry in n8n 2.41.1`, () => {
	test('a fresh n8n has none of its nodes; a private registry needs the customRegistry licence feature', async () => {
		expect(await servedNodeTypes()).toEqual([]);
		expect(existsSync(installedDir())).toBe(false);
		// Without the feature n8n refuses any registry other than the public one, before npm runs.
		await expect(n8n.rest('POST', '/community-packages', { name: PKG })).rejects.toThrow(
			/license does not allow/i,
		);
		expect(registry.logs()).not.toContain(`GET /${PKG}/-/`);
		await n8n.rest('PATCH', '/e2e/feature', { feature: CUSTOM_REGISTRY_FEATURE, enabled: true });
	});

	test(`POST /rest/community-packages { name } installs ${V1} from the registry, a real folder, with its three nodes`, async () => {
		const installed = await timings.time(`install ${V1} through the API`, () =>
			n8n.rest<{
				packageName: string;
				installedVersion: string;
				installedNodes: Array<{ type: string }>;
			}>('POST', '/community-packages', { name: PKG }),
		);
		expect(installed).toMatchObject({ packageName: PKG, installedVersion: V1 });
		expect(installed.installedNodes.map((n) => n.type).sort()).toEqual(TYPES);

		// npm unpacked the registry's tarball: a folder, not a link to the checkout.
		expect(lstatSync(installedDir()).isSymbolicLink()).toBe(false);
		expect(JSON.parse(readFileSync(join(installedDir(), 'package.json'), 'utf8')).version).toBe(V1);
		expect(ledger().dependencies).toEqual({ [PKG]: V1 });
		await tarballServed(V1);
		expect(n8n.packageLoadError()).toBeUndefined();
	});

	test('the editor sees the nodes and the credential type', async () => {
		// n8n also derives marketplaceTool from the action node's usableAsTool.
		expect((await servedNodeTypes()).sort()).toEqual([...TYPES, `${PKG}.marketplaceTool`].sort());
		expect(await servedCredentialTypes()).toContain('marketplaceApi');
		// each node's one version: the trigger's is 2
		const described = await n8n.rest<unknown[]>('POST', '/node-types', {
			nodeInfos: TYPES.map((name) => ({
				name,
				version: name.endsWith('.marketplaceTrigger') ? 2 : 1,
			})),
		});
		expect(described).toHaveLength(3);
	});

	test('a credential and two workflows run against the sandbox: a manual order read, an order event through the trigger', async () => {
		credential.id = await n8n.createCredential({
			name: credential.name,
			type: 'marketplaceApi',
			data: { baseUrl: sandbox.baseUrl, apiKey: sandbox.demoApiKey },
		});
		await credentialTestPasses();
		await n8n.createWorkflow(
			startThenGetOrder(
				WF.manual,
				'registry: read one order',
				{ name: 'Start', type: 'n8n-nodes-base.manualTrigger', parameters: {} },
				'1001',
			),
		);
		await timings.time('manual run (order read)', runOrderRead);
		await n8n.createWorkflow(
			startThenGetOrder(
				WF.trigger,
				'registry: order arrives -> read it',
				{
					name: 'Order Created',
					type: `${PKG}.marketplaceTrigger`,
					typeVersion: 2,
					webhookId: TRIGGER_WEBHOOK_ID,
					credentials: credentialRef(),
					parameters: { eventTypes: ['order.created'], options: {} },
				},
				'={{ $json.data.orderId }}',
			),
		);
		await timings.time('trigger: activate + publication', async () => {
			await api.activateWorkflow(WF.trigger);
			await n8n.waitForActivation(WF.trigger);
		});
		expect(await sandbox.control.endpoints()).toMatchObject([
			{ url: `${n8n.baseUrl}/webhook/${TRIGGER_WEBHOOK_ID}/webhook`, status: 'Enabled' },
		]);
		await timings.time('order event -> execution', orderEventRuns);
	});

	test(`${V2} published: n8n's list offers it as an update (npm outdated against the registry)`, async () => {
		await timings.time(`npm publish ${V2}`, async () => registry.publish(tarballV2));
		expect(Object.keys((await registry.packument(PKG))?.versions ?? {}).sort()).toEqual([V1, V2]);
		const list = await timings.time('GET /rest/community-packages (runs npm outdated)', () =>
			n8n.rest<
				Array<{
					packageName: string;
					installedVersion: string;
					updateAvailable?: string;
					failedLoading: boolean;
				}>
			>('GET', '/community-packages'),
		);
		expect(list).toMatchObject([
			{ packageName: PKG, installedVersion: V1, updateAvailable: V2, failedLoading: false },
		]);
	});

	test(`PATCH /rest/community-packages { name } updates to ${V2}; the credential, the manual workflow and the active trigger still work`, async () => {
		const endpointsBefore = await sandbox.control.endpoints();
		const updated = await timings.time(`update ${V1} -> ${V2} through the API`, () =>
			n8n.rest<{ installedVersion: string; installedNodes: Array<{ type: string }> }>(
				'PATCH',
				'/community-packages',
				{ name: PKG },
			),
		);
		expect(updated.installedVersion).toBe(V2);
		expect(updated.installedNodes.map((n) => n.type).sort()).toEqual(TYPES);
		expect(JSON.parse(readFileSync(join(installedDir(), 'package.json'), 'utf8')).version).toBe(V2);
		expect(ledger().dependencies).toEqual({ [PKG]: V2 });
		await tarballServed(V2);
		expect((await servedNodeTypes()).sort()).toEqual([...TYPES, `${PKG}.marketplaceTool`].sort());
		expect(await n8n.rest('GET', '/community-packages')).toMatchObject([
			{ installedVersion: V2, failedLoading: false },
		]);
		expect(
			(await n8n.rest<Array<{ updateAvailable?: string }>>('GET', '/community-packages'))[0]
				.updateAvailable,
		).toBeUndefined();

		await credentialTestPasses();
		await runOrderRead();
		// The update reloads the package's code but leaves the published workflow and its endpoint alone.
		expect(await sandbox.control.endpoints()).toEqual(endpointsBefore);
		await timings.time('order event -> execution, after the update', orderEventRuns);
	});

	test(`after a restart n8n loads ${V2} from its nodes folder, and the trigger still receives`, async () => {
		await timings.time('n8n restart', () => n8n.restart());
		await n8n.login();
		expect(n8n.packageLoadError()).toBeUndefined();
		expect((await servedNodeTypes()).sort()).toEqual([...TYPES, `${PKG}.marketplaceTool`].sort());
		await runOrderRead();
		await orderEventRuns();
	});

	test('DELETE /rest/community-packages?name= removes the package: folder, ledger entry, node and credential types', async () => {
		// What a user does first: unpublish the workflow, so its trigger deletes its endpoint.
		await api.deactivateWorkflow(WF.trigger);
		await waitFor('the endpoint to be deleted', async () =>
			(await sandbox.control.endpoints()).length === 0 ? true : undefined,
		);

		// n8n's E2E licence stub lives in memory: the restart reset it, and uninstalling needs no registry.
		await timings.time('uninstall through the API', () =>
			n8n.rest('DELETE', `/community-packages?name=${encodeURIComponent(PKG)}`),
		);
		expect(existsSync(installedDir())).toBe(false);
		expect(ledger().dependencies).toEqual({});
		expect(await n8n.rest('GET', '/community-packages')).toEqual([]);
		expect(await servedNodeTypes()).toEqual([]);
		expect(await servedCredentialTypes()).not.toContain('marketplaceApi');
		// Workflows that use the nodes stay, and n8n refuses to run them.
		await expect(n8n.runWorkflow(WF.manual)).rejects.toThrow(
			`Unrecognized node type: ${PKG}.marketplace`,
		);
	});

	test('nothing left the machine: npm asked only the private registry, n8n tried only api.n8n.io (through the refusing proxy)', async () => {
		// n8n did try (so the proxy was in the path), and only for api.n8n.io: npm went nowhere else.
		expect(proxied.length).toBeGreaterThan(0);
		expect(proxied.filter((line) => !/^CONNECT api\.n8n\.io:443 /.test(line))).toEqual([]);
	});
});

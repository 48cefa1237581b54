/**
 * The package in n8n's editor, in a real browser: headless Chromium (`.ci/browser-install`) driven by
 * playwright-core against the real n8n 2.41.1 of the end-to-end suite (test/e2e/n8n.ts), with the
 * sandbox service on loopback. Signs in through the form, opens the example workflows, every
 * resource and operation of the Marketplace node, both triggers, the credential dialog and the node
 * creator. Any page error, console error not on the noise list (browser.ts), icon that does not load,
 * or parameter panel that does not render fails it. Screenshots go to tmp/browser/.
 *
 *   .ci/browser-install && .ci/with-node24 npm run build && .ci/with-node24 npx jest -c test/browser/jest.config.js
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- n8n's REST API answers untyped JSON */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import type { Locator, Page } from 'playwright-core';

import { startSandbox, type SandboxHandle } from '../sandbox';
import { DEMO_CREDENTIAL } from '../e2e/dev';
import { Timings, waitFor } from '../e2e/kit';
import { OWNER, startN8n, type N8nHandle } from '../e2e/n8n';
import { loadedImages, openBrowser, type BrowserSession, type ImageState } from './browser';
import { visibleProperties, type Property } from './parameters';

const repoRoot = resolve(__dirname, '..', '..');
const shotsDir = join(repoRoot, 'tmp', 'browser');
const examplesDir = join(repoRoot, 'test', 'e2e', 'workflows');
const PKG = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { name: string })
	.name;
/** n8n names a community package's types `<package>.<node name>`. */
const typeOf = (nodeName: string) => `${PKG}.${nodeName}`;
const TYPES = {
	action: typeOf('marketplace'),
	trigger: typeOf('marketplaceTrigger'),
	polling: typeOf('marketplacePollingTrigger'),
};
const { id: credentialId, name: credentialName } = DEMO_CREDENTIAL;
const CRED_REF = { marketplaceApi: { id: credentialId, name: credentialName } };
/** The suite's own workflow: the polling trigger feeding a Marketplace node as the node creator adds it. */
const OPERATIONS_WORKFLOW = {
	id: 'brwOperations001',
	name: 'browser: every operation',
	nodes: [
		{
			id: 'brw-poll',
			name: 'Orders Polled',
			type: TYPES.polling,
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
			credentials: CRED_REF,
		},
		{
			id: 'brw-action',
			name: 'Marketplace',
			type: TYPES.action,
			typeVersion: 1,
			position: [260, 0],
			parameters: {},
			credentials: CRED_REF,
		},
	],
	connections: { 'Orders Polled': { main: [[{ node: 'Marketplace', type: 'main', index: 0 }]] } },
	settings: { executionOrder: 'v1' },
};
/**
 * Two nodes that follow a Marketplace node which has not run: the editor previews that node's output
 * from its schema file. Both read the previewed `id`, as a builder would map it.
 */
const PREVIEW_WORKFLOW = {
	id: 'brwSchemaPreview1',
	name: 'browser: output schema preview',
	nodes: [
		{
			id: 'brw-prev-start',
			name: 'Start',
			type: 'n8n-nodes-base.manualTrigger',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		},
		{
			id: 'brw-prev-orders',
			name: 'Get Created Orders',
			type: TYPES.action,
			typeVersion: 1,
			position: [260, 0],
			parameters: { resource: 'order', operation: 'getAll', filters: { statuses: ['Created'] } },
			credentials: CRED_REF,
		},
		{
			id: 'brw-prev-pack',
			name: 'Mark Orders Packed',
			type: TYPES.action,
			typeVersion: 1,
			position: [520, 0],
			parameters: { resource: 'fulfillment', operation: 'markPacked', orderIds: '={{ $json.id }}' },
			credentials: CRED_REF,
		},
		{
			id: 'brw-prev-set',
			name: 'Edit Fields',
			type: 'n8n-nodes-base.set',
			typeVersion: 3.4,
			position: [520, 200],
			parameters: {
				mode: 'manual',
				assignments: {
					assignments: [
						{ id: 'brw-prev-a', name: 'orderId', type: 'number', value: '={{ $json.id }}' },
					],
				},
			},
		},
	],
	connections: {
		Start: { main: [[{ node: 'Get Created Orders', type: 'main', index: 0 }]] },
		'Get Created Orders': {
			main: [
				[
					{ node: 'Mark Orders Packed', type: 'main', index: 0 },
					{ node: 'Edit Fields', type: 'main', index: 0 },
				],
			],
		},
	},
	settings: { executionOrder: 'v1' },
};
/**
 * The Marketplace Trigger feeding n8n's Edit Fields with nothing set: a builder listens for a test
 * event and maps a field of the sample into the next node.
 */
const SAMPLE_WORKFLOW = {
	id: 'brwTriggerSample1',
	name: 'browser: trigger sample',
	nodes: [
		{
			id: 'brw-sample-trigger',
			name: 'Order Created',
			type: TYPES.trigger,
			typeVersion: 2,
			position: [0, 0],
			webhookId: '6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d',
			parameters: { eventTypes: ['order.created'], options: {} },
			credentials: CRED_REF,
		},
		{
			id: 'brw-sample-set',
			name: 'Edit Fields',
			type: 'n8n-nodes-base.set',
			typeVersion: 3.4,
			position: [260, 0],
			parameters: { mode: 'manual', assignments: { assignments: [] }, options: {} },
		},
	],
	connections: { 'Order Created': { main: [[{ node: 'Edit Fields', type: 'main', index: 0 }]] } },
	settings: { executionOrder: 'v1' },
};
/**
 * The pack-on-order story as a new builder tries it: the Marketplace Trigger feeding Mark Orders Packed
 * with the sample's order ID. Execute workflow runs it on the sample, which the write holds back.
 */
const PACK_SAMPLE_WORKFLOW = {
	id: 'brwPackOnSample1',
	name: 'browser: pack on the sample',
	nodes: [
		{
			id: 'brw-pack-trigger',
			name: 'New Order',
			type: TYPES.trigger,
			typeVersion: 2,
			position: [0, 0],
			webhookId: '1f2e3d4c-5b6a-4798-8a7b-6c5d4e3f2a1b',
			parameters: { eventTypes: ['order.created'], options: {} },
			credentials: CRED_REF,
		},
		{
			id: 'brw-pack-write',
			name: 'Mark Orders Packed',
			type: TYPES.action,
			typeVersion: 1,
			position: [260, 0],
			parameters: {
				resource: 'fulfillment',
				operation: 'markPacked',
				orderIds: '={{ $json.data.orderId }}',
				options: {},
			},
			credentials: CRED_REF,
		},
	],
	connections: {
		'New Order': { main: [[{ node: 'Mark Orders Packed', type: 'main', index: 0 }]] },
	},
	settings: { executionOrder: 'v1' },
};
/** The fields the order schema lists, as committed (what n8n serves). */
const ORDER_FIELDS = Object.keys(
	(
		JSON.parse(
			readFileSync(
				join(repoRoot, 'nodes', 'Marketplace', '__schema__', 'v1.0.0', 'order', 'getAll.json'),
				'utf8',
			),
		) as { properties: object }
	).properties,
);
/**
 * n8n 2.41.1 adds "Custom API Call" (this value) to the Resource and Operation options of the latest
 * version of every node whose credential's `authenticate` its type list carries (load-nodes-and-
 * credentials, supportsProxyAuth): the Marketplace credential's is a method, which that list does not
 * carry, so it adds none (test/e2e/schemas.test.ts); the walk takes the node's own options either way.
 */
const CUSTOM_API_CALL = '__CUSTOM_API_CALL__';
const ownOptions = <T extends { value: unknown }>(options: T[]) =>
	options.filter((o) => o.value !== CUSTOM_API_CALL);
const ORDER_ARRIVES = {
	file: 'order-arrives.json',
	trigger: 'Order Created',
	webhookId: '3d7c1a52-8e4b-4f0a-9c61-5a2e7b9d0a11',
};
const BAD_KEY = 'mk_unknown_browser_key_0001';

const timings = new Timings();
const suiteStarted = Date.now();
let sandbox: SandboxHandle;
let n8n: N8nHandle;
let browser: BrowserSession;
let page: Page;
/** Node type descriptions as the editor gets them (POST /rest/node-types). */
const described = new Map<string, { properties: Property[] }>();
const examples = readdirSync(examplesDir).filter((f) => f.endsWith('.json'));
const readExample = (file: string) =>
	JSON.parse(readFileSync(join(examplesDir, file), 'utf8')) as {
		id: string;
		nodes: Array<{
			name: string;
			type: string;
			typeVersion: number;
			parameters: Record<string, unknown>;
		}>;
	};

// Transitions finished at once, so a panel sliding in is shot where it stops.
const shot = async (target: Page | Locator, name: string) =>
	await target.screenshot({ path: join(shotsDir, `${name}.png`), animations: 'disabled' });
const slug = (s: string) =>
	s
		.replace(/[^A-Za-z0-9]+/g, '-')
		.replace(/^-|-$/g, '')
		.toLowerCase();

/**
 * What a builder does while the trigger listens for a test event: Webhook Endpoint > Test on the
 * endpoint the listening registered for the test URL (`/webhook-test/<webhookId>/`), through the
 * service's API as a Marketplace node sends it (the demo key, an idempotency key). The trigger asks
 * the service for nothing by itself. The endpoint exists at the service a moment before n8n holds its
 * secret for the test URL (create() is still checking reachability, and n8n keeps the secret with the
 * listening only when create() returns): a Test sent in that moment is answered 401, and the builder
 * clicks Test again. Returns how many Tests it took.
 */
async function webhookEndpointTestWhileListening(webhookId: string): Promise<number> {
	const endpoint = await waitFor(
		'the endpoint of the listening (test URL)',
		async () =>
			(await sandbox.control.endpoints()).find((e) =>
				e.url.includes(`/webhook-test/${webhookId}/`),
			),
		30_000,
		100,
	);
	const answered = async () =>
		(await sandbox.control.deliveries(endpoint.id)).filter((d) => d.attempts > 0);
	for (let attempt = 1; ; attempt++) {
		const before = (await answered()).length;
		const res = await fetch(`${sandbox.baseUrl}/v1/webhook-endpoints/${endpoint.id}/test`, {
			method: 'POST',
			headers: { authorization: `Bearer ${sandbox.demoApiKey}`, 'idempotency-key': randomUUID() },
		});
		if (res.status >= 300)
			throw new Error(`Webhook Endpoint > Test: HTTP ${res.status} ${await res.text()}`);
		const status = await waitFor(
			'the answer to Webhook Endpoint > Test',
			async () => {
				const all = await answered();
				return all.length > before ? all[all.length - 1].responseStatusCode : undefined;
			},
			30_000,
			100,
		);
		if ((status ?? 0) < 300 || attempt === 5) return attempt;
		await new Promise((r) => setTimeout(r, 1000));
	}
}

/** Fails the test on any problem the page recorded since the last call (noise excluded). */
function expectNoProblems() {
	expect(browser.takeProblems()).toEqual([]);
}

async function openWorkflow(id: string) {
	await page.goto(`${n8n.baseUrl}/workflow/${id}`);
	await page.getByTestId('canvas-node').first().waitFor();
}

const canvasNode = (name: string) =>
	page.locator(`[data-test-id="canvas-node"][data-node-name="${name}"]`);

async function openNode(name: string): Promise<Locator> {
	await canvasNode(name).dblclick();
	const ndv = page.getByTestId('ndv');
	await ndv.getByTestId('node-parameters').waitFor();
	return ndv;
}

async function closeNode() {
	await page.getByTestId('ndv-close-button').click();
	await page.getByTestId('ndv').waitFor({ state: 'hidden' });
}

/** Opens the dropdown of parameter `name`; returns its list (the popper its combobox controls). */
async function openDropdown(ndv: Locator, name: string): Promise<Locator> {
	const input = ndv.getByTestId(`parameter-input-${name}`);
	await input.click();
	const listId = await input.getByRole('combobox').getAttribute('aria-controls');
	const list = page.locator(`[id="${listId}"]`);
	await list.getByTestId('parameter-input-item').first().waitFor();
	return list;
}

/** Picks `option` (its headline, exactly) in the dropdown of parameter `name`; returns every headline it offered. */
async function choose(ndv: Locator, name: string, option: string): Promise<string[]> {
	const list = await openDropdown(ndv, name);
	const offered = await list.locator('.option-headline').allInnerTexts();
	await list
		.getByTestId('parameter-input-item')
		.filter({ has: page.locator('.option-headline').getByText(option, { exact: true }) })
		.click();
	const combobox = ndv.getByTestId(`parameter-input-${name}`).getByRole('combobox');
	await waitFor(
		`${name} = ${option}`,
		async () => ((await combobox.inputValue()) === option ? true : undefined),
		5_000,
		50,
	);
	return offered;
}

/** Lines of the visible parameter panel's text, for label checks. */
async function panelLines(ndv: Locator): Promise<string[]> {
	const text = await ndv.getByTestId('node-parameters').innerText();
	return text.split('\n').map((l) => l.replace(/\s*\*$/, '').trim());
}

/**
 * The parameter panel renders every parameter the description shows for these values: its label
 * (or a notice's text) and, for inputs, n8n's input element for it.
 */
async function expectPanelRenders(ndv: Locator, properties: Property[]) {
	await expect(
		settled(
			() => missingParameters(ndv, properties),
			(missing) => missing.length === 0,
		),
	).resolves.toEqual([]);
}

async function missingParameters(ndv: Locator, properties: Property[]): Promise<string[]> {
	const panel = ndv.getByTestId('node-parameters');
	const lines = await panelLines(ndv);
	const missing: string[] = [];
	for (const p of properties) {
		if (p.type === 'hidden') continue;
		if (p.type === 'notice') {
			if (!(await panel.getByText(p.displayName.slice(0, 60)).first().isVisible()))
				missing.push(`notice ${p.name}`);
			continue;
		}
		if (!lines.includes(p.displayName)) missing.push(`label "${p.displayName}" (${p.name})`);
		const input =
			p.type === 'resourceLocator'
				? `resource-locator-${p.name}`
				: ['collection', 'fixedCollection'].includes(p.type)
					? undefined
					: `parameter-input-${p.name}`;
		if (input && !(await panel.getByTestId(input).first().isVisible()))
			missing.push(`input ${input}`);
	}
	return missing;
}

/** The items an output panel's JSON view shows (it indents with non-breaking spaces). */
async function jsonView(panel: Locator): Promise<unknown> {
	return JSON.parse(
		(await panel.getByTestId('ndv-data-container').innerText()).replace(/\u00a0/g, ' '),
	);
}

/** Reads `read` until `done` holds or `timeoutMs` passes (the editor renders a tick after a change); the last reading. */
async function settled<T>(
	read: () => Promise<T>,
	done: (value: T) => boolean,
	timeoutMs = 5_000,
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await read();
		if (done(value) || Date.now() > deadline) return value;
		await new Promise((r) => setTimeout(r, 100));
	}
}

/** Every <img> in `scope` loaded with a width (a broken or missing icon has naturalWidth 0), at least `atLeast` of them ours. */
async function expectIconsLoaded(scope: Locator, atLeast: number) {
	const ours = (images: ImageState[]) =>
		images.filter((i) => i.src.includes(`/icons/${PKG}/`)).length;
	const images = await settled(
		() => loadedImages(scope),
		(all) => ours(all) >= atLeast,
	);
	expect(ours(images)).toBeGreaterThanOrEqual(atLeast);
	expect(images.filter((i) => !i.complete || i.naturalWidth === 0)).toEqual([]);
}

beforeAll(async () => {
	rmSync(shotsDir, { recursive: true, force: true });
	mkdirSync(shotsDir, { recursive: true });
	sandbox = await timings.time('sandbox start', () =>
		startSandbox({ port: 0, host: '127.0.0.1', allowHttpLoopback: true }),
	);
	n8n = await timings.time('n8n boot', () => startN8n({ packageRoot: repoRoot }));
	await timings.time(
		'owner, credential, workflows (REST; the credential with the CLI, which keeps its id)',
		async () => {
			await n8n.setupOwner();
			await n8n.login();
			await n8n.importCredential({
				...DEMO_CREDENTIAL,
				data: { baseUrl: sandbox.baseUrl, apiKey: sandbox.demoApiKey },
			});
			for (const file of examples) await n8n.createWorkflow(readExample(file));
			await n8n.createWorkflow(OPERATIONS_WORKFLOW);
			await n8n.createWorkflow(PREVIEW_WORKFLOW);
			await n8n.createWorkflow(SAMPLE_WORKFLOW);
			await n8n.createWorkflow(PACK_SAMPLE_WORKFLOW);
			const types = await n8n.rest<any[]>('POST', '/node-types', {
				nodeInfos: [
					{ name: TYPES.action, version: 1 },
					{ name: TYPES.trigger, version: 2 },
					{ name: TYPES.polling, version: 1 },
				],
			});
			// n8n 2.41.1 answers a community node's name without the package prefix.
			for (const t of types)
				described.set(t.name.startsWith(`${PKG}.`) ? t.name : typeOf(t.name), t);
			expect([...described.keys()].sort()).toEqual(Object.values(TYPES).sort());
		},
	);
	browser = await timings.time('Chromium start', () => openBrowser());
	page = browser.page;
	page.setDefaultTimeout(Number(process.env.BROWSER_TIMEOUT_MS ?? 15_000));
	// the editor's first load fetches megabytes of script: on a shared 2-core machine (load 10+) it took
	// longer than 15 s
	page.setDefaultNavigationTimeout(60_000);
}, 240_000);

afterAll(async () => {
	if (n8n) writeFileSync(join(repoRoot, 'tmp', 'browser-n8n.log'), n8n.logs());
	if (browser)
		writeFileSync(
			join(shotsDir, 'filtered-console.json'),
			JSON.stringify(browser.filtered(), null, 2),
		);
	await browser?.close();
	await n8n?.stop();
	await sandbox?.close();
	timings.add('whole file (beforeAll to afterAll)', Date.now() - suiteStarted);
	console.log(`[browser] timings:\n${timings.report()}`);
});

describe("the package in n8n 2.41.1's editor (headless Chromium)", () => {
	test('the sign-in form logs the owner in', async () => {
		await timings.time('sign in', async () => {
			await page.goto(`${n8n.baseUrl}/signin`);
			await page.getByTestId('emailOrLdapLoginId').locator('input').fill(OWNER.email);
			await page.getByTestId('password').locator('input').fill(OWNER.password);
			await page.getByTestId('form-submit-button').click();
			await page.waitForURL(/\/home\//);
		});
		expectNoProblems();
	});

	test.each(examples)(
		"example %s: every node on the canvas, our icons load, each of our nodes' panel renders",
		async (file) => {
			const workflow = readExample(file);
			const ours = workflow.nodes.filter((n) => n.type.startsWith(`${PKG}.`));
			await timings.time(`example ${file}`, async () => {
				await openWorkflow(workflow.id);
				// The editor marks a sticky note `sticky`, every other node `canvas-node`; each example has one note.
				const notes = workflow.nodes.filter((n) => n.type === 'n8n-nodes-base.stickyNote').length;
				expect(notes).toBe(1);
				const nodes = page.getByTestId('canvas-node');
				const others = workflow.nodes.length - notes;
				await expect(
					settled(
						() => nodes.count(),
						(n) => n === others,
					),
				).resolves.toBe(others);
				await expect(
					settled(
						() => page.getByTestId('sticky').count(),
						(n) => n === notes,
					),
				).resolves.toBe(notes);
				await expectIconsLoaded(page.getByTestId('canvas-wrapper'), ours.length);
				await shot(page, `example-${slug(file)}`);
				for (const node of ours) {
					const ndv = await openNode(node.name);
					await ndv.getByTestId('node-parameters').getByTestId('parameter-item').first().waitFor();
					// The AI tool variant (marketplaceTool) is n8n's own derivation; the others have their description here.
					const description = described.get(node.type);
					if (description)
						await expectPanelRenders(
							ndv,
							visibleProperties(description.properties, node.parameters, node.typeVersion),
						);
					await expectIconsLoaded(
						ndv.getByTestId('node-title-container').or(ndv.locator('header')).first(),
						0,
					);
					await shot(ndv, `example-${slug(file)}-${slug(node.name)}`);
					await closeNode();
				}
			});
			expectNoProblems();
		},
	);

	test('Marketplace node: the panel of every resource and operation renders, switched in the panel', async () => {
		const { properties } = described.get(TYPES.action)!;
		const resource = properties.find((p) => p.name === 'resource')!;
		await openWorkflow(OPERATIONS_WORKFLOW.id);
		const ndv = await openNode('Marketplace');
		await expectIconsLoaded(
			ndv.getByTestId('node-title-container').or(ndv.locator('header')).first(),
			0,
		);
		let panels = 0;
		await timings.time('19 operations switched and checked', async () => {
			for (const r of ownOptions(resource.options!)) {
				expect(await choose(ndv, 'resource', r.name)).toEqual(resource.options!.map((o) => o.name));
				const operation = visibleProperties(properties, { resource: r.value }, 1).find(
					(p) => p.name === 'operation',
				)!;
				for (const op of ownOptions(operation.options!)) {
					expect(await choose(ndv, 'operation', op.name)).toEqual(
						operation.options!.map((o) => o.name),
					);
					await expectPanelRenders(
						ndv,
						visibleProperties(properties, { resource: r.value, operation: op.value }, 1),
					);
					await shot(
						ndv.getByTestId('node-parameters'),
						`marketplace-${slug(String(r.value))}-${slug(String(op.value))}`,
					);
					panels++;
				}
			}
		});
		expect(panels).toBe(19);
		await closeNode();
		expectNoProblems();
	});

	test("a node after a Marketplace node that has not run: its input panel previews the operation's fields from the schema file", async () => {
		await openWorkflow(PREVIEW_WORKFLOW.id);
		const schemaRequests: string[] = [];
		const onResponse = (r: { url(): string; status(): number }) => {
			if (r.url().includes('/schemas/'))
				schemaRequests.push(`${r.status()} ${new URL(r.url()).pathname}`);
		};
		page.on('response', onResponse);
		// Another Marketplace node and n8n's Edit Fields (one of its Core Nodes) both follow the unrun node.
		for (const follower of ['Mark Orders Packed', 'Edit Fields']) {
			const ndv = await openNode(follower);
			const input = ndv.getByTestId('ndv-input-panel');
			const fields = input.getByTestId('run-data-schema-item');
			// Each item's text starts with the field's name; n8n's own variables ($now, $vars, ...) follow in their own section.
			const names = async () =>
				(await fields.allInnerTexts())
					.map((t) => t.trim().split(/\s+/)[0])
					.filter((n) => !n.startsWith('$'))
					.sort();
			await expect(settled(names, (n) => n.length >= ORDER_FIELDS.length)).resolves.toEqual(
				[...ORDER_FIELDS].sort(),
			);
			await expect(
				input.getByText('Usually outputs the following fields').isVisible(),
			).resolves.toBe(true);
			await expect(
				input.getByTestId('run-data-schema-header').allInnerTexts(),
			).resolves.toContainEqual(expect.stringContaining('Get Created Orders'));
			if (follower === 'Mark Orders Packed') {
				// For the README: the input panel and the parameters beside it, down to the field mapped.
				const from = (await input.boundingBox())!;
				const to = (await ndv.getByTestId('node-parameters').boundingBox())!;
				await page.screenshot({
					path: join(shotsDir, 'schema-preview.png'),
					animations: 'disabled',
					clip: { x: from.x, y: from.y, width: to.x + to.width - from.x, height: 420 },
				});
			} else await shot(ndv, `schema-preview-${slug(follower)}`);
			await closeNode();
		}
		page.off('response', onResponse);
		expect(schemaRequests).toContain(`200 /schemas/${TYPES.action}/1.0.0/order/getAll.json`);
		expect(schemaRequests.filter((r) => !r.startsWith('200 '))).toEqual([]);
		expectNoProblems();
	});

	test('Marketplace Trigger: its test and production webhook URLs, the notice (https; a sample comes from Webhook Endpoint > Test) and its options, Watch Every among them', async () => {
		const workflow = readExample(ORDER_ARRIVES.file);
		await openWorkflow(workflow.id);
		const ndv = await openNode(ORDER_ARRIVES.trigger);
		const { properties } = described.get(TYPES.trigger)!;
		await expectPanelRenders(ndv, visibleProperties(properties, {}, 2));
		await ndv.getByText('The service only delivers to public https addresses').waitFor();
		// the notice says where a sample comes from while it listens: Webhook Endpoint > Test
		await ndv.getByText('run Webhook Endpoint > Test on the endpoint', { exact: false }).waitFor();
		// Options offers exactly the description's options, Watch Every among them
		const optionNames = properties
			.find((p) => p.name === 'options')!
			.options!.map((o) => (o as { displayName?: string }).displayName ?? o.name);
		expect(optionNames).toContain('Watch Every');
		// n8n renders a collection's "Add Option" as a select; its list is the popper it controls
		const addOption = ndv.getByTestId('collection-parameter-add').getByRole('combobox');
		await addOption.click();
		const listId = await addOption.getAttribute('aria-controls');
		const offered = page.locator(`[id="${listId}"]`).getByRole('option');
		await offered.first().waitFor();
		await expect(
			settled(
				async () => (await offered.allInnerTexts()).map((t) => t.trim()),
				(names) => names.length >= optionNames.length,
			),
		).resolves.toEqual(optionNames);
		await shot(ndv, 'trigger-options');
		await page.keyboard.press('Escape');
		await offered.first().waitFor({ state: 'hidden' });
		const webhooks = ndv.locator('.webhooks');
		await webhooks.locator('.headline').click();
		const url = webhooks.locator('.webhook-url');
		expect((await url.innerText()).trim()).toBe(
			`${n8n.baseUrl}/webhook-test/${ORDER_ARRIVES.webhookId}/webhook`,
		);
		expect((await webhooks.locator('.http-method').innerText()).trim()).toBe('POST');
		await shot(ndv, 'trigger-test-url');
		await webhooks.getByText('Production URL', { exact: true }).click();
		expect((await url.innerText()).trim()).toBe(
			`${n8n.baseUrl}/webhook/${ORDER_ARRIVES.webhookId}/webhook`,
		);
		await shot(ndv, 'trigger-production-url');
		await shot(ndv.getByTestId('node-parameters'), 'trigger-parameters');
		await closeNode();
		expectNoProblems();
	});

	test('Marketplace Trigger: Execute step ("Listen for test event"), then Webhook Endpoint > Test, shows the sample in the output panel; Edit Fields after it maps a field from it', async () => {
		const ordersBefore = (await sandbox.control.state('orders')).length;
		await openWorkflow(SAMPLE_WORKFLOW.id);
		let ndv = await openNode('Order Created');
		const output = ndv.getByTestId('output-panel');
		await timings.time(
			'Listen for test event, Webhook Endpoint > Test -> the sample in the output panel',
			async () => {
				await ndv.getByTestId('node-execute-button').first().click();
				// the trigger asks for nothing by itself: a builder runs Webhook Endpoint > Test (the service's
				// API, as a Marketplace node sends it) on the endpoint the listening registered for the test URL
				await webhookEndpointTestWhileListening(SAMPLE_WORKFLOW.nodes[0].webhookId!);
				await output.getByTestId('node-run-status-success').waitFor({ timeout: 30_000 });
			},
		);
		await expect(output.getByTestId('ndv-items-count').innerText()).resolves.toMatch(/^1 item/);
		await output.getByTestId('radio-button-json').click();
		const json = output.getByTestId('ndv-data-container');
		await json.getByText('"sample"').first().waitFor();
		const items = (await jsonView(output)) as Array<{
			id: string;
			type: string;
			sample: boolean;
			sampleSource: string;
			data: { orderId: number };
		}>;
		expect(items).toHaveLength(1);
		const [sample] = items;
		expect(sample).toMatchObject({
			type: 'order.created',
			sample: true,
			sampleSource: 'newest-order',
		});
		// a real order of the account, and nobody placed one
		const orders = await sandbox.control.state<{ id: number }>('orders');
		expect(orders.map((o) => o.id)).toContain(sample.data.orderId);
		expect(orders).toHaveLength(ordersBefore);
		// For the README: the panel down to the end of the item. n8n's one-time hint on its pin button and its
		// "Node executed successfully" toast float over the panel: left out of the picture.
		const box = (await output.boundingBox())!;
		await page.screenshot({
			path: join(shotsDir, 'trigger-sample.png'),
			animations: 'disabled',
			clip: { x: box.x, y: box.y, width: box.width, height: Math.min(box.height, 420) },
			style:
				'[data-test-id="tooltip-content"], .el-notification { visibility: hidden !important; }',
		});
		await closeNode();
		// the listening removed the test URL's endpoint at the service
		await waitFor(
			'the test endpoint removed',
			async () =>
				(await sandbox.control.endpoints()).some((e) => e.url.includes('/webhook-test/'))
					? undefined
					: true,
			15_000,
		);

		ndv = await openNode('Edit Fields');
		const input = ndv.getByTestId('ndv-input-panel');
		// as a builder maps it: the sample's orderId dragged from the input panel onto the fields to set
		const field = input
			.getByTestId('run-data-schema-item')
			.filter({ hasText: /^\s*orderId/ })
			.first()
			.getByText('orderId', { exact: true });
		const from = (await field.boundingBox())!;
		const to = (await ndv.getByTestId('drop-area').boundingBox())!;
		await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
		await page.mouse.down();
		await page.mouse.move(from.x + from.width / 2 + 20, from.y + from.height / 2 + 5, { steps: 5 });
		await page.mouse.move(to.x + to.width / 2, to.y + to.height / 2, { steps: 20 });
		await page.mouse.up();
		const parameters = ndv.getByTestId('node-parameters');
		await parameters.getByText('{{ $json.data.orderId }}').waitFor();
		// the expression's value under it: the sample's order
		await expect(
			settled(
				() => panelLines(ndv),
				(lines) => lines.includes(String(sample.data.orderId)),
			),
		).resolves.toContain(String(sample.data.orderId));
		await shot(ndv, 'trigger-sample-mapped');
		await ndv.getByTestId('node-execute-button').first().click();
		const mapped = ndv.getByTestId('output-panel');
		await mapped.getByTestId('node-run-status-success').waitFor({ timeout: 30_000 });
		await mapped.getByTestId('radio-button-json').click();
		await mapped.getByTestId('ndv-data-container').getByText('"orderId"').first().waitFor();
		expect(await jsonView(mapped)).toEqual([{ data: { orderId: sample.data.orderId } }]);
		// from the trigger's sample, not a second listening
		await expect(input.getByText(sample.id, { exact: true }).isVisible()).resolves.toBe(true);
		await closeNode();
		expectNoProblems();
	});

	test('Execute workflow on the sample of Marketplace Trigger -> Mark Orders Packed: the output panel shows the item held back and why; nothing is packed', async () => {
		const { order } = await sandbox.control.createOrder({ brandId: 3 });
		const since = (await sandbox.control.requests()).at(-1)?.seq ?? 0;
		await openWorkflow(PACK_SAMPLE_WORKFLOW.id);
		await timings.time('Execute workflow -> the sample run held back', async () => {
			await page.getByTestId('execute-workflow-button').first().click();
			await webhookEndpointTestWhileListening(PACK_SAMPLE_WORKFLOW.nodes[0].webhookId!);
			const api = await n8n.publicApi();
			await waitFor(
				'the run on the sample',
				async () =>
					(await api.listExecutions({ workflowId: PACK_SAMPLE_WORKFLOW.id })).find(
						(e) => e.status === 'success',
					),
				30_000,
				200,
			);
		});
		const ndv = await openNode('Mark Orders Packed');
		const output = ndv.getByTestId('output-panel');
		await output.getByTestId('node-run-status-success').waitFor({ timeout: 15_000 });
		await output.getByTestId('radio-button-json').click();
		await output.getByTestId('ndv-data-container').getByText('"heldBack"').first().waitFor();
		const items = (await jsonView(output)) as Array<Record<string, unknown>>;
		expect(items).toEqual([
			{ heldBack: true, heldBackReason: expect.stringMatching(/\bsample\b/), orderId: order.id },
		]);
		expect(items[0].heldBackReason).toContain('"Write Sample Items"');
		await output
			.getByText(/comes from a sample/)
			.first()
			.waitFor();
		await shot(output, 'held-back-sample');
		await closeNode();
		const packed = (await sandbox.control.requests(since)).filter(
			(r) => r.path === '/v1/fulfillment/orders/packed',
		);
		expect(packed).toEqual([]);
		expect(
			(await sandbox.control.state<{ status: string }>('orders', order.id as number)).status,
		).toBe('Created');
		expectNoProblems();
	});

	test('Marketplace Polling Trigger: poll times, the notice and every parameter render', async () => {
		await openWorkflow(OPERATIONS_WORKFLOW.id);
		const ndv = await openNode('Orders Polled');
		const { properties } = described.get(TYPES.polling)!;
		await expectPanelRenders(ndv, visibleProperties(properties, {}, 1));
		expect(await panelLines(ndv)).toContain('Poll Times');
		await shot(ndv, 'polling-trigger');
		await closeNode();
		expectNoProblems();
	});

	test("credential dialog: n8n's credential test says OK for the demo key and shows the error for an unknown key", async () => {
		await openWorkflow(OPERATIONS_WORKFLOW.id);
		const ndv = await openNode('Marketplace');
		// The demo key: opening the saved credential runs n8n's credential test.
		await ndv.getByTestId('credential-edit-button').click();
		const dialog = page.getByTestId('editCredential-modal');
		const closeDialog = async () => {
			await dialog.locator('.el-dialog__headerbtn').click();
			await dialog.waitFor({ state: 'hidden' });
		};
		await dialog.waitFor();
		await page.getByTestId('credentials-config-container-test-success').waitFor();
		await expect(
			page.getByTestId('credentials-config-container-test-success').innerText(),
		).resolves.toMatch(/^Connection tested successfully/);
		await expectIconsLoaded(dialog, 1);
		await shot(dialog, 'credential-ok');
		await closeDialog();

		// An unknown key, as a new credential: saving runs the test, which fails.
		await ndv.getByTestId('node-credentials-select').click();
		await page.getByTestId('node-credentials-select-item-new').click();
		await dialog.waitFor();
		await dialog.getByTestId('parameter-input-baseUrl').locator('input').fill(sandbox.baseUrl);
		await dialog.getByTestId('parameter-input-apiKey').locator('input').fill(BAD_KEY);
		await page.getByTestId('credential-save-button').click();
		const failure = dialog.getByText('Couldn’t connect with these settings');
		await failure.waitFor();
		await dialog.getByText('More details').click();
		const details = await settled(
			() => dialog.innerText(),
			(text) => /401|unauthori[sz]ed/i.test(text),
		);
		expect(details).toMatch(/401|unauthori[sz]ed/i);
		expect(details).not.toContain(BAD_KEY);
		await shot(dialog, 'credential-error');
		await closeDialog();
		await closeNode();
		expectNoProblems();
	});

	test('node creator: "Marketplace" finds our nodes with their icons; the app lists the trigger and the 19 actions', async () => {
		await page.goto(`${n8n.baseUrl}/workflow/new`);
		await page.getByTestId('canvas-add-button').click();
		const creator = page.getByTestId('node-creator');
		await creator.getByTestId('node-creator-search-bar').fill('Marketplace');
		const items = creator.getByTestId('item-iterator-item');
		const app = items.filter({
			has: page.getByTestId('node-creator-item-name').getByText('Marketplace', { exact: true }),
		});
		await app.waitFor();
		// n8n folds a node and its "<name> Trigger" into one app entry; the polling trigger stands alone.
		const names = items.getByTestId('node-creator-item-name');
		const found = ['Marketplace', 'Marketplace Polling Trigger'];
		await expect(
			settled(
				() => names.allInnerTexts(),
				(n) => n.join() === found.join(),
			),
		).resolves.toEqual(found);
		await expectIconsLoaded(creator, 2);
		await shot(creator, 'node-creator-search');
		await app.click();
		await creator.getByText('Triggers (1)').waitFor();
		await creator.getByText('On new Marketplace event').waitFor();
		// In a workflow without a trigger the actions start folded: unfolded, each operation's action is listed.
		await creator.getByText('Actions (19)').click();
		const actions = described
			.get(TYPES.action)!
			.properties.filter((p) => p.name === 'operation')
			.flatMap((p) => ownOptions(p.options ?? []).map((o) => o.action));
		expect(actions).toHaveLength(19);
		const missingActions = async () => {
			const missing: string[] = [];
			for (const action of actions)
				if (!(await creator.getByText(action!, { exact: true }).isVisible())) missing.push(action!);
			return missing;
		};
		await expect(settled(missingActions, (missing) => missing.length === 0)).resolves.toEqual([]);
		await expectIconsLoaded(creator, 2 + actions.length);
		await shot(creator, 'node-creator-app');
		expectNoProblems();
	});
});

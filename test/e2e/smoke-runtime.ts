/**
 * Smoke check of the real-n8n runtime (test/e2e/n8n.ts), independent of this repo's own nodes:
 * writes a throw-away community package (an action node, a webhook trigger with webhookMethods and
 * a credential type, as compiled JS) into a temp folder, loads it into n8n 2.41.1, and checks that
 * the node types are served, a credential and workflows import, a workflow runs headless (CLI and
 * REST), an API key works on /api/v1, a webhook workflow activates and answers, restart keeps it,
 * and stop leaves no process behind. Prints the timings it measured.
 *
 *   .ci/with-node24 node -r ts-node/register/transpile-only test/e2e/smoke-runtime.ts
 */
import { createServer } from 'node:http';
import {
	existsSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	readdirSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { strict as assert } from 'node:assert';

import { startN8n, type N8nHandle } from './n8n';
import type { Json } from '../json';

const repoRoot = resolve(__dirname, '..', '..');
const PKG = 'n8n-nodes-runtime-smoke';
const WEBHOOK_ID = '6f1f3c2e-9d57-4a8e-b0a4-0b3c2f9e1d11';

const timings: Array<[string, number]> = [];
async function timed<T>(label: string, fn: () => Promise<T>): Promise<T> {
	const t = Date.now();
	try {
		return await fn();
	} finally {
		const ms = Date.now() - t;
		timings.push([label, ms]);
		console.log(`[smoke] ${label}: ${ms} ms`);
	}
}

function writeSmokePackage(root: string, callLog: string) {
	mkdirSync(join(root, 'dist'), { recursive: true });
	mkdirSync(join(root, 'node_modules'), { recursive: true });
	// The package's own require('n8n-workflow') resolves from its folder, as for the real package.
	symlinkSync(
		join(repoRoot, 'node_modules', 'n8n-workflow'),
		join(root, 'node_modules', 'n8n-workflow'),
		'dir',
	);
	writeFileSync(
		join(root, 'package.json'),
		JSON.stringify(
			{
				name: PKG,
				version: '0.0.1',
				main: 'index.js',
				n8n: {
					n8nNodesApiVersion: 1,
					strict: true,
					credentials: ['dist/SmokeApi.credentials.js'],
					nodes: ['dist/Smoke.node.js', 'dist/SmokeTrigger.node.js'],
				},
				peerDependencies: { 'n8n-workflow': '*' },
			},
			null,
			'\t',
		),
	);
	writeFileSync(
		join(root, 'dist', 'SmokeApi.credentials.js'),
		`"use strict";
class SmokeApi {
	constructor() {
		this.name = 'smokeApi';
		this.displayName = 'Smoke API';
		this.properties = [{ displayName: 'API Key', name: 'apiKey', type: 'string', typeOptions: { password: true }, default: '' }];
	}
}
exports.SmokeApi = SmokeApi;
`,
	);
	writeFileSync(
		join(root, 'dist', 'Smoke.node.js'),
		`"use strict";
const { NodeConnectionTypes } = require('n8n-workflow');
class Smoke {
	constructor() {
		this.description = {
			displayName: 'Smoke',
			name: 'smoke',
			group: ['transform'],
			version: 1,
			description: 'Runtime smoke node',
			defaults: { name: 'Smoke' },
			inputs: [NodeConnectionTypes.Main],
			outputs: [NodeConnectionTypes.Main],
			credentials: [{ name: 'smokeApi', required: false }],
			properties: [
				{ displayName: 'Greeting', name: 'greeting', type: 'string', default: 'hello' },
				{ displayName: 'URL', name: 'url', type: 'string', default: '' },
			],
		};
	}
	async execute() {
		const items = this.getInputData();
		const out = [];
		for (let i = 0; i < items.length; i++) {
			const json = { greeting: this.getNodeParameter('greeting', i), index: i, input: items[i].json };
			const url = this.getNodeParameter('url', i);
			if (url) json.fetched = await this.helpers.httpRequest({ method: 'GET', url, json: true });
			try {
				const creds = await this.getCredentials('smokeApi');
				json.apiKeyLength = String(creds.apiKey).length;
			} catch (e) {
				json.credentialError = e.message;
			}
			out.push({ json, pairedItem: { item: i } });
		}
		return [out];
	}
}
exports.Smoke = Smoke;
`,
	);
	writeFileSync(
		join(root, 'dist', 'SmokeTrigger.node.js'),
		`"use strict";
const { NodeConnectionTypes } = require('n8n-workflow');
const { appendFileSync } = require('fs');
const record = (ctx, method) => appendFileSync(${JSON.stringify(callLog)}, JSON.stringify({ method, mode: ctx.getMode(), url: ctx.getNodeWebhookUrl('default') }) + '\\n');
class SmokeTrigger {
	constructor() {
		this.description = {
			displayName: 'Smoke Trigger',
			name: 'smokeTrigger',
			group: ['trigger'],
			version: 1,
			description: 'Runtime smoke webhook trigger',
			defaults: { name: 'Smoke Trigger' },
			inputs: [],
			outputs: [NodeConnectionTypes.Main],
			webhooks: [{ name: 'default', httpMethod: 'POST', responseMode: 'onReceived', path: 'hook' }],
			properties: [],
		};
		this.webhookMethods = {
			default: {
				async checkExists() { record(this, 'checkExists'); return false; },
				async create() { record(this, 'create'); return true; },
				async delete() { record(this, 'delete'); return true; },
			},
		};
	}
	async webhook() {
		return { workflowData: [[{ json: { body: this.getBodyData(), marker: this.getHeaderData()['x-smoke'] } }]] };
	}
}
exports.SmokeTrigger = SmokeTrigger;
`,
	);
}

function writeWorkflows(dir: string, echoUrl: string) {
	mkdirSync(dir, { recursive: true });
	const manual = {
		id: 'smokeManual00001',
		name: 'Smoke manual',
		active: false,
		nodes: [
			{
				id: 'a1',
				name: 'Start',
				type: 'n8n-nodes-base.manualTrigger',
				typeVersion: 1,
				position: [0, 0],
				parameters: {},
			},
			{
				id: 'a2',
				name: 'Smoke',
				type: `${PKG}.smoke`,
				typeVersion: 1,
				position: [220, 0],
				parameters: { greeting: 'hi from e2e', url: echoUrl },
				credentials: { smokeApi: { id: 'smokeCred0000001', name: 'Smoke cred' } },
			},
		],
		connections: { Start: { main: [[{ node: 'Smoke', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	};
	const hook = {
		id: 'smokeWebhook0001',
		name: 'Smoke webhook',
		active: false,
		nodes: [
			{
				id: 'b1',
				name: 'Smoke Trigger',
				type: `${PKG}.smokeTrigger`,
				typeVersion: 1,
				position: [0, 0],
				parameters: {},
				webhookId: WEBHOOK_ID,
			},
			{
				id: 'b2',
				name: 'Smoke',
				type: `${PKG}.smoke`,
				typeVersion: 1,
				position: [220, 0],
				parameters: { greeting: 'from hook' },
			},
		],
		connections: { 'Smoke Trigger': { main: [[{ node: 'Smoke', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	};
	writeFileSync(join(dir, 'manual.json'), JSON.stringify(manual, null, '\t'));
	writeFileSync(join(dir, 'hook.json'), JSON.stringify(hook, null, '\t'));
}

/** Every live process whose environment names this user folder (n8n, its task runner, CLI children). */
function processesUsing(userFolder: string): number[] {
	const found: number[] = [];
	for (const entry of readdirSync('/proc')) {
		if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
		try {
			const environ = readFileSync(`/proc/${entry}/environ`, 'utf8');
			const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
			const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
			if (state !== 'Z' && environ.includes(`N8N_USER_FOLDER=${userFolder}\0`))
				found.push(Number(entry));
		} catch {}
	}
	return found;
}

function alive(pid: number): boolean {
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
		return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
	} catch {
		return false;
	}
}

function describe(pid: number): string {
	try {
		return `${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').slice(0, 120)}`;
	} catch {
		return `${pid} (gone)`;
	}
}

/** Every live descendant of `root` (by parent pid). */
function descendants(root: number): number[] {
	const parent = new Map<number, number>();
	for (const entry of readdirSync('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
			parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
		} catch {}
	}
	const out: number[] = [];
	const walk = (p: number) => {
		for (const [pid, pp] of parent)
			if (pp === p) {
				out.push(pid);
				walk(pid);
			}
	};
	walk(root);
	return out;
}

async function postHook(n8n: N8nHandle, marker: string) {
	const t = Date.now();
	const res = await fetch(`${n8n.baseUrl}/webhook/${WEBHOOK_ID}/hook`, {
		method: 'POST',
		headers: { 'content-type': 'application/json', 'x-smoke': marker },
		body: JSON.stringify({ marker }),
	});
	return { status: res.status, text: await res.text(), ms: Date.now() - t };
}

async function waitFor<T>(
	what: string,
	fn: () => Promise<T | undefined>,
	timeoutMs = 30_000,
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	while (Date.now() < deadline) {
		const v = await fn();
		if (v !== undefined) return v;
		await new Promise((r) => setTimeout(r, 200));
	}
	throw new Error(`timed out waiting for ${what}`);
}

async function main() {
	const work = mkdtempSync(join(tmpdir(), 'n8n-smoke-'));
	const pkgRoot = join(work, 'pkg');
	const callLog = join(work, 'webhook-calls.jsonl');
	const wfDir = join(work, 'workflows');
	const userFolder = join(work, 'home');
	writeFileSync(callLog, '');
	writeSmokePackage(pkgRoot, callLog);

	// A loopback server the node calls, to check n8n lets nodes reach loopback.
	const echo = createServer((req, res) => {
		res.setHeader('content-type', 'application/json');
		res.end(JSON.stringify({ echoed: req.url }));
	});
	await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
	const echoPort = (echo.address() as { port: number }).port;
	writeWorkflows(wfDir, `http://127.0.0.1:${echoPort}/ping`);

	let n8n: N8nHandle | undefined;
	try {
		n8n = await timed('first boot (spawn -> editor line + /healthz/readiness)', () =>
			startN8n({ packageRoot: pkgRoot, userFolder }),
		);
		const h = n8n;
		console.log(`[smoke] n8n at ${h.baseUrl}, folder ${userFolder}`);
		console.log(`[smoke] start-up log names the package: ${h.logs().includes(PKG)}`);

		const login = await timed('owner setup', () => h.setupOwner());
		await timed('login', () => h.login(login));

		// Node types as the editor sees them.
		const typesRes = await h.fetch('/types/nodes.json');
		const typesText = await typesRes.text();
		console.log(
			`[smoke] GET /types/nodes.json -> ${typesRes.status}, ${typesText.length} bytes, has ours: ${typesText.includes(`${PKG}.smoke`)}`,
		);
		const credTypesRes = await h.fetch('/types/credentials.json');
		const credTypesText = await credTypesRes.text();
		console.log(
			`[smoke] GET /types/credentials.json -> ${credTypesRes.status}, has smokeApi: ${credTypesText.includes('"smokeApi"')}`,
		);
		const nodeInfo = await h.rest<Json[]>('POST', '/node-types', {
			nodeInfos: [
				{ name: `${PKG}.smoke`, version: 1 },
				{ name: `${PKG}.smokeTrigger`, version: 1 },
			],
		});
		console.log(`[smoke] POST /rest/node-types -> ${nodeInfo.map((n) => n.name).join(', ')}`);
		assert.equal(nodeInfo.length, 2);
		assert.ok(
			typesText.includes(`${PKG}.smoke`) || typesText.includes(`"smoke"`),
			'node type served in /types/nodes.json',
		);

		const api = await timed('create API key', () => h.publicApi());
		const before = await api.listWorkflows();
		console.log(`[smoke] /api/v1/workflows with the key -> ${before.length} workflows`);

		// Credential: CLI import (keeps the id the workflows reference) and, for timing, REST create.
		const credCli = await timed('CLI import:credentials (server running)', () =>
			h.importCredential({
				id: 'smokeCred0000001',
				name: 'Smoke cred',
				type: 'smokeApi',
				data: { apiKey: 'k-12345' },
			}),
		);
		console.log(`[smoke] import:credentials took ${credCli.ms} ms`);
		const restCredId = await timed('REST create credential', () =>
			h.createCredential({ name: 'Smoke cred (rest)', type: 'smokeApi', data: { apiKey: 'abc' } }),
		);
		console.log(`[smoke] REST credential id ${restCredId}`);

		const wfCli = await timed('CLI import:workflow --separate (server running)', () =>
			h.importWorkflows(wfDir),
		);
		console.log(
			`[smoke] import:workflow output: ${(wfCli.stdout + wfCli.stderr)
				.split('\n')
				.filter((l) => /import|Success|Error/i.test(l))
				.join(' | ')}`,
		);
		const after = await api.listWorkflows();
		console.log(
			`[smoke] workflows now: ${after.map((w) => `${w.id}:${w.name}:${w.active}`).join(', ')}`,
		);
		assert.ok(after.some((w) => w.id === 'smokeManual00001'));

		const run = await timed('CLI execute --rawOutput', () => h.runWorkflowCli('smokeManual00001'));
		console.log(
			`[smoke] execute exit ${run.code} in ${run.ms} ms; output: ${JSON.stringify(run.output).slice(0, 600)}`,
		);
		assert.equal(run.code, 0, run.stderr);
		assert.ok(JSON.stringify(run.output).includes('hi from e2e'));
		assert.ok(
			JSON.stringify(run.output).includes('"apiKeyLength":7'),
			'credential decrypted in the CLI run',
		);
		assert.ok(JSON.stringify(run.output).includes('/ping'), 'node reached the loopback server');

		const ex = await timed('REST manual run (POST /rest/workflows/{id}/run + wait)', () =>
			h.runWorkflow('smokeManual00001'),
		);
		console.log(`[smoke] REST run execution ${ex.id} status ${ex.status} mode ${ex.mode}`);
		assert.equal(ex.status, 'success');
		assert.ok(JSON.stringify(ex.data).includes('"apiKeyLength":7'));
		const ex2 = await timed('REST manual run, second', () => h.runWorkflow('smokeManual00001'));
		assert.equal(ex2.status, 'success');

		// Webhook trigger through the public API.
		await timed('public API activate (answer)', () => api.activateWorkflow('smokeWebhook0001'));
		const pub = await timed('waitForActivation (publication-status)', () =>
			h.waitForActivation('smokeWebhook0001'),
		);
		console.log(`[smoke] publication-status: ${JSON.stringify(pub)}`);
		console.log(
			`[smoke] trigger calls so far: ${readFileSync(callLog, 'utf8').trim().replace(/\n/g, ' ')}`,
		);
		const first = await postHook(h, 'one');
		console.log(`[smoke] webhook POST -> ${first.status} in ${first.ms} ms: ${first.text}`);
		assert.equal(first.status, 200);
		const hookEx = await waitFor('webhook execution', async () => {
			const list = await api.listExecutions({ workflowId: 'smokeWebhook0001', includeData: true });
			return list.find((e) => JSON.stringify(e.data ?? {}).includes('"marker":"one"'));
		});
		console.log(
			`[smoke] webhook execution ${hookEx.id} mode ${hookEx.mode} status ${hookEx.status}`,
		);

		await timed('restart (stop + boot to editor line)', () => h.restart());
		await h.login();
		const second = await postHook(h, 'two');
		console.log(`[smoke] webhook after restart -> ${second.status} in ${second.ms} ms`);
		assert.equal(second.status, 200);
		const statusAfter = await h.rest('GET', '/workflows/smokeWebhook0001/publication-status');
		console.log(`[smoke] publication-status after restart: ${JSON.stringify(statusAfter)}`);

		await timed('public API deactivate', () => api.deactivateWorkflow('smokeWebhook0001'));
		await new Promise((r) => setTimeout(r, 1500));
		const third = await postHook(h, 'three');
		console.log(`[smoke] webhook after deactivate -> ${third.status}`);
		console.log(
			`[smoke] trigger calls: ${readFileSync(callLog, 'utf8').trim().replace(/\n/g, ' ')}`,
		);

		const group = h.processes();
		const tree = [...new Set([...group, ...descendants(h.pid()!), ...processesUsing(userFolder)])];
		console.log(
			`[smoke] before stop: n8n pid ${h.pid()}, its group ${group.join(', ')}; tree+folder: ${tree.map(describe).join('; ')}`,
		);
		assert.ok(group.length >= 2, 'n8n and its task runner share the group');
		await timed('stop', () => h.stop());
		n8n = undefined;
		const left = tree.filter(alive);
		console.log(
			`[smoke] processes left after stop: ${left.length ? left.map(describe).join('; ') : 'none'}`,
		);
		assert.equal(left.length, 0);
		console.log('[smoke] OK');
	} catch (e) {
		if (n8n) console.error(`--- n8n log tail ---\n${n8n.logs().slice(-6000)}`);
		throw e;
	} finally {
		if (n8n) await n8n.stop();
		echo.close();
		if (!process.env.KEEP_N8N_FOLDER && existsSync(work))
			rmSync(work, { recursive: true, force: true });
		console.log('[smoke] timings:');
		for (const [label, ms] of timings) console.log(`  ${label}: ${ms} ms`);
	}
}

main().catch((e) => {
	console.error(e);
	process.exit(1);
});

/**
 * `npm run dev` (via .ci/dev): the sandbox service plus a real n8n 2.41.1 with this package loaded,
 * an owner login, the sandbox's demo key as a credential, a local mail catcher (MailDev) with an SMTP
 * credential for it, and the example workflows, so a person can try the nodes in the editor without
 * an account and read the mails the examples send. Ctrl-C stops everything.
 *
 *   .ci/dev [--port 5678] [--sandbox-port 4010] [--smtp-port 1025] [--inbox-port 1080]
 *           [--folder tmp/dev-n8n] [--fresh] [--reimport]
 *
 * n8n's data (database, settings) lives in <repo>/tmp/dev-n8n and survives restarts; --fresh
 * starts from an empty one; the example workflows are imported on a fresh folder or with --reimport.
 * The sandbox keeps its data (users, orders, webhook endpoints and their secrets) in
 * <repo>/tmp/dev-n8n/sandbox-state.json, so trigger workflows published before a restart keep
 * receiving events after it. When the sandbox starts without that file (first start, --fresh, or
 * the file deleted) it knows no endpoint, and n8n calls no webhook method when it starts: every
 * published workflow with a Marketplace Trigger is then published again, which registers it. On a
 * fresh folder the example "order arrives -> read it" is imported and published. The mail catcher
 * keeps its mails in <repo>/tmp/dev-n8n/mail; a port in use is replaced by a free one, and the
 * SMTP credential follows it.
 *
 * "ready in" counts from the command's start when .ci/dev passes it (MKT_DEV_STARTED_AT_MS), so it
 * includes the installs (or their no-op checks) and the build. Measured with `npm run dev`, n8n already
 * installed (2 cores, load 1.1-2.8): 18.5 s on a fresh data folder, 11.8 s on a restart (the build
 * 2.3-3.5 s of it); `time` to that line 18.6 s and 12.0 s.
 */
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { smtpCredentialData, startMailCatcher, type MailCatcherHandle } from './mailCatcher';
import { freePort, startN8n, type N8nHandle } from './n8n';

const repoRoot = resolve(__dirname, '..', '..');
const workflowsDir = join(__dirname, 'workflows');

/** The credential the example workflows in test/e2e/workflows reference. */
export const DEMO_CREDENTIAL = {
	id: 'mktSandboxDemo01',
	name: 'Marketplace sandbox (demo key)',
	type: 'marketplaceApi',
} as const;

/** The SMTP credential the Send Email nodes of examples (b) and (c) use: the local mail catcher. */
export const MAIL_CREDENTIAL = {
	id: 'mktDevMailSmtp01',
	name: 'Mail catcher (npm run dev)',
	type: 'smtp',
} as const;

/** Example workflow of story (a), "order arrives -> read it" (test/e2e/workflows/order-arrives.json). */
export const ORDER_ARRIVES_WORKFLOW = {
	id: 'mktOrderArrives1',
	webhookId: '3d7c1a52-8e4b-4f0a-9c61-5a2e7b9d0a11',
} as const;

/** Example workflow of story (b), the evening packing report by mail (test/e2e/workflows/evening-pack-and-report.json). */
export const EVENING_PACK_WORKFLOW = {
	id: 'mktEveningPack01',
	startNode: 'Every Evening',
} as const;

interface SandboxHandle {
	baseUrl: string;
	demoApiKey: string;
	restored: boolean;
	close(): Promise<void>;
}

function arg(name: string): string | undefined {
	const i = process.argv.indexOf(`--${name}`);
	return i >= 0 ? process.argv[i + 1] : undefined;
}
const flag = (name: string) => process.argv.includes(`--${name}`);

async function portIsFree(port: number): Promise<boolean> {
	const { createServer } = await import('node:net');
	return await new Promise((r) => {
		const s = createServer();
		s.once('error', () => r(false));
		s.listen(port, '127.0.0.1', () => s.close(() => r(true)));
	});
}

async function startSandbox(port: number, stateFile: string): Promise<SandboxHandle> {
	const entry = join(repoRoot, 'test', 'sandbox', 'index.ts');
	if (!existsSync(entry)) throw new Error(`the sandbox is not there yet (${entry})`);
	// Loaded at run time so this file compiles and runs while the sandbox is missing or broken.
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	const mod = require(entry) as {
		startSandbox(options: Record<string, unknown>): Promise<SandboxHandle>;
	};
	// allowHttpLoopback: n8n's webhook URL is http://127.0.0.1:<port>/webhook/...
	return await mod.startSandbox({ port, host: '127.0.0.1', allowHttpLoopback: true, stateFile });
}

async function main() {
	// .ci/dev passes the command's start, so "ready in" includes its install checks and build; run alone,
	// dev.ts counts from its own start.
	const bootAt = Date.now();
	const commandAt = Number(process.env.MKT_DEV_STARTED_AT_MS);
	const startedAt =
		Number.isFinite(commandAt) && commandAt > 0 && commandAt <= bootAt ? commandAt : bootAt;
	const n8nPortWanted = Number(arg('port') ?? 5678);
	const sandboxPort = Number(arg('sandbox-port') ?? 4010);
	const userFolder = resolve(repoRoot, arg('folder') ?? join('tmp', 'dev-n8n'));
	if (flag('fresh')) rmSync(userFolder, { recursive: true, force: true });
	const freshFolder = !existsSync(join(userFolder, '.n8n', 'database.sqlite'));
	const n8nPort = (await portIsFree(n8nPortWanted)) ? n8nPortWanted : await freePort();
	const freeOr = async (wanted: number) => ((await portIsFree(wanted)) ? wanted : await freePort());

	let sandbox: SandboxHandle | undefined;
	let mail: MailCatcherHandle | undefined;
	let n8n: N8nHandle | undefined = undefined;
	let stopping = false;
	const shutdown = async (code: number) => {
		if (stopping) return;
		stopping = true;
		console.log('\n[dev] stopping ...');
		await Promise.allSettled([n8n?.stop(), Promise.resolve(sandbox?.close()), mail?.close()]);
		process.exit(code);
	};
	process.on('SIGINT', () => void shutdown(0));
	process.on('SIGTERM', () => void shutdown(0));

	try {
		mkdirSync(userFolder, { recursive: true });
		sandbox = await startSandbox(sandboxPort, join(userFolder, 'sandbox-state.json'));
		console.log(
			`[dev] sandbox at ${sandbox.baseUrl} (${sandbox.restored ? 'its data from the last run' : 'fresh demo data'})`,
		);
	} catch (e) {
		console.warn(`[dev] sandbox not started: ${(e as Error).message}`);
	}

	try {
		mail = await startMailCatcher({
			smtpPort: await freeOr(Number(arg('smtp-port') ?? 1025)),
			webPort: await freeOr(Number(arg('inbox-port') ?? 1080)),
			mailDir: join(userFolder, 'mail'),
		});
		console.log(
			`[dev] mail catcher (MailDev): SMTP on 127.0.0.1:${mail.smtpPort}, inbox at ${mail.webUrl}/`,
		);
	} catch (e) {
		console.warn(`[dev] mail catcher not started: ${(e as Error).message}`);
	}

	console.log(`[dev] starting n8n 2.41.1 on port ${n8nPort} (first boot about 15 s) ...`);
	n8n = await startN8n({
		packageRoot: repoRoot,
		port: n8nPort,
		userFolder,
		echoLogs: flag('verbose'),
		failOnPackageError: false,
	});
	const loadError = n8n.packageLoadError();
	if (loadError)
		console.warn(
			`[dev] WARNING: n8n did not load this package (none of its nodes are available):\n${loadError}`,
		);
	try {
		await n8n.login();
	} catch {
		await n8n.setupOwner();
	}

	// Upserts by id (one CLI call, about 4 s), so the credentials follow the sandbox's current address
	// and demo key, and the catcher's SMTP port.
	const credentials = [
		...(sandbox
			? [{ ...DEMO_CREDENTIAL, data: { baseUrl: sandbox.baseUrl, apiKey: sandbox.demoApiKey } }]
			: []),
		...(mail ? [{ ...MAIL_CREDENTIAL, data: smtpCredentialData(mail) }] : []),
	];
	if (credentials.length) await n8n.importCredential(credentials);
	const hasWorkflows =
		existsSync(workflowsDir) && readdirSync(workflowsDir).some((f) => f.endsWith('.json'));
	if (hasWorkflows && (freshFolder || flag('reimport'))) {
		await n8n.importWorkflows(workflowsDir);
		console.log(`[dev] imported the example workflows from ${workflowsDir}`);
	}
	let activated = false;
	if (sandbox) {
		try {
			const api = await n8n.publicApi();
			if (!sandbox.restored) {
				const published = (await api.listWorkflows({ active: true })) as Array<{
					id: string;
					name: string;
					nodes?: Array<{ type: string }>;
				}>;
				for (const workflow of published.filter((w) =>
					w.nodes?.some((n) => n.type.endsWith('.marketplaceTrigger')),
				)) {
					await api.deactivateWorkflow(workflow.id);
					await api.activateWorkflow(workflow.id);
					await n8n.waitForActivation(workflow.id, 30_000);
					console.log(
						`[dev] published "${workflow.name}" again: its trigger registered with this sandbox`,
					);
				}
			}
			if (hasWorkflows && freshFolder) {
				await api.activateWorkflow(ORDER_ARRIVES_WORKFLOW.id);
				await n8n.waitForActivation(ORDER_ARRIVES_WORKFLOW.id, 30_000);
			}
			activated =
				(await api.getWorkflow(ORDER_ARRIVES_WORKFLOW.id).catch(() => undefined))?.active === true;
		} catch (e) {
			console.warn(
				`[dev] could not publish the trigger workflows: ${(e as Error).message.slice(0, 500)}`,
			);
		}
	}

	console.log('');
	console.log(`  n8n editor:  ${n8n.baseUrl}/`);
	if (mail)
		console.log(
			`  mail inbox:  ${mail.webUrl}/  (every mail n8n sends with the credential "${MAIL_CREDENTIAL.name}")`,
		);
	console.log(`  login:       owner@example.com / Marketplace-Dev-1`);
	if (sandbox) {
		console.log(
			`  sandbox:     ${sandbox.baseUrl}  (credential "${DEMO_CREDENTIAL.name}" holds its demo key)`,
		);
		if (mail) {
			console.log(
				`  report:      open "Marketplace: every evening mark the day's orders packed and report" (${n8n.baseUrl}/workflow/${EVENING_PACK_WORKFLOW.id})`,
			);
			console.log(
				'               and press "Execute workflow": it marks today\'s Created orders packed and mails the warehouse',
			);
			console.log(
				'               a report, which the inbox shows (the first curl below makes an order to pack)',
			);
		}
		if (activated) {
			console.log(
				`  active:      "Marketplace: order arrives -> read it" (${n8n.baseUrl}/workflow/${ORDER_ARRIVES_WORKFLOW.id})`,
			);
			console.log(
				'  events:      make the sandbox emit an order.created event (a new order), then see Executions:',
			);
		} else {
			console.log(
				'  events:      activate a workflow with the Marketplace Trigger, then make the sandbox emit one, e.g.',
			);
		}
		console.log(
			`               curl -X POST ${sandbox.baseUrl}/_sandbox/orders -H 'content-type: application/json' -d '{"brandId":1}'`,
		);
		console.log(
			`               brand health (publish "Marketplace: brand health band entered -> alert" first to get its mail to the brand manager):`,
		);
		console.log(
			`               curl -X POST ${sandbox.baseUrl}/_sandbox/brand-health/2/band -H 'content-type: application/json' -d '{"dimension":"DeliveryPerformance","band":"Critical"}'`,
		);
		console.log(
			`               (control API: ${sandbox.baseUrl}/_sandbox/..., see test/sandbox/README.md)`,
		);
	}
	console.log(`  data:        ${userFolder} (--fresh to start over)`);
	console.log('  Ctrl-C stops n8n, the sandbox and the mail catcher.');
	const seconds = (from: number, to: number) => ((to - from) / 1000).toFixed(1);
	const readyAt = Date.now();
	const parts =
		startedAt < bootAt
			? ` (installs or their checks and the build ${seconds(startedAt, bootAt)} s, then n8n and the demo ${seconds(bootAt, readyAt)} s)`
			: '';
	console.log(`[dev] ready in ${seconds(startedAt, readyAt)} s${parts}`);
}

if (require.main === module) {
	main().catch(async (e) => {
		console.error('[dev] failed:', e);
		process.exit(1);
	});
}

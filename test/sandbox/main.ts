import { startSandbox } from './index';
import type { SandboxOptions } from './options';

/** CLI: `npm run sandbox -- [--port 4010] [--quota 120] [--window 60] [--allow-http-loopback] [--state-file <path>]`. */
function parseArgs(argv: string[]): SandboxOptions {
	const options: SandboxOptions = { port: Number(process.env.SANDBOX_PORT ?? 4010) };
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		const value = () => {
			const v = Number(argv[++i]);
			if (!Number.isFinite(v)) throw new Error(`${arg} needs a number`);
			return v;
		};
		if (arg === '--port') options.port = value();
		else if (arg === '--host') options.host = argv[++i];
		else if (arg === '--quota') options.quota = value();
		else if (arg === '--window') options.windowSeconds = value();
		else if (arg === '--auth-fail-quota') options.authFailQuota = value();
		else if (arg === '--allow-http-loopback') options.allowHttpLoopback = true;
		else if (arg === '--seed') options.seed = value();
		else if (arg === '--state-file') options.stateFile = argv[++i];
		else throw new Error(`unknown option ${arg}`);
	}
	if (process.env.SANDBOX_ALLOW_HTTP_LOOPBACK === '1') options.allowHttpLoopback = true;
	return options;
}

async function main(): Promise<void> {
	const options = parseArgs(process.argv.slice(2));
	const sandbox = await startSandbox(options);
	console.log(`Marketplace sandbox listening on ${sandbox.baseUrl}`);
	console.log(`Demo API key: ${sandbox.demoApiKey}`);
	console.log(`Control API: ${sandbox.baseUrl}/_sandbox/info (see test/sandbox/README.md)`);
	if (options.allowHttpLoopback) {
		console.log(
			'WARNING: --allow-http-loopback is ON: webhook endpoints may use http:// and loopback addresses (local use only).',
		);
	}
	const stop = async () => {
		await sandbox.close();
		process.exit(0);
	};
	process.on('SIGINT', () => void stop());
	process.on('SIGTERM', () => void stop());
}

main().catch((error) => {
	console.error(error instanceof Error ? error.message : error);
	process.exit(1);
});

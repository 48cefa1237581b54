import { Expression } from 'n8n-workflow';

/** n8n 2.41.1's defaults for its vm expression engine (expression-engine config), as `n8n start` initialises it. */
export async function initN8nVmEngine(lazyAcquire = false): Promise<void> {
	await Expression.initExpressionEngine({
		engine: 'vm',
		poolSize: 1,
		maxCodeCacheSize: 1024,
		bridgeTimeout: 5000,
		bridgeMemoryLimit: 128,
		lazyAcquire,
	});
}

/**
 * Small helpers of the end-to-end suite: waiting, reading executions, timing steps.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import type { ExecutionSummary, N8nHandle, PublicApi } from './n8n';
import type { Json } from '../json';
import type { SandboxHandle } from '../sandbox';

export const sleep = async (ms: number) => await new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns something other than undefined. */
export async function waitFor<T>(
	what: string,
	fn: () => Promise<T | undefined>,
	timeoutMs = 30_000,
	everyMs = 200,
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	let lastError: unknown;
	while (Date.now() < deadline) {
		try {
			const v = await fn();
			if (v !== undefined) return v;
		} catch (e) {
			lastError = e;
		}
		await sleep(everyMs);
	}
	throw new Error(
		`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`,
	);
}

/** The JSON of the items a node output in an execution (first run, first output). */
export function nodeOutput(execution: { data?: Json }, nodeName: string, outputIndex = 0): Json[] {
	const runs = execution.data?.resultData?.runData?.[nodeName];
	if (!Array.isArray(runs) || runs.length === 0) return [];
	const items = runs[0]?.data?.main?.[outputIndex] ?? [];
	return (items as Array<{ json: unknown }>).map((i) => i.json);
}

/**
 * Finished executions of a trigger workflow split by whether the trigger node (`nodeName`) output
 * anything. Only those with output are runs: a copy of an event that already ran, and a catch-up check
 * that found nothing to catch up, start an execution whose trigger outputs nothing and after which no
 * node runs. Those are counted apart (`empty`) and reported, never as runs.
 */
export function splitRuns<T extends { data?: Json; stoppedAt?: unknown; mode?: unknown }>(
	executions: T[],
	nodeName: string,
): { runs: T[]; empty: T[] } {
	const ended = executions
		.filter((e) => e.stoppedAt && e.data?.resultData !== undefined)
		.sort((a, b) => Number((a as { id?: unknown }).id) - Number((b as { id?: unknown }).id));
	return {
		runs: ended.filter((e) => nodeOutput(e, nodeName).length > 0),
		empty: ended.filter((e) => nodeOutput(e, nodeName).length === 0),
	};
}

/** How many executions with no output, by mode (`webhook`: copies of events; `trigger`: checks), for the log. */
export function describeEmpty(empty: Array<{ mode?: unknown; status?: unknown }>): string {
	const byMode = new Map<string, number>();
	for (const e of empty) {
		const key = `${String(e.mode)}${e.status === 'success' ? '' : ` ${String(e.status)}`}`;
		byMode.set(key, (byMode.get(key) ?? 0) + 1);
	}
	return `${empty.length} (${[...byMode].map(([k, n]) => `${k}: ${n}`).join(', ') || 'none'})`;
}

/**
 * Webhook Endpoint > Test, as the Marketplace node sends it: one webhook.test delivery to the endpoint,
 * attempted once; returns the service's delivery record.
 */
export async function testDelivery(sandbox: SandboxHandle, endpointId: number): Promise<Json> {
	const res = await fetch(`${sandbox.baseUrl}/v1/webhook-endpoints/${endpointId}/test`, {
		method: 'POST',
		headers: { authorization: `Bearer ${sandbox.demoApiKey}`, 'idempotency-key': randomUUID() },
	});
	if (res.status >= 300) throw new Error(`test delivery: HTTP ${res.status} ${await res.text()}`);
	return (await res.json()) as Json;
}

/**
 * "Listen for test event" has registered its test endpoint (`/webhook-test/<webhookId>/`): asks the
 * service for a test delivery to it (Webhook Endpoint > Test); returns the endpoint's id.
 */
export async function testDeliveryWhileListening(
	sandbox: SandboxHandle,
	webhookId: string,
): Promise<number> {
	const endpoint = await waitFor('the test endpoint of the listening', async () =>
		(await sandbox.control.endpoints()).find((e) => e.url.includes(`/webhook-test/${webhookId}/`)),
	);
	await testDelivery(sandbox, endpoint.id);
	return endpoint.id;
}

/** Every finished execution of a workflow, with data, oldest first. */
export async function executionsOf(
	api: PublicApi,
	workflowId: string,
): Promise<ExecutionSummary[]> {
	const list = await api.listExecutions({ workflowId, includeData: true });
	// n8n 1.x can list a run as ended while its data is still the '[]' placeholder: such a run is not finished yet.
	return list
		.filter((e) => e.stoppedAt && e.data?.resultData !== undefined)
		.sort((a, b) => Number(a.id) - Number(b.id));
}

/** Step timings printed at the end of the suite. */
export class Timings {
	private readonly steps: Array<[string, number]> = [];

	async time<T>(label: string, fn: () => Promise<T>): Promise<T> {
		const t = Date.now();
		try {
			return await fn();
		} finally {
			this.steps.push([label, Date.now() - t]);
		}
	}

	add(label: string, ms: number): void {
		this.steps.push([label, ms]);
	}

	report(): string {
		return this.steps
			.map(([label, ms]) => `  ${(ms / 1000).toFixed(2).padStart(7)} s  ${label}`)
			.join('\n');
	}
}

/** An order whose delivery could not reach n8n; `createdAt` is the order's (a caught-up item carries it). */
export interface MissedOrder {
	orderId: number;
	eventId: string;
	createdAt: string;
}

/**
 * Creates `count` orders of `brandId` while nothing delivers to the trigger, and waits until the
 * service made each one's first delivery attempt; returns the orders and those first attempts.
 */
export async function ordersWhileDown(sandbox: SandboxHandle, brandId: number, count: number) {
	const missed: MissedOrder[] = [];
	for (let i = 0; i < count; i++) {
		const { order, event } = await sandbox.control.createOrder({ brandId });
		missed.push({
			orderId: order.id as number,
			eventId: String(event.id),
			createdAt: String(order.createdAt),
		});
	}
	// each event's deliveries (one per endpoint) have made their first attempt
	const firstAttempts = await waitFor('the first attempts', async () => {
		const deliveries = (await sandbox.control.deliveries()).filter((d) =>
			missed.some((m) => m.eventId === d.eventId),
		);
		const attempts = deliveries.map((d) => d.attemptLog[0]);
		return missed.every((m) => deliveries.some((d) => d.eventId === m.eventId)) &&
			attempts.every(Boolean)
			? attempts
			: undefined;
	});
	return { missed, firstAttempts };
}

/** Writes n8n's log to tmp/`log` in the checkout, then stops n8n and the sandbox (either may be missing when a boot failed). */
export async function stopKeepingLog(
	n8n: N8nHandle | undefined,
	sandbox: SandboxHandle | undefined,
	log: string,
): Promise<void> {
	if (n8n) {
		const tmp = join(resolve(__dirname, '..', '..'), 'tmp');
		mkdirSync(tmp, { recursive: true });
		writeFileSync(join(tmp, log), n8n.logs());
	}
	await n8n?.stop();
	await sandbox?.close();
}

/**
 * Shared by the action-node tests (not a test file): runs the real Marketplace node in n8n-core's
 * engine against a real sandbox over loopback HTTP, and reads what the sandbox received.
 */
import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { MarketplaceApi } from '../../credentials/MarketplaceApi.credentials';
import { Marketplace } from '../../nodes/Marketplace/Marketplace.node';
import { runNode, type RunNodeOptions, type RunNodeResult } from '../engine/harness';
import { startSandbox, type SandboxHandle, type SandboxOptions } from '../sandbox';
import type { LoggedRequest } from '../sandbox/requestLog';
import { startReceiver, type Receiver } from '../sandbox/testkit';

export const node = new Marketplace();
export const credentialType = new MarketplaceApi();

export interface RunOptions {
	inputItems?: INodeExecutionData[];
	continueOnFail?: boolean;
	/** "On Error: Continue (using error output)" and the like; the error output is `errorItems`. */
	onError?: RunNodeOptions['onError'];
	apiKey?: string;
	baseUrl?: string;
	/** the node's typeVersion (default: the newest) */
	typeVersion?: number;
	/** the run's mode (default manual, as the editor's Execute workflow) */
	mode?: RunNodeOptions['mode'];
	/** a real trigger as the start node instead of the test source (see runNode) */
	start?: RunNodeOptions['start'];
	/** a node between the start node and the Marketplace node (see runNode) */
	between?: RunNodeOptions['between'];
}

export interface Sent {
	method: string;
	path: string;
	rawQuery: string;
	body: unknown;
	authorization: string | undefined;
	idempotencyKey: string | undefined;
	requestId: string | undefined;
	status: number | null;
	dropped: boolean;
	replayed: boolean;
}

export function sentOf(entry: LoggedRequest): Sent {
	const header = (name: string) => {
		const v = entry.headers[name];
		return Array.isArray(v) ? v[0] : v;
	};
	return {
		method: entry.method,
		path: entry.path,
		rawQuery: entry.rawQuery,
		body: entry.body === '' ? undefined : JSON.parse(entry.body),
		authorization: header('authorization'),
		idempotencyKey: header('idempotency-key'),
		requestId: header('x-request-id'),
		status: entry.status,
		dropped: entry.dropped,
		replayed: entry.replayed,
	};
}

/** One sandbox for a test file; `run` executes the node and returns its result and the requests it caused. */
export class NodeFixture {
	sandbox!: SandboxHandle;

	constructor(private readonly options: SandboxOptions = {}) {}

	async start(): Promise<this> {
		this.sandbox = await startSandbox(this.options);
		return this;
	}

	async close(): Promise<void> {
		await this.sandbox?.close();
	}

	get control() {
		return this.sandbox.control;
	}

	get apiKey() {
		return this.sandbox.demoApiKey;
	}

	/** Runs the node; `sent` are the requests the sandbox received during the run, in order. */
	async run(
		parameters: INodeParameters,
		options: RunOptions = {},
	): Promise<
		RunNodeResult & { sent: Sent[]; items: INodeExecutionData[]; errorItems: INodeExecutionData[] }
	> {
		const before = (await this.control.requests()).at(-1)?.seq ?? 0;
		const result = await runNode({
			node,
			credentialTypes: [credentialType],
			credentials: {
				marketplaceApi: {
					baseUrl: options.baseUrl ?? this.sandbox.baseUrl,
					apiKey: options.apiKey ?? this.apiKey,
				},
			},
			parameters,
			inputItems: options.inputItems,
			continueOnFail: options.continueOnFail,
			onError: options.onError,
			typeVersion: options.typeVersion,
			mode: options.mode,
			start: options.start,
			between: options.between,
		});
		const sent = (await this.control.requests(before)).map(sentOf);
		return {
			...result,
			sent,
			items: result.outputs?.[0] ?? [],
			errorItems: result.outputs?.[1] ?? [],
		};
	}
}

/**
 * For a test file: a fixture whose sandbox may deliver to loopback URLs, and a webhook receiver there
 * answering 204, started before the file's tests and stopped after them.
 */
export function fixtureWithReceiver(): { fixture: NodeFixture; receiver: () => Receiver } {
	const fixture = new NodeFixture({ allowHttpLoopback: true });
	let receiver: Receiver | undefined;
	beforeAll(async () => {
		await fixture.start();
		receiver = await startReceiver(204);
	});
	afterAll(async () => {
		await receiver?.close();
		await fixture.close();
	});
	return { fixture, receiver: () => receiver! };
}

/** Items whose json is `json[i]`. */
export const items = (...json: IDataObject[]): INodeExecutionData[] =>
	json.map((j) => ({ json: j }));

/** The common checks of a read: GET, Bearer, no Idempotency-Key, an X-Request-Id. */
export function expectRead(sent: Sent, apiKey: string): void {
	expect(sent.method).toBe('GET');
	expect(sent.authorization).toBe(`Bearer ${apiKey}`);
	expect(sent.idempotencyKey).toBeUndefined();
	expect(sent.requestId).toEqual(expect.any(String));
	expect(sent.body).toBeUndefined();
}

/** The common checks of a write: Bearer, an Idempotency-Key, an X-Request-Id. */
export function expectWrite(sent: Sent, apiKey: string, method: string): void {
	expect(sent.method).toBe(method);
	expect(sent.authorization).toBe(`Bearer ${apiKey}`);
	expect(sent.idempotencyKey).toEqual(expect.any(String));
	expect(sent.idempotencyKey!.length).toBeGreaterThan(0);
	expect(sent.requestId).toEqual(expect.any(String));
}

/** All X-Request-Id values distinct. */
export function expectUniqueRequestIds(sent: Sent[]): void {
	const ids = sent.map((s) => s.requestId);
	expect(new Set(ids).size).toBe(ids.length);
}

/** pairedItem of every output item. */
export const pairs = (out: INodeExecutionData[]) =>
	out.map((i) => (i.pairedItem as { item: number }).item);

/** The error n8n recorded, as a plain object. */
export function errorOf(result: RunNodeResult): IDataObject {
	expect(result.error).toBeDefined();
	return result.error as unknown as IDataObject;
}

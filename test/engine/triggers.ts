/**
 * Trigger harnesses: webhook triggers (webhookMethods in n8n-core's HookContext, webhook() in
 * WebhookContext behind a real loopback HTTP server) and polling triggers (poll() in PollContext).
 *
 * Static data is kept like n8n keeps it in its database: a plain JSON object per workflow. Each
 * operation builds a fresh Workflow from a copy of it (as the CLI loads the workflow), and the
 * copy is written back only when n8n's ObservableObject flagged a change (`__dataChanged`), as
 * WorkflowStaticDataService.saveStaticData does.
 *
 * The "database" (static data, n8n's `processed_data` rows behind the data-deduplication helpers, and
 * the executions' unique `deduplicationKey`s) is a HarnessDatabase: one per harness unless harnesses
 * are given the same one, which models two n8n processes (main + webhook processor, two mains) on one
 * database.
 *
 * Runs a webhook or a trigger starts go through n8n-core's real WorkflowExecute with the start node
 * on the execution stack (as WorkflowExecutionService.runWorkflow / webhook-helpers'
 * prepareExecutionData build it), so a start node with an execute() method is executed with the
 * items it handed over, and its sendResponse() answers the HTTP request (responseMode 'responseNode').
 */
import { createHash } from 'node:crypto';
import { createGunzip, createInflate } from 'node:zlib';
import http, { validateHeaderName, validateHeaderValue } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse as parseQueryString } from 'node:querystring';
import type { Readable } from 'node:stream';

import { Container } from '@n8n/di';
import {
	DataDeduplicationService,
	ExecutionLifecycleHooks,
	getHtmlSandboxCSP,
	HookContext,
	isWebhookHtmlSandboxingDisabled,
	PollContext,
	PollTriggerExecutor,
	TriggerContext,
	TriggersAndPollers,
	WebhookContext,
	WorkflowExecute,
} from 'n8n-core';
import type {
	DeduplicationItemTypes,
	DeduplicationMode,
	DeduplicationScope,
	ExecutionError,
	ICheckProcessedContextData,
	ICheckProcessedOptions,
	ICredentialDataDecryptedObject,
	ICredentialType,
	IDataDeduplicator,
	IDataObject,
	IDeduplicationOutput,
	IExecuteResponsePromiseData,
	IHttpRequestMethods,
	INode,
	INodeExecutionData,
	INodeParameters,
	INodeType,
	IRun,
	ITriggerFunctions,
	ITriggerResponse,
	IVersionedNodeType,
	IWebhookData,
	IWebhookDescription,
	IWebhookResponseData,
	IWorkflowBase,
	IWorkflowExecuteAdditionalData,
	IWorkflowSettings,
	WebhookSetupMethodNames,
	WebhookType,
	WorkflowActivateMode,
	WorkflowExecuteMode,
} from 'n8n-workflow';
import { createRunExecutionData, jsonParse, UnexpectedError, Workflow } from 'n8n-workflow';

import { createCredentialsHelper, type HarnessCredentialsHelper } from './credentials';
import {
	createAdditionalData,
	ensureEngine,
	HarnessNodeTypes,
	jsonCopy,
	qualifiedTypeName,
} from './engine';
import { credentialsForNode } from './run-node';

export const TRIGGER_NODE_NAME = 'Trigger Under Test';
export const TRIGGER_NODE_ID = 'trigger-under-test-id';
export const WORKFLOW_ID = 'harness-trigger-workflow';

// ---------------------------------------------------------------------------------------------
// The database: static data, processed_data (data deduplication), executions' deduplication keys
// ---------------------------------------------------------------------------------------------

/** A `processed_data` row (n8n's ProcessedData entity; primary key workflowId + context). */
export interface ProcessedDataRow {
	workflowId: string;
	/** DeduplicationHelper.createContext: `n:<node id>` for scope 'node', '' for scope 'workflow'. */
	context: string;
	/** mode 'entries': base64 md5 hashes of the recorded values, oldest first. */
	value: { mode: DeduplicationMode; data: DeduplicationItemTypes[] | DeduplicationItemTypes };
}

/**
 * A database round trip: yields to the event loop like real I/O, so that concurrent
 * read-modify-write sequences interleave. (The real setImmediate, taken before a test can install
 * fake timers.)
 */
const realSetImmediate = setImmediate;
const roundTrip = async () => await new Promise<void>((resolve) => realSetImmediate(resolve));

/**
 * What the harness keeps in n8n's database. Give two harnesses the same one to model two n8n
 * processes on one database: they share the workflow's static data, the `processed_data` rows and
 * the unique execution deduplication keys (their node and workflow ids are the same).
 */
export class HarnessDatabase {
	/** The workflow's static data (`global`, `node:<name>` keys), as last saved. */
	workflowStaticData: IDataObject = {};
	/** `execution_entity.deduplicationKey` (a unique index over all executions, n8n ≥ 2.20). */
	readonly executionDeduplicationKeys = new Set<string>();
	private readonly processedData = new Map<string, ProcessedDataRow>();

	private static key(workflowId: string, context: string): string {
		return `${workflowId}\u0000${context}`;
	}

	/** The `processed_data` row (a copy), e.g. `processedDataRow('n:' + TRIGGER_NODE_ID)`. */
	processedDataRow(context: string, workflowId = WORKFLOW_ID): ProcessedDataRow | undefined {
		const row = this.processedData.get(HarnessDatabase.key(workflowId, context));
		return row && jsonCopy(row);
	}

	/** ProcessedDataRepository.findOne: a copy, as the ORM reads a fresh entity. */
	async findProcessedData(workflowId: string, context: string): Promise<ProcessedDataRow | null> {
		await roundTrip();
		return this.processedDataRow(context, workflowId) ?? null;
	}

	/** ProcessedDataRepository.insert: fails on the primary key like a real database. */
	async insertProcessedData(row: ProcessedDataRow): Promise<void> {
		await roundTrip();
		const key = HarnessDatabase.key(row.workflowId, row.context);
		if (this.processedData.has(key)) {
			throw new UnexpectedError(
				'SQLITE_CONSTRAINT: UNIQUE constraint failed: processed_data.context, processed_data.workflowId',
			);
		}
		this.processedData.set(key, jsonCopy(row));
	}

	/** ProcessedDataRepository.update({ workflowId, context }, row): no-op when the row is gone. */
	async updateProcessedData(row: ProcessedDataRow): Promise<void> {
		await roundTrip();
		const key = HarnessDatabase.key(row.workflowId, row.context);
		if (this.processedData.has(key)) this.processedData.set(key, jsonCopy(row));
	}

	async deleteProcessedData(workflowId: string, context: string): Promise<void> {
		await roundTrip();
		this.processedData.delete(HarnessDatabase.key(workflowId, context));
	}
}

/** DeduplicationHelper.createValueHash (n8n's CLI): md5, base64, of `value.toString()`. */
export function processedDataHash(value: DeduplicationItemTypes): string {
	return createHash('md5').update(value.toString()).digest('base64');
}

/** The database each Workflow the harnesses built belongs to (contextData.workflow is that Workflow). */
const workflowDatabases = new WeakMap<object, HarnessDatabase>();

/**
 * n8n's CLI DeduplicationHelper (dist/deduplication/deduplication-helper.js), mode 'entries', over a
 * HarnessDatabase instead of the `processed_data` table: one row per (workflow id, context), read,
 * changed and written back without a lock (as n8n does). The 'latest*' modes are not modelled.
 */
class HarnessDeduplicator implements IDataDeduplicator {
	private static context(
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
	): string {
		if (scope === 'node') {
			if (!contextData.node) {
				throw new UnexpectedError(
					"No node information has been provided and so cannot use scope 'node'",
				);
			}
			return `n:${contextData.node.id}`;
		}
		return '';
	}

	private static database(contextData: ICheckProcessedContextData): HarnessDatabase {
		const database = workflowDatabases.get(contextData.workflow);
		if (!database) {
			throw new UnexpectedError('Data deduplication used on a workflow no engine harness built');
		}
		return database;
	}

	private static entriesOnly(options: ICheckProcessedOptions): void {
		if (options.mode !== 'entries') {
			throw new UnexpectedError(
				`Deduplication mode "${options.mode}" is not modelled by the harness`,
			);
		}
	}

	async checkProcessedAndRecord(
		items: DeduplicationItemTypes[],
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
		options: ICheckProcessedOptions,
	): Promise<IDeduplicationOutput> {
		const context = HarnessDeduplicator.context(scope, contextData);
		if (!contextData.workflow.id) throw new UnexpectedError('The workflow has no id');
		const database = HarnessDeduplicator.database(contextData);
		const processedData = await database.findProcessedData(contextData.workflow.id, context);
		if (processedData && processedData.value.mode !== options.mode) {
			throw new UnexpectedError(
				'Deduplication data was originally saved with an incompatible setting of the ‘Keep Items Where’ parameter. Try ’Clean Database’ operation to reset.',
			);
		}
		HarnessDeduplicator.entriesOnly(options);
		// handleHashedItems
		const hashedItems = items.map(processedDataHash);
		if (!processedData) {
			if (options.maxEntries) hashedItems.splice(0, hashedItems.length - options.maxEntries);
			await database.insertProcessedData({
				workflowId: contextData.workflow.id,
				context,
				value: { mode: options.mode, data: hashedItems },
			});
			return { new: items, processed: [] };
		}
		const returnData: IDeduplicationOutput = { new: [], processed: [] };
		if (!Array.isArray(processedData.value.data)) return returnData;
		const data = processedData.value.data;
		const processedItemsSet = new Set(data);
		hashedItems.forEach((item, index) => {
			if (processedItemsSet.has(item)) {
				returnData.processed.push(items[index]);
			} else {
				returnData.new.push(items[index]);
				data.push(item);
			}
		});
		if (options.maxEntries) data.splice(0, data.length - options.maxEntries);
		await database.updateProcessedData(processedData);
		return returnData;
	}

	async removeProcessed(
		items: DeduplicationItemTypes[],
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
		options: ICheckProcessedOptions,
	): Promise<void> {
		HarnessDeduplicator.entriesOnly(options);
		const database = HarnessDeduplicator.database(contextData);
		const context = HarnessDeduplicator.context(scope, contextData);
		const processedData = await database.findProcessedData(contextData.workflow.id, context);
		if (!processedData || !Array.isArray(processedData.value.data)) return;
		const data = processedData.value.data;
		for (const hash of items.map(processedDataHash)) {
			const index = data.findIndex((value) => value === hash);
			if (index !== -1) data.splice(index, 1);
		}
		await database.updateProcessedData(processedData);
	}

	async clearAllProcessedItems(
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
	): Promise<void> {
		await HarnessDeduplicator.database(contextData).deleteProcessedData(
			contextData.workflow.id,
			HarnessDeduplicator.context(scope, contextData),
		);
	}

	async getProcessedDataCount(
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
		options: ICheckProcessedOptions,
	): Promise<number> {
		const processedData = await HarnessDeduplicator.database(contextData).findProcessedData(
			contextData.workflow.id,
			HarnessDeduplicator.context(scope, contextData),
		);
		return options.mode === 'entries' && Array.isArray(processedData?.value.data)
			? processedData.value.data.length
			: 0;
	}
}

let deduplicationReady = false;

/** DataDeduplicationService.init once per process (module registry), with the harness's deduplicator. */
function ensureDeduplication(): void {
	if (deduplicationReady) return;
	let initialised = true;
	try {
		DataDeduplicationService.getInstance();
	} catch {
		initialised = false;
	}
	if (initialised) {
		throw new UnexpectedError(
			'DataDeduplicationService was initialised outside the engine harness',
		);
	}
	// init() is async but sets the singleton synchronously (no await inside)
	void DataDeduplicationService.init(new HarnessDeduplicator());
	deduplicationReady = true;
}

interface TriggerBaseOptions {
	node: INodeType | IVersionedNodeType;
	credentialTypes: ICredentialType[];
	/** Decrypted credential data by credential type name. */
	credentials?: Record<string, ICredentialDataDecryptedObject>;
	parameters: INodeParameters;
	typeVersion?: number;
	nodeName?: string;
	/**
	 * Initial workflow static data (whole workflow, keys like `node:<name>`). With a shared `database`
	 * it replaces the database's static data; leave it out to keep what is there.
	 */
	workflowStaticData?: IDataObject;
	/** The database this harness's "n8n process" uses. Default: a new one for this harness. */
	database?: HarnessDatabase;
	/** The workflow's settings besides `executionOrder: 'v1'` (e.g. `engineType`). */
	workflowSettings?: IWorkflowSettings;
}

/** Shared plumbing: node, NodeTypes, credentials, persisted static data. */
class TriggerBase {
	readonly node: INode;
	readonly nodeTypes: HarnessNodeTypes;
	readonly credentialsHelper: HarnessCredentialsHelper;
	readonly database: HarnessDatabase;
	private readonly workflowSettings: IWorkflowSettings;

	constructor(opts: TriggerBaseOptions, webhookId?: string) {
		ensureEngine();
		this.workflowSettings = { executionOrder: 'v1', ...opts.workflowSettings };
		ensureDeduplication();
		this.database = opts.database ?? new HarnessDatabase();
		const typeName = qualifiedTypeName(opts.node);
		this.nodeTypes = new HarnessNodeTypes().add(typeName, opts.node);
		const typeVersion =
			opts.typeVersion ??
			('nodeVersions' in opts.node
				? opts.node.currentVersion
				: ([] as number[]).concat(opts.node.description.version).slice(-1)[0]);
		const nodeType = this.nodeTypes.getByNameAndVersion(typeName, typeVersion);
		this.node = {
			id: TRIGGER_NODE_ID,
			name: opts.nodeName ?? TRIGGER_NODE_NAME,
			type: typeName,
			typeVersion,
			position: [0, 0],
			parameters: opts.parameters,
			credentials: credentialsForNode(nodeType, opts.credentials),
			...(webhookId ? { webhookId } : {}),
		};
		this.credentialsHelper = createCredentialsHelper(opts.credentialTypes, opts.credentials ?? {});
		if (opts.workflowStaticData !== undefined) this.store = jsonCopy(opts.workflowStaticData);
	}

	/** The workflow's static data in the database. */
	protected get store(): IDataObject {
		return this.database.workflowStaticData;
	}

	protected set store(value: IDataObject) {
		this.database.workflowStaticData = value;
	}

	/**
	 * This node's `processed_data` row (data deduplication helpers), a copy; scope 'node' by default.
	 * Hashes are `processedDataHash(value)`.
	 */
	processedData(scope: DeduplicationScope = 'node'): ProcessedDataRow | undefined {
		return this.database.processedDataRow(scope === 'node' ? `n:${this.node.id}` : '');
	}

	get nodeType(): INodeType {
		return this.nodeTypes.getByNameAndVersion(this.node.type, this.node.typeVersion);
	}

	/** The node's persisted static data (`getWorkflowStaticData('node')`), as last saved. */
	get staticData(): IDataObject {
		const key = `node:${this.node.name}`;
		if (this.store[key] === undefined) this.store[key] = {};
		return this.store[key] as IDataObject;
	}

	/** Replace the node's persisted static data, e.g. `{}` to simulate "static data lost". */
	set staticData(value: IDataObject) {
		this.store[`node:${this.node.name}`] = jsonCopy(value);
	}

	/** The whole workflow's persisted static data (`global` and `node:<name>` keys). */
	get workflowStaticData(): IDataObject {
		return this.store;
	}

	set workflowStaticData(value: IDataObject) {
		this.store = jsonCopy(value);
	}

	/** A Workflow as the CLI builds it from the database, with a copy of the saved static data. */
	protected loadWorkflow(): Workflow {
		const workflow = new Workflow({
			id: WORKFLOW_ID,
			name: 'Engine harness trigger workflow',
			nodes: [this.node],
			connections: {},
			nodeTypes: this.nodeTypes,
			staticData: jsonCopy(this.store),
			settings: this.workflowSettings,
			active: true,
		});
		workflowDatabases.set(workflow, this.database);
		return workflow;
	}

	/**
	 * WorkflowStaticDataService.saveStaticData: persist only when n8n flagged a change, then clear
	 * the flag (which matters for a Workflow that lives on: an active trigger's, a shared poll's).
	 */
	protected saveStaticData(workflow: Workflow): boolean {
		const data = workflow.staticData as IDataObject;
		if (data.__dataChanged !== true) return false;
		const saved = jsonCopy(data);
		delete saved.__dataChanged;
		for (const value of Object.values(saved)) {
			if (value && typeof value === 'object') delete (value as IDataObject).__dataChanged;
		}
		this.store = saved;
		data.__dataChanged = false;
		return true;
	}
}

// ---------------------------------------------------------------------------------------------
// Webhook triggers
// ---------------------------------------------------------------------------------------------

export interface TriggerHarnessOptions extends TriggerBaseOptions {
	/**
	 * Base URL `getNodeWebhookUrl` builds on (n8n's WEBHOOK_URL + `/webhook`). Default: the
	 * harness's own server, `http://127.0.0.1:<port>/webhook`. The server answers on its own
	 * address whatever this is, so a proxy or tunnel in front of it can be tested.
	 */
	webhookBaseUrl?: string;
	/** The node's webhookId (first URL segment). Default: a fixed UUID. */
	webhookId?: string;
	/** Name in `description.webhooks` to serve and manage. Default 'default'. */
	webhookName?: WebhookType;
}

export interface WebhookRequestRecord {
	method: string;
	path: string;
	headers: http.IncomingHttpHeaders;
	rawBody: Buffer;
	/** 'webhook' for production URLs, 'manual' for /webhook-test URLs. */
	mode: WorkflowExecuteMode;
}

export interface WebhookResponseRecord {
	status: number;
	headers: http.OutgoingHttpHeaders;
	/** Parsed JSON when the body is JSON, else the text. */
	body: unknown;
	text: string;
	/** deliver() only: no response within `timeoutMs` (status 0) — n8n left the request open. */
	timedOut?: boolean;
}

export interface DeliverOptions {
	method?: IHttpRequestMethods;
	/** Use the test URL (`/webhook-test/...`, execution mode 'manual'). */
	test?: boolean;
	/** Deliver to this URL instead of `webhookUrl`. */
	url?: string;
	/**
	 * Give up after this long and return `{ status: 0, timedOut: true }` (a 'responseNode' run that
	 * never calls sendResponse leaves the request open in n8n). Default: wait.
	 */
	timeoutMs?: number;
}

/**
 * What n8n resolves a run's response promise with when the run ended without sendResponse
 * (n8n's webhooks/constants.js EXECUTION_ENDED_WITHOUT_RESPONSE): setupResponseNodePromise then
 * writes nothing, and a trigger's emit(responsePromise) gets this object.
 */
export const EXECUTION_ENDED_WITHOUT_RESPONSE: IDataObject = Object.freeze({});

/** One run of the workflow (the start node only: the harness's workflow has no other node). */
export interface HarnessExecution {
	id: string;
	/** What started it: a webhook request, or the trigger's emit. */
	source: 'webhook' | 'trigger';
	/** 'webhook' (production URL), 'manual' (test URL) or 'trigger' (emit). */
	mode: WorkflowExecuteMode;
	/** The start node's input: webhook()'s `workflowData`, or the emitted data. */
	input: INodeExecutionData[][];
	/**
	 * The start node's output (n8n's runData of the node). null when it produced none: execute()
	 * failed, or was not called because the input had no item (WorkflowExecute.runNode skips a node
	 * with execute() whose first input is empty).
	 */
	output: INodeExecutionData[][] | null;
	/** The node's error (taskData.error) or else the workflow's (resultData.error). */
	error?: ExecutionError;
	/** What the run sent with `sendResponse` first (later calls are ignored, as in n8n). */
	response?: IExecuteResponsePromiseData;
	/** emit()'s 4th argument. */
	deduplicationKey?: string;
	/**
	 * The run changed the workflow's static data (n8n would save it after a non-manual run,
	 * overwriting what was saved meanwhile). The harness does not save it and records an error.
	 */
	staticDataChanged: boolean;
	/** n8n-core's IRun; absent for a webhook run the harness did not execute (see `executions`). */
	run?: IRun;
}

type ResponseDeferred = {
	promise: Promise<IExecuteResponsePromiseData>;
	resolve: (response: IExecuteResponsePromiseData) => void;
};

function responseDeferred(): ResponseDeferred {
	let resolve!: (response: IExecuteResponsePromiseData) => void;
	const promise = new Promise<IExecuteResponsePromiseData>((r) => (resolve = r));
	return { promise, resolve };
}

/**
 * WebhookResponseHeaders.fromObject(headers).applyToResponse(res) + applySandboxCSP(res) (n8n's
 * webhooks/webhook-response-headers.js): names lower-cased, protected and invalid headers dropped,
 * and — like `Object.entries(undefined)` there — a TypeError when `headers` is missing.
 */
function applyWebhookResponseHeaders(res: http.ServerResponse, headers: unknown): void {
	const protectedHeaders = [
		'content-security-policy',
		'strict-transport-security',
		'clear-site-data',
	];
	const valid = new Map<string, string>();
	for (const [name, value] of Object.entries(headers as IDataObject)) {
		const lowerName = name.toLowerCase();
		if (protectedHeaders.includes(lowerName)) continue;
		try {
			validateHeaderName(lowerName);
			validateHeaderValue(lowerName, String(value));
		} catch {
			continue;
		}
		valid.set(lowerName, String(value));
	}
	if (valid.size) res.setHeaders(valid);
	if (!isWebhookHtmlSandboxingDisabled())
		res.setHeader('Content-Security-Policy', getHtmlSandboxCSP());
}

type ExpressLikeResponse = http.ServerResponse & {
	status(code: number): ExpressLikeResponse;
	set(field: string | Record<string, string>, value?: string): ExpressLikeResponse;
	header(field: string, value: string): ExpressLikeResponse;
	type(contentType: string): ExpressLikeResponse;
	send(body?: unknown): ExpressLikeResponse;
	json(body: unknown): ExpressLikeResponse;
	sendStatus(code: number): ExpressLikeResponse;
};

/** The subset of express.Response nodes use, on top of Node's ServerResponse. */
function expressLike(res: http.ServerResponse): ExpressLikeResponse {
	const r = res as ExpressLikeResponse;
	r.status = (code) => {
		r.statusCode = code;
		return r;
	};
	r.set = (field, value) => {
		if (typeof field === 'string') r.setHeader(field, value ?? '');
		else for (const [k, v] of Object.entries(field)) r.setHeader(k, v);
		return r;
	};
	r.header = (field, value) => r.set(field, value);
	r.type = (contentType) =>
		r.set('content-type', contentType.includes('/') ? contentType : `application/${contentType}`);
	r.json = (body) => {
		if (!r.getHeader('content-type'))
			r.setHeader('content-type', 'application/json; charset=utf-8');
		r.end(JSON.stringify(body));
		return r;
	};
	r.send = (body) => {
		if (body === undefined || body === null) {
			r.end();
		} else if (Buffer.isBuffer(body)) {
			if (!r.getHeader('content-type')) r.setHeader('content-type', 'application/octet-stream');
			r.end(body);
		} else if (typeof body === 'object') {
			return r.json(body);
		} else {
			if (!r.getHeader('content-type')) r.setHeader('content-type', 'text/html; charset=utf-8');
			r.end(String(body));
		}
		return r;
	};
	r.sendStatus = (code) => {
		r.statusCode = code;
		r.setHeader('content-type', 'text/plain; charset=utf-8');
		r.end(http.STATUS_CODES[code] ?? String(code));
		return r;
	};
	return r;
}

function toRecord(
	status: number,
	headers: http.OutgoingHttpHeaders,
	text: string,
): WebhookResponseRecord {
	let body: unknown = text;
	try {
		body = text.length ? JSON.parse(text) : text;
	} catch {
		// not JSON
	}
	return { status, headers, body, text };
}

async function readRawBody(req: http.IncomingMessage): Promise<Buffer> {
	let stream: Readable = req;
	const encoding = req.headers['content-encoding'];
	if (encoding === 'gzip') stream = req.pipe(createGunzip());
	else if (encoding === 'deflate') stream = req.pipe(createInflate());
	const chunks: Buffer[] = [];
	for await (const chunk of stream)
		chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
	return Buffer.concat(chunks);
}

export class TriggerHarness extends TriggerBase {
	/**
	 * Items of the runs that produced items, in the order they finished: the start node's output,
	 * for runs the harness executes (the node has execute(), or responseMode 'responseNode', or the
	 * run came from trigger()'s emit) when it output at least one item; for other webhook runs (a
	 * node without execute(), whose output n8n passes through unchanged) webhook()'s `workflowData`,
	 * recorded as the request is answered, as before.
	 */
	readonly runs: INodeExecutionData[][][] = [];
	/** Every run started (webhook or emit), in the order they started; see HarnessExecution. */
	readonly executions: HarnessExecution[] = [];
	/** emit() calls whose deduplication key an execution already had: no run started (n8n ≥ 2.20). */
	readonly duplicateEmits: Array<{ data: INodeExecutionData[][]; deduplicationKey: string }> = [];
	/** What the trigger reported through emitError() / saveFailedExecution(). */
	readonly triggerErrors: Array<{ kind: 'emitError' | 'saveFailedExecution'; error: Error }> = [];
	/** Every response the harness server sent, in order. */
	readonly responses: WebhookResponseRecord[] = [];
	/** Every request the harness server received, in order. */
	readonly requests: WebhookRequestRecord[] = [];
	/**
	 * Errors thrown by webhook() (n8n answers 500 for them), errors writing a run's response, and
	 * a run's static data change in mode 'webhook' or 'trigger' (the node must not write static data
	 * inside an execution), in order.
	 */
	readonly errors: Error[] = [];

	private server!: http.Server;
	private origin = '';
	private readonly webhookName: WebhookType;
	private readonly baseUrlOverride?: string;
	private readonly waiters: Array<{ done: () => boolean; resolve: () => void }> = [];
	private readonly inFlight = new Set<Promise<unknown>>();
	private readonly inFlightIds = new Set<string>();
	private triggerResponse?: ITriggerResponse;
	/** The Workflow trigger() and poll() run on while the workflow is active. */
	private activeWorkflow?: Workflow;
	private executionCount = 0;

	constructor(opts: TriggerHarnessOptions) {
		super(opts, opts.webhookId ?? '5f0c7a3e-1b2d-4c5e-9f80-a1b2c3d4e5f6');
		this.webhookName = opts.webhookName ?? 'default';
		this.baseUrlOverride = opts.webhookBaseUrl?.replace(/\/$/, '');
		if (!this.webhookDescription) {
			throw new UnexpectedError(`Node type has no webhook named "${this.webhookName}"`);
		}
	}

	async listen(): Promise<this> {
		this.server = http.createServer((req, res) => {
			void this.track(this.handle(req, expressLike(res))).catch((error: Error) => {
				this.errors.push(error);
				if (!res.headersSent) res.writeHead(500).end();
			});
		});
		await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
		this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
		return this;
	}

	/** Stops the trigger (if started) and the server. Runs still in flight are not awaited. */
	async close(): Promise<void> {
		await this.stopTrigger();
		this.server.closeAllConnections();
		await new Promise<void>((resolve) => this.server.close(() => resolve()));
	}

	/** The port the harness's own server listens on (what a proxy in front of it forwards to). */
	get listenPort(): number {
		return Number(new URL(this.origin).port);
	}

	get webhookBaseUrl(): string {
		return this.baseUrlOverride ?? `${this.origin}/webhook`;
	}

	get webhookTestBaseUrl(): string {
		return this.webhookBaseUrl.replace(/\/webhook$/, '/webhook-test');
	}

	/** The production URL the node sees from `getNodeWebhookUrl('default')`. */
	get webhookUrl(): string {
		return this.urlFor(false);
	}

	/** The test URL (`/webhook-test/...`) the node sees in manual activation. */
	get testWebhookUrl(): string {
		return this.urlFor(true);
	}

	private get webhookDescription(): IWebhookDescription | undefined {
		return this.descriptionOf(this.webhookName);
	}

	private descriptionOf(name: WebhookType): IWebhookDescription | undefined {
		return this.nodeType.description.webhooks?.find((w) => w.name === name);
	}

	private urlFor(isTest: boolean): string {
		const workflow = this.loadWorkflow();
		const context = new HookContext(
			workflow,
			this.node,
			this.additionalData(),
			isTest ? 'manual' : 'trigger',
			isTest ? 'manual' : 'activate',
			this.webhookData(workflow, this.additionalData(), isTest),
		);
		const url = context.getNodeWebhookUrl(this.webhookName);
		if (!url) throw new UnexpectedError('The node has no webhook URL');
		return url;
	}

	private additionalData(
		extra: Partial<IWorkflowExecuteAdditionalData> = {},
	): IWorkflowExecuteAdditionalData {
		const data = createAdditionalData({
			credentialsHelper: this.credentialsHelper,
			webhookBaseUrl: this.webhookBaseUrl,
			webhookTestBaseUrl: this.webhookTestBaseUrl,
			workflowId: WORKFLOW_ID,
			executionId: extra.executionId,
		});
		return Object.assign(data, extra);
	}

	private httpMethods(workflow: Workflow): string[] {
		const description = this.webhookDescription!;
		const methods = workflow.expression.getSimpleParameterValue(
			this.node,
			description.httpMethod,
			'internal',
			{},
			undefined,
			'GET',
		);
		return String(methods)
			.split(',')
			.map((m) => m.trim().toUpperCase())
			.filter(Boolean);
	}

	/** IWebhookData as WebhookService.getNodeWebhooks builds it. */
	private webhookData(
		workflow: Workflow,
		additionalData: IWorkflowExecuteAdditionalData,
		isTest: boolean,
		httpMethod?: string,
		name: WebhookType = this.webhookName,
	): IWebhookData {
		const description = this.descriptionOf(name)!;
		let path = String(
			workflow.expression.getSimpleParameterValue(this.node, description.path, 'internal', {}),
		);
		path = path.replace(/^\//, '').replace(/\/$/, '');
		return {
			httpMethod: (httpMethod ?? this.httpMethods(workflow)[0] ?? 'POST') as IHttpRequestMethods,
			node: this.node.name,
			path,
			webhookDescription: description,
			workflowId: WORKFLOW_ID,
			workflowExecuteAdditionalData: additionalData,
			webhookId: this.node.webhookId,
			isTest,
		};
	}

	/** Run one of `webhookMethods[name]` in n8n-core's HookContext, as WebhookService.runWebhookMethod. */
	private async runWebhookMethod(
		method: WebhookSetupMethodNames,
		activation: WorkflowActivateMode,
		name: WebhookType = this.webhookName,
	): Promise<boolean | undefined> {
		const fn = (
			this.nodeType.webhookMethods as
				| Record<string, Record<string, (this: unknown) => Promise<boolean>>>
				| undefined
		)?.[name]?.[method];
		if (fn === undefined) return undefined;
		const workflow = this.loadWorkflow();
		const isTest = activation === 'manual';
		const additionalData = this.additionalData();
		const context = new HookContext(
			workflow,
			this.node,
			additionalData,
			isTest ? 'manual' : 'trigger',
			activation,
			this.webhookData(workflow, additionalData, isTest, undefined, name),
		);
		try {
			return (await fn.call(context)) as boolean;
		} finally {
			this.saveStaticData(workflow);
		}
	}

	/** `webhookMethods.default.checkExists` (activation default 'activate'; 'manual' = test webhook). */
	async checkExists(activation: WorkflowActivateMode = 'activate'): Promise<boolean> {
		return (await this.runWebhookMethod('checkExists', activation)) === true;
	}

	async create(activation: WorkflowActivateMode = 'activate'): Promise<boolean | undefined> {
		return await this.runWebhookMethod('create', activation);
	}

	/** `delete` of every webhook of the node, in description order, as n8n's deactivation; default's answer. */
	async delete(activation: WorkflowActivateMode = 'activate'): Promise<boolean | undefined> {
		let answer: boolean | undefined;
		for (const name of this.webhookNames()) {
			const result = await this.runWebhookMethod('delete', activation, name);
			if (name === this.webhookName) answer = result;
		}
		return answer;
	}

	/**
	 * WebhookService.createWebhookIfNotExists for every webhook of the node, in description order, as
	 * n8n's activation and test listening do: checkExists, then create when it returned false.
	 */
	async activate(activation: WorkflowActivateMode = 'activate'): Promise<void> {
		for (const name of this.webhookNames())
			if ((await this.runWebhookMethod('checkExists', activation, name)) !== true)
				await this.runWebhookMethod('create', activation, name);
	}

	/** The node's webhook names, the served one first when the description has no order for it. */
	private webhookNames(): WebhookType[] {
		const names = (this.nodeType.description.webhooks ?? []).map((w) => w.name);
		return names.includes(this.webhookName) ? names : [this.webhookName, ...names];
	}

	/** Post a request to the webhook URL over real HTTP. */
	async deliver(
		body: Buffer | string | IDataObject,
		headers: Record<string, string> = {},
		opts: DeliverOptions = {},
	): Promise<WebhookResponseRecord> {
		const payload = Buffer.isBuffer(body) || typeof body === 'string' ? body : JSON.stringify(body);
		const hasContentType = Object.keys(headers).some((h) => h.toLowerCase() === 'content-type');
		try {
			const response = await fetch(
				opts.url ?? (opts.test ? this.testWebhookUrl : this.webhookUrl),
				{
					method: opts.method ?? 'POST',
					headers: {
						...(hasContentType || Buffer.isBuffer(body) || typeof body === 'string'
							? {}
							: { 'content-type': 'application/json' }),
						...headers,
					},
					body: opts.method === 'GET' || opts.method === 'HEAD' ? undefined : payload,
					signal: opts.timeoutMs === undefined ? undefined : AbortSignal.timeout(opts.timeoutMs),
				},
			);
			const text = await response.text();
			return toRecord(response.status, Object.fromEntries(response.headers.entries()), text);
		} catch (error) {
			if ((error as Error).name !== 'TimeoutError') throw error;
			return { status: 0, headers: {}, body: '', text: '', timedOut: true };
		}
	}

	/** Resolves once `count` runs (with items) have been recorded. */
	async waitForRuns(count: number, timeoutMs = 5000): Promise<void> {
		await this.waitFor(
			() => this.runs.length >= count,
			() => `Timed out waiting for ${count} runs (got ${this.runs.length})`,
			timeoutMs,
		);
	}

	/** Resolves once `count` runs have finished. */
	async waitForExecutions(count: number, timeoutMs = 5000): Promise<void> {
		const finished = () => this.executions.filter((e) => !this.inFlightIds.has(e.id));
		await this.waitFor(
			() => finished().length >= count,
			() => `Timed out waiting for ${count} executions (got ${finished().length})`,
			timeoutMs,
		);
	}

	/** Resolves when nothing the harness started (requests, runs) is in flight. */
	async settled(): Promise<void> {
		while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
	}

	private async waitFor(done: () => boolean, message: () => string, timeoutMs: number) {
		if (done()) return;
		await new Promise<void>((resolve, reject) => {
			const waiter = {
				done,
				resolve: () => {
					clearTimeout(timer);
					resolve();
				},
			};
			const timer = setTimeout(() => {
				this.waiters.splice(this.waiters.indexOf(waiter), 1);
				reject(new Error(message()));
			}, timeoutMs);
			this.waiters.push(waiter);
		});
	}

	private notify(): void {
		for (const waiter of this.waiters.filter((w) => w.done())) {
			this.waiters.splice(this.waiters.indexOf(waiter), 1);
			waiter.resolve();
		}
	}

	private track<T>(promise: Promise<T>): Promise<T> {
		this.inFlight.add(promise);
		const done = () => this.inFlight.delete(promise);
		promise.then(done, done);
		return promise;
	}

	private recordRun(items: INodeExecutionData[][]): void {
		this.runs.push(items);
		this.notify();
	}

	/**
	 * One run through n8n-core's WorkflowExecute, as WorkflowRunner runs it: a Workflow loaded from
	 * the database (the static data as saved), the start node on the execution stack with `input`
	 * as its data, and lifecycle hooks whose 'sendResponse' resolves `responsePromise` (n8n's
	 * ActiveExecutions.resolveResponsePromise) and which, when the run ends, resolve it with
	 * EXECUTION_ENDED_WITHOUT_RESPONSE (a no-op if the run responded).
	 */
	private async execute(
		source: HarnessExecution['source'],
		mode: WorkflowExecuteMode,
		input: INodeExecutionData[][],
		opts: {
			responsePromise?: { resolve(response: IExecuteResponsePromiseData): void };
			deduplicationKey?: string;
		} = {},
	): Promise<HarnessExecution> {
		const executionId = `harness-execution-${++this.executionCount}`;
		const execution: HarnessExecution = {
			id: executionId,
			source,
			mode,
			input,
			output: null,
			staticDataChanged: false,
			...(opts.deduplicationKey !== undefined ? { deduplicationKey: opts.deduplicationKey } : {}),
		};
		this.executions.push(execution);
		this.inFlightIds.add(executionId);
		try {
			const workflow = this.loadWorkflow();
			const workflowData = {
				id: WORKFLOW_ID,
				name: workflow.name,
				active: true,
				isArchived: false,
				nodes: [this.node],
				connections: {},
				settings: { executionOrder: 'v1' },
				createdAt: new Date(),
				updatedAt: new Date(),
			} as IWorkflowBase;
			const hooks = new ExecutionLifecycleHooks(mode, executionId, workflowData);
			let responded = false;
			hooks.addHandler('sendResponse', (response: IExecuteResponsePromiseData) => {
				if (responded) return;
				responded = true;
				execution.response = response;
				opts.responsePromise?.resolve(response);
			});
			let newStaticData: IDataObject | undefined;
			let resolveFinished!: (run: IRun) => void;
			const finished = new Promise<IRun>((resolve) => (resolveFinished = resolve));
			hooks.addHandler('workflowExecuteAfter', (run: IRun, staticData?: IDataObject) => {
				newStaticData = staticData;
				resolveFinished(run);
			});
			const additionalData = this.additionalData({ executionId });
			additionalData.hooks = hooks;
			const runExecutionData = createRunExecutionData({
				executionData: {
					nodeExecutionStack: [{ node: this.node, data: { main: input }, source: null }],
				},
			});
			await new WorkflowExecute(additionalData, mode, runExecutionData).processRunExecutionData(
				workflow,
			);
			const run = await finished;
			execution.run = run;
			const task = run.data.resultData.runData[this.node.name]?.[0];
			execution.output = (task?.data?.main as INodeExecutionData[][] | undefined) ?? null;
			const error = task?.error ?? run.data.resultData.error;
			if (error) execution.error = error;
			// hookFunctionsSave (hookFunctionsSaveWorker in queue mode) saves `newStaticData` whole after
			// every run but a manual one, over whatever was saved meanwhile
			if (newStaticData !== undefined && mode !== 'manual') {
				execution.staticDataChanged = this.saveStaticData(workflow);
			}
			if (execution.output?.some((items) => items?.length)) this.recordRun(execution.output);
			return execution;
		} finally {
			opts.responsePromise?.resolve(EXECUTION_ENDED_WITHOUT_RESPONSE);
			this.inFlightIds.delete(executionId);
			this.notify();
		}
	}

	/**
	 * webhook-helpers' setupResponseNodePromise: a Buffer body is written straight to the response
	 * (status, headers, CSP, end); any other body goes through the webhook's responseCallback, which
	 * answers (WebhookRequestHandler.sendLegacyResponse) unless webhook() already returned
	 * `noWebhookResponse: true` — then that callback's promise is settled and only the
	 * `process.nextTick(() => res.end())` happens: an empty 200.
	 */
	private setupResponseNodePromise(
		promise: Promise<IExecuteResponsePromiseData>,
		res: ExpressLikeResponse,
		callbackSettled: boolean,
	): void {
		void promise.then((response) => {
			if (response === EXECUTION_ENDED_WITHOUT_RESPONSE) return;
			const { body, headers, statusCode } = response as {
				body?: unknown;
				headers?: unknown;
				statusCode?: number;
			};
			try {
				if (Buffer.isBuffer(body)) {
					if (statusCode) res.status(statusCode);
					applyWebhookResponseHeaders(res, headers);
					res.end(body);
				} else if (!callbackSettled) {
					if (statusCode !== undefined) res.status(statusCode);
					if (headers) applyWebhookResponseHeaders(res, headers);
					if (typeof body === 'string') res.send(body);
					else res.json(body);
				}
			} catch (error) {
				this.errors.push(error as Error);
				// n8n: responseCallback(error) — a 500 if the callback was still open, else nothing
				if (!callbackSettled && !res.headersSent) {
					res.status(500).json({ code: 0, message: (error as Error).message });
				}
				return;
			}
			process.nextTick(() => {
				if (!res.writableEnded) res.end();
			});
		});
	}

	// -------------------------------------------------------------------------------------------
	// trigger()
	// -------------------------------------------------------------------------------------------

	/**
	 * Activates the node's non-webhook triggers as n8n does (n8n-core ActiveWorkflowTriggers
	 * startTriggers): its trigger(), if it has one, through n8n-core's TriggersAndPollers.runTriggerFunction
	 * with a TriggerContext (mode 'trigger') whose emit is TriggerExecutionContextFactory's (`emitOf`);
	 * then, if it has a poll(), the poll n8n makes at activation (`poll`). The static data is saved
	 * after each, as n8n saves it when the activation ends.
	 */
	async startTrigger(
		activation: WorkflowActivateMode = 'activate',
	): Promise<ITriggerResponse | undefined> {
		if (this.triggerResponse) throw new UnexpectedError('The trigger is already started');
		const workflow = (this.activeWorkflow = this.loadWorkflow());
		const emit = this.emitOf(workflow);
		const response = this.nodeType.trigger
			? await this.runTrigger(workflow, emit, activation)
			: undefined;
		this.saveStaticData(workflow);
		this.triggerResponse = response ?? {};
		// n8n starts a node's trigger(), then its poll(), whose first poll it makes at once
		if (this.nodeType.poll) await this.poll(activation, true);
		// n8n saves the static data when the activation ends
		this.saveStaticData(workflow);
		return response;
	}

	private async runTrigger(
		workflow: Workflow,
		emit: ITriggerFunctions['emit'],
		activation: WorkflowActivateMode,
	): Promise<ITriggerResponse | undefined> {
		return await Container.get(TriggersAndPollers).runTriggerFunction(
			workflow,
			this.node,
			(wf, node, additionalData, mode, act) =>
				new TriggerContext(
					wf,
					node,
					additionalData,
					mode,
					act,
					emit,
					(error) => this.triggerErrors.push({ kind: 'emitError', error }),
					(error) =>
						this.triggerErrors.push({ kind: 'saveFailedExecution', error: error as Error }),
				),
			this.additionalData(),
			'trigger',
			activation,
		);
	}

	/**
	 * One poll of the node, as n8n polls an active workflow's poll node: n8n-core's PollTriggerExecutor
	 * with a PollContext (mode 'trigger') on the same Workflow as trigger() (n8n activates a node's
	 * trigger() and poll() on one Workflow). What it emits starts a run as trigger()'s emit does; what
	 * it throws is the trigger's error (emitError), or at activation (`atActivation`) the activation's.
	 */
	async poll(activation: WorkflowActivateMode = 'activate', atActivation = false): Promise<void> {
		const workflow = (this.activeWorkflow ??= this.loadWorkflow());
		const emit = this.emitOf(workflow);
		const context = new PollContext(
			workflow,
			this.node,
			this.additionalData(),
			'trigger',
			activation,
			(data: INodeExecutionData[][]) => emit(data),
			(error: Error) => this.triggerErrors.push({ kind: 'emitError', error }),
		);
		const run = Container.get(PollTriggerExecutor).create(workflow, this.node, context, () => true);
		try {
			await run(atActivation);
		} catch (error) {
			this.triggerErrors.push({ kind: 'emitError', error: error as Error });
		}
	}

	/** A parameter of the node as n8n reads it when it activates the workflow (expressions resolved). */
	nodeParameter(name: string): unknown {
		const workflow = this.loadWorkflow();
		return new PollContext(
			workflow,
			this.node,
			this.additionalData(),
			'trigger',
			'activate',
		).getNodeParameter(name);
	}

	/**
	 * TriggerExecutionContextFactory's emit: save the trigger Workflow's static data (that Workflow
	 * lives as long as the trigger), then run the start node with the emitted data (mode 'trigger')
	 * unless an execution already has the emit's deduplication key (recorded in `duplicateEmits`).
	 */
	private emitOf(workflow: Workflow): ITriggerFunctions['emit'] {
		return (data, responsePromise, donePromise, deduplicationKey) => {
			this.saveStaticData(workflow);
			void this.track(
				(async () => {
					if (deduplicationKey !== undefined) {
						if (this.database.executionDeduplicationKeys.has(deduplicationKey)) {
							this.duplicateEmits.push({ data, deduplicationKey });
							donePromise?.resolve(undefined as unknown as IRun);
							return;
						}
						this.database.executionDeduplicationKeys.add(deduplicationKey);
					}
					const execution = await this.execute('trigger', 'trigger', data, {
						deduplicationKey,
						...(responsePromise ? { responsePromise } : {}),
					});
					donePromise?.resolve(execution.run!);
				})().catch((error: Error) => {
					this.errors.push(error);
				}),
			);
		};
	}

	/** Deactivation: the closeFunction trigger() returned (n8n-core wraps it in the Workflow's isolate). */
	async stopTrigger(): Promise<void> {
		const response = this.triggerResponse;
		this.triggerResponse = undefined;
		this.activeWorkflow = undefined;
		await response?.closeFunction?.();
	}

	private async handle(req: http.IncomingMessage, res: ExpressLikeResponse): Promise<void> {
		// Capture what goes out, whoever writes it (the node itself or the harness).
		const chunks: Buffer[] = [];
		const write = res.write.bind(res) as (...args: unknown[]) => boolean;
		const end = res.end.bind(res) as (...args: unknown[]) => http.ServerResponse;
		res.write = ((chunk: unknown, ...rest: unknown[]) => {
			if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') {
				chunks.push(Buffer.from(chunk as string));
			}
			return write(chunk, ...rest);
		}) as typeof res.write;
		res.end = ((chunk?: unknown, ...rest: unknown[]) => {
			if (res.writableEnded) return end(chunk, ...rest);
			if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') {
				chunks.push(Buffer.from(chunk as string));
			}
			const result = end(chunk, ...rest);
			this.responses.push(
				toRecord(res.statusCode, res.getHeaders(), Buffer.concat(chunks).toString()),
			);
			return result;
		}) as typeof res.end;

		const url = new URL(req.url ?? '/', this.origin);
		const method = (req.method ?? 'GET').toUpperCase();
		let rawBody: Buffer;
		try {
			rawBody = await readRawBody(req);
		} catch (error) {
			res.status(400).json({ code: 400, message: (error as Error).message });
			return;
		}

		const isTest = url.pathname.startsWith('/webhook-test/');
		const mode: WorkflowExecuteMode = isTest ? 'manual' : 'webhook';
		this.requests.push({ method, path: url.pathname, headers: req.headers, rawBody, mode });

		const workflow = this.loadWorkflow();
		const expectedPath = new URL(isTest ? this.testWebhookUrl : this.webhookUrl).pathname;
		const methods = this.httpMethods(workflow);
		if (url.pathname !== expectedPath || !methods.includes(method)) {
			res.status(404).json({
				code: 404,
				message: `The requested webhook "${method} ${url.pathname.replace(/^\/webhook(-test)?\//, '')}" is not registered.`,
				hint: "The workflow must be active for a production URL to run successfully. You can activate the workflow using the toggle in the top-right of the editor. Note that unlike test URL calls, production URL calls aren't shown on the canvas (only in the executions list)",
			});
			return;
		}

		// What n8n's rawBodyReader + parseBody middlewares attach to the request.
		const contentTypeHeader = req.headers['content-type'] ?? '';
		const [contentType, ...params] = contentTypeHeader.split(';').map((p) => p.trim());
		const charset = params.find((p) => p.toLowerCase().startsWith('charset='))?.split('=')[1];
		const encoding = (charset?.toLowerCase() ?? 'utf-8') as BufferEncoding;
		const request = req as http.IncomingMessage & IDataObject;
		request.rawBody = rawBody;
		request.readRawBody = async () => {};
		request.contentType = contentType?.toLowerCase() || undefined;
		request.encoding = encoding;
		request.query = parseQueryString(url.search.replace(/^\?/, ''));
		request.params = {};
		request.body = {};
		if (rawBody.length) {
			try {
				const ct = request.contentType as string | undefined;
				if (ct === 'application/json') request.body = jsonParse(rawBody.toString(encoding));
				else if (ct === 'application/x-www-form-urlencoded')
					request.body = parseQueryString(rawBody.toString(encoding), undefined, undefined, {
						maxKeys: 1000,
					});
				else if (ct === 'text/plain')
					request.body = rawBody.toString(encoding) as unknown as IDataObject;
			} catch (error) {
				res.status(422).json({
					code: 422,
					message: 'Failed to parse request body',
					hint: (error as Error).message,
				});
				return;
			}
		}

		const additionalData = this.additionalData({
			httpRequest: request as never,
			httpResponse: res as never,
		});
		const webhookData = this.webhookData(workflow, additionalData, isTest, method);
		const context = new WebhookContext(
			workflow,
			this.node,
			additionalData,
			mode,
			webhookData,
			[],
			null,
		);

		let result: IWebhookResponseData;
		try {
			result = (await this.nodeType.webhook!.call(context)) as IWebhookResponseData;
		} catch (error) {
			this.errors.push(error as Error);
			this.saveStaticData(workflow);
			if (!res.headersSent) {
				res
					.status(500)
					.json({ code: 0, message: 'Workflow Webhook Error: Workflow could not be started!' });
			}
			return;
		}
		// LiveWebhooks saves the workflow's static data in its response callback. n8n 2.41.1 calls it
		// before WorkflowRunner.run() when the node answered itself or starts no run; otherwise after
		// run(), whose new Workflow resets the changed flag, so nothing the node changed is saved.
		const savedBeforeRun = result.noWebhookResponse === true || result.workflowData === undefined;
		if (savedBeforeRun) this.saveStaticData(workflow);

		// handleImmediateWebhookResponse + the onReceived response of executeWebhook.
		const description = this.webhookDescription!;
		const responseCode = Number(
			workflow.expression.getSimpleParameterValue(
				this.node,
				description.responseCode as string,
				mode,
				{},
				undefined,
				200,
			),
		);
		const responseMode = String(
			workflow.expression.getSimpleParameterValue(
				this.node,
				description.responseMode as string,
				mode,
				{},
				undefined,
				'onReceived',
			),
		);
		const responseData = workflow.expression.getComplexParameterValue(
			this.node,
			description.responseData as string,
			mode,
			{},
			undefined,
			'firstEntryJson',
		);
		const responded = result.noWebhookResponse === true || res.headersSent || res.writableEnded;

		if (result.workflowData === undefined) {
			if (!responded) {
				res
					.status(responseCode)
					.send(
						result.webhookResponse !== undefined
							? result.webhookResponse
							: { message: 'Webhook call received' },
					);
			}
			return;
		}

		const workflowData = result.workflowData;
		// The start node's output is its input unless it has execute() (WorkflowExecute.runNode), so
		// only then, or when its execute() answers ('responseNode'), does the harness run the engine.
		const runsEngine =
			responseMode === 'responseNode' || typeof this.nodeType.execute === 'function';
		if (!runsEngine) {
			this.executions.push({
				id: `harness-execution-${++this.executionCount}`,
				source: 'webhook',
				mode,
				input: workflowData,
				output: workflowData,
				staticDataChanged: false,
			});
			this.recordRun(workflowData);
		}

		if (responseMode === 'responseNode') {
			const responsePromise = responseDeferred();
			let didSendResponse = responded;
			void responsePromise.promise.then((response) => {
				if (response !== EXECUTION_ENDED_WITHOUT_RESPONSE) didSendResponse = true;
			});
			this.setupResponseNodePromise(responsePromise.promise, res, responded);
			const execution = await this.execute('webhook', mode, workflowData, { responsePromise });
			await Promise.resolve();
			if (didSendResponse) return;
			// executeWebhook's handler of the finished run, when nothing was sent yet
			if (execution.error) {
				res.status(500).json({ message: 'Error in workflow' });
			} else {
				// responseCallback(null, { data: undefined, responseCode }) → res.json(undefined)
				res.status(responseCode).type('json').end();
			}
			return;
		}

		const run = runsEngine ? this.execute('webhook', mode, workflowData) : undefined;
		if (!responded) {
			if (responseMode !== 'onReceived') {
				// lastNode mode answers with the last node's data: not modelled by the harness.
				res.status(500).json({
					code: 0,
					message: `Response mode "${responseMode}" is not supported by the engine harness`,
				});
			} else if (responseData === 'noData') {
				// extractWebhookOnReceivedResponse: the description's responseData (default
				// 'firstEntryJson', sent as it is) wins over the node's webhookResponse unless it is empty
				res.status(responseCode).end();
			} else if (responseData) {
				res.status(responseCode).send(responseData);
			} else if (result.webhookResponse !== undefined) {
				res.status(responseCode).send(result.webhookResponse);
			} else {
				res.status(responseCode).send({ message: 'Workflow was started' });
			}
		}
		await run;
	}
}

/** Start a webhook-trigger harness (its HTTP server listens on 127.0.0.1, random port). */
export async function createTriggerHarness(opts: TriggerHarnessOptions): Promise<TriggerHarness> {
	return await new TriggerHarness(opts).listen();
}

// ---------------------------------------------------------------------------------------------
// Polling triggers
// ---------------------------------------------------------------------------------------------

export interface PollHarnessOptions extends TriggerBaseOptions {
	/**
	 * Trigger-mode polls share one Workflow, as n8n 2.41.1 polls an active workflow: one Expression
	 * object, so overlapping polls share its expression isolate. Default: a Workflow per poll.
	 */
	shareWorkflow?: boolean;
	/**
	 * Polls as n8n 2.41.1's durable poll scheduler runs them (`N8N_SCHEDULER_ENABLED`,
	 * `N8N_SCHEDULER_POLL_TRIGGERS_ENABLED`, `N8N_POLLER_DURABLE_CURSORS_ENABLED`;
	 * `TriggerExecutionContextFactory.getExecutePollFunctions` in n8n's server): the node's static data
	 * is a copy of the committed cursor (seeded once from the node's static data), committed with the
	 * poll's emission or, when it emits nothing, alone, but never after the activation's poll; the
	 * workflow's static data is saved as before. `pollBudgetMs` is what `getPollBudgetMs()` answers.
	 */
	durable?: { pollBudgetMs: number };
}

export class PollHarness extends TriggerBase {
	/** Items each trigger-mode poll emitted (what would start a run). */
	readonly emitted: INodeExecutionData[][][] = [];
	private readonly shareWorkflow: boolean;
	private activeWorkflow?: Workflow;
	private readonly durable?: { pollBudgetMs: number };
	/** The durable scheduler's committed cursor (its `poller_state` row), once created. */
	cursor?: IDataObject;

	constructor(opts: PollHarnessOptions) {
		super(opts);
		this.shareWorkflow = opts.shareWorkflow === true;
		this.durable = opts.durable;
	}

	/** The durable scheduler's staging scope of one poll: what the node reads and what gets committed. */
	private durableCursor(workflow: Workflow) {
		let snapshot: IDataObject = {};
		let seed: IDataObject = {};
		const take = () => {
			if (JSON.stringify(snapshot) === JSON.stringify(seed)) return;
			this.cursor = jsonCopy(snapshot);
			seed = jsonCopy(snapshot);
		};
		return {
			runPoll: async <T>(poll: () => Promise<T>): Promise<T> => {
				this.cursor ??= jsonCopy(workflow.getStaticData('node', this.node) as IDataObject);
				seed = jsonCopy(this.cursor);
				snapshot = jsonCopy(this.cursor);
				return await poll();
			},
			resolve: () => snapshot,
			take,
		};
	}

	/**
	 * One poll.
	 * - 'trigger': as an active workflow polls — PollContext(mode 'trigger', activation), run by
	 *   n8n-core's PollTriggerExecutor; static data changes are saved afterwards.
	 * - 'manual': as "Fetch test event"/"Execute workflow" does — WorkflowExecute.executePollNode's
	 *   PollContext(mode 'manual', activation 'manual'); n8n does not save static data of manual
	 *   executions, so changes are discarded.
	 */
	async poll(
		mode: 'manual' | 'trigger' = 'trigger',
		activation: WorkflowActivateMode = mode === 'manual' ? 'manual' : 'activate',
		/** the poll n8n makes when it activates the workflow (PollTriggerExecutor's testingTrigger) */
		atActivation = false,
	): Promise<INodeExecutionData[][] | null> {
		const workflow =
			mode === 'trigger' && this.shareWorkflow
				? (this.activeWorkflow ??= this.loadWorkflow())
				: this.loadWorkflow();
		const additionalData = createAdditionalData({
			credentialsHelper: this.credentialsHelper,
			workflowId: WORKFLOW_ID,
		});
		if (mode === 'manual') {
			const context = new PollContext(workflow, this.node, additionalData, 'manual', activation);
			return (await this.nodeType.poll!.call(context)) ?? null;
		}

		let emitted: INodeExecutionData[][] | null = null;
		let emittedError: Error | undefined;
		const staged = this.durable ? this.durableCursor(workflow) : undefined;
		const context = new PollContext(
			workflow,
			this.node,
			additionalData,
			'trigger',
			activation,
			(data: INodeExecutionData[][]) => {
				staged?.take();
				emitted = data;
				this.emitted.push(data);
			},
			(error: Error) => {
				emittedError = error;
			},
			staged && (async () => staged.take()),
			staged?.runPoll,
			staged?.resolve,
			this.durable && (() => this.durable!.pollBudgetMs),
		);
		const run = Container.get(PollTriggerExecutor).create(workflow, this.node, context, () => true);
		try {
			await run(atActivation);
		} catch (error) {
			// at activation n8n throws the poll's error (the activation fails) instead of emitting it
			emittedError = error as Error;
		}
		this.saveStaticData(workflow);
		if (emittedError) throw emittedError;
		return emitted;
	}
}

export function createPollHarness(opts: PollHarnessOptions): PollHarness {
	return new PollHarness(opts);
}

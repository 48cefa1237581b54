/**
 * Trigger harnesses: webhook triggers (webhookMethods in n8n-core's HookContext, webhook() in
 * WebhookContext behind a real loopback HTTP server) and polling triggers (poll() in PollContext).
 *
 * Static data is kept like n8n keeps it in its database: a plain JSON object per workflow. Each
 * operation builds a fresh Workflow from a copy of it (as the CLI loads the workflow), and the
 * copy is written back only when n8n's ObservableObject flagged a change (`__dataChanged`), as
 * WorkflowStaticDataService.saveStaticData does.
 */
import { createGunzip, createInflate } from 'node:zlib';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse as parseQueryString } from 'node:querystring';
import type { Readable } from 'node:stream';

import { Container } from '@n8n/di';
import { HookContext, PollContext, PollTriggerExecutor, WebhookContext } from 'n8n-core';
import type {
	ICredentialDataDecryptedObject,
	ICredentialType,
	IDataObject,
	IHttpRequestMethods,
	INode,
	INodeExecutionData,
	INodeParameters,
	INodeType,
	IVersionedNodeType,
	IWebhookData,
	IWebhookDescription,
	IWebhookResponseData,
	IWorkflowExecuteAdditionalData,
	WebhookSetupMethodNames,
	WebhookType,
	WorkflowActivateMode,
	WorkflowExecuteMode,
} from 'n8n-workflow';
import { jsonParse, UnexpectedError, Workflow } from 'n8n-workflow';

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
const WORKFLOW_ID = 'harness-trigger-workflow';

interface TriggerBaseOptions {
	node: INodeType | IVersionedNodeType;
	credentialTypes: ICredentialType[];
	/** Decrypted credential data by credential type name. */
	credentials?: Record<string, ICredentialDataDecryptedObject>;
	parameters: INodeParameters;
	typeVersion?: number;
	nodeName?: string;
	/** Initial workflow static data (whole workflow, keys like `node:<name>`). */
	workflowStaticData?: IDataObject;
}

/** Shared plumbing: node, NodeTypes, credentials, persisted static data. */
class TriggerBase {
	readonly node: INode;
	readonly nodeTypes: HarnessNodeTypes;
	readonly credentialsHelper: HarnessCredentialsHelper;
	protected store: IDataObject;

	constructor(opts: TriggerBaseOptions, webhookId?: string) {
		ensureEngine();
		const typeName = qualifiedTypeName(opts.node);
		this.nodeTypes = new HarnessNodeTypes().add(typeName, opts.node);
		const typeVersion =
			opts.typeVersion ??
			('nodeVersions' in opts.node
				? opts.node.currentVersion
				: ([] as number[]).concat(opts.node.description.version).slice(-1)[0]);
		const nodeType = this.nodeTypes.getByNameAndVersion(typeName, typeVersion);
		this.node = {
			id: 'trigger-under-test-id',
			name: opts.nodeName ?? TRIGGER_NODE_NAME,
			type: typeName,
			typeVersion,
			position: [0, 0],
			parameters: opts.parameters,
			credentials: credentialsForNode(nodeType, opts.credentials),
			...(webhookId ? { webhookId } : {}),
		};
		this.credentialsHelper = createCredentialsHelper(opts.credentialTypes, opts.credentials ?? {});
		this.store = jsonCopy(opts.workflowStaticData ?? {});
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
		return new Workflow({
			id: WORKFLOW_ID,
			name: 'Engine harness trigger workflow',
			nodes: [this.node],
			connections: {},
			nodeTypes: this.nodeTypes,
			staticData: jsonCopy(this.store),
			settings: { executionOrder: 'v1' },
			active: true,
		});
	}

	/** WorkflowStaticDataService.saveStaticData: persist only when n8n flagged a change. */
	protected saveStaticData(workflow: Workflow): boolean {
		const data = workflow.staticData as IDataObject;
		if (data.__dataChanged !== true) return false;
		const saved = jsonCopy(data);
		delete saved.__dataChanged;
		for (const value of Object.values(saved)) {
			if (value && typeof value === 'object') delete (value as IDataObject).__dataChanged;
		}
		this.store = saved;
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
}

export interface DeliverOptions {
	method?: IHttpRequestMethods;
	/** Use the test URL (`/webhook-test/...`, execution mode 'manual'). */
	test?: boolean;
	/** Deliver to this URL instead of `webhookUrl`. */
	url?: string;
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
	/** Items of every run the webhook started (`workflowData`), in order. */
	readonly runs: INodeExecutionData[][][] = [];
	/** Every response the harness server sent, in order. */
	readonly responses: WebhookResponseRecord[] = [];
	/** Every request the harness server received, in order. */
	readonly requests: WebhookRequestRecord[] = [];
	/** Errors thrown by webhook(), in order (n8n answers 500 for them). */
	readonly errors: Error[] = [];

	private server!: http.Server;
	private origin = '';
	private readonly webhookName: WebhookType;
	private readonly baseUrlOverride?: string;
	private readonly waiters: Array<{ count: number; resolve: () => void }> = [];

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
			void this.handle(req, expressLike(res));
		});
		await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
		this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
		return this;
	}

	async close(): Promise<void> {
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
		return this.nodeType.description.webhooks?.find((w) => w.name === this.webhookName);
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
	): IWebhookData {
		const description = this.webhookDescription!;
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
	): Promise<boolean | undefined> {
		const fn = (
			this.nodeType.webhookMethods as
				| Record<string, Record<string, (this: unknown) => Promise<boolean>>>
				| undefined
		)?.[this.webhookName]?.[method];
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
			this.webhookData(workflow, additionalData, isTest),
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

	async delete(activation: WorkflowActivateMode = 'activate'): Promise<boolean | undefined> {
		return await this.runWebhookMethod('delete', activation);
	}

	/** WebhookService.createWebhookIfNotExists: checkExists, then create when it returned false. */
	async activate(activation: WorkflowActivateMode = 'activate'): Promise<void> {
		if (!(await this.checkExists(activation))) await this.create(activation);
	}

	/** Post a request to the webhook URL over real HTTP. */
	async deliver(
		body: Buffer | string | IDataObject,
		headers: Record<string, string> = {},
		opts: DeliverOptions = {},
	): Promise<WebhookResponseRecord> {
		const payload = Buffer.isBuffer(body) || typeof body === 'string' ? body : JSON.stringify(body);
		const hasContentType = Object.keys(headers).some((h) => h.toLowerCase() === 'content-type');
		const response = await fetch(opts.url ?? (opts.test ? this.testWebhookUrl : this.webhookUrl), {
			method: opts.method ?? 'POST',
			headers: {
				...(hasContentType || Buffer.isBuffer(body) || typeof body === 'string'
					? {}
					: { 'content-type': 'application/json' }),
				...headers,
			},
			body: opts.method === 'GET' || opts.method === 'HEAD' ? undefined : payload,
		});
		const text = await response.text();
		return toRecord(response.status, Object.fromEntries(response.headers.entries()), text);
	}

	/** Resolves once `count` runs have been recorded. */
	async waitForRuns(count: number, timeoutMs = 5000): Promise<void> {
		if (this.runs.length >= count) return;
		await new Promise<void>((resolve, reject) => {
			const timer = setTimeout(
				() => reject(new Error(`Timed out waiting for ${count} runs (got ${this.runs.length})`)),
				timeoutMs,
			);
			this.waiters.push({
				count,
				resolve: () => {
					clearTimeout(timer);
					resolve();
				},
			});
		});
	}

	private recordRun(items: INodeExecutionData[][]): void {
		this.runs.push(items);
		for (const waiter of this.waiters.filter((w) => this.runs.length >= w.count)) {
			this.waiters.splice(this.waiters.indexOf(waiter), 1);
			waiter.resolve();
		}
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

		this.recordRun(result.workflowData);
		if (responded) return;
		if (responseMode !== 'onReceived') {
			// lastNode / responseNode modes need the downstream workflow; the harness does not run it.
			res.status(500).json({
				code: 0,
				message: `Response mode "${responseMode}" is not supported by the engine harness`,
			});
			return;
		}
		// extractWebhookOnReceivedResponse: the description's responseData (default 'firstEntryJson',
		// sent as it is) wins over the node's webhookResponse unless it is empty
		if (responseData === 'noData') {
			res.status(responseCode).end();
		} else if (responseData) {
			res.status(responseCode).send(responseData);
		} else if (result.webhookResponse !== undefined) {
			res.status(responseCode).send(result.webhookResponse);
		} else {
			res.status(responseCode).send({ message: 'Workflow was started' });
		}
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
			runPoll: async (poll: () => Promise<unknown>) => {
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

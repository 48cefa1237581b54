/**
 * The minimum an n8n server provides around n8n-core's execution engine:
 * the DI container, a NodeTypes registry, and IWorkflowExecuteAdditionalData.
 *
 * Nothing here re-implements engine behaviour: parameter resolution, credential
 * lookup, request helpers, paired items and error recording all stay inside
 * n8n-core / n8n-workflow.
 */
import 'reflect-metadata';

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { Container } from '@n8n/di';
import { ExternalSecretsProxy, InstanceSettings } from 'n8n-core';
import type {
	IDataObject,
	INodeType,
	INodeTypes,
	IVersionedNodeType,
	IWorkflowExecuteAdditionalData,
	IWorkflowSettings,
} from 'n8n-workflow';
import { NodeHelpers, UnexpectedError } from 'n8n-workflow';

import type { HarnessCredentialsHelper } from './credentials';

let engineReady = false;

/**
 * Prepares the DI container once per process. n8n-core's node execution contexts
 * read InstanceSettings (and the Logger) from the container; both construct
 * themselves from environment config, so we only point the n8n user folder at a
 * throw-away directory so that nothing is written to ~/.n8n, and silence its logger.
 */
export function ensureEngine(): void {
	if (engineReady) return;
	if (!process.env.N8N_USER_FOLDER) {
		process.env.N8N_USER_FOLDER = mkdtempSync(path.join(tmpdir(), 'n8n-engine-harness-'));
	}
	// n8n's Logger (used by ErrorReporter for every node error) prints to the console;
	// keep test output quiet unless asked: N8N_LOG_LEVEL=debug to see it.
	if (!process.env.N8N_LOG_LEVEL) process.env.N8N_LOG_LEVEL = 'silent';
	Container.get(InstanceSettings);
	engineReady = true;
}

/** Package-qualified type names, as n8n registers community nodes. */
export const PACKAGE_PREFIX = 'n8n-nodes-marketplace-management';

export function qualifiedTypeName(nodeType: INodeType | IVersionedNodeType): string {
	const name = nodeType.description.name;
	return name.includes('.') ? name : `${PACKAGE_PREFIX}.${name}`;
}

/**
 * The registry n8n's CLI builds from loaded packages (packages/cli/src/node-types.ts),
 * reduced to the types a test hands in.
 */
export class HarnessNodeTypes implements INodeTypes {
	private readonly types = new Map<string, INodeType | IVersionedNodeType>();

	add(typeName: string, nodeType: INodeType | IVersionedNodeType): this {
		this.types.set(typeName, nodeType);
		return this;
	}

	getByName(nodeType: string): INodeType | IVersionedNodeType {
		const found = this.types.get(nodeType);
		if (!found) throw new UnexpectedError(`Unknown node type: ${nodeType}`);
		return found;
	}

	getByNameAndVersion(nodeType: string, version?: number): INodeType {
		return NodeHelpers.getVersionedNodeType(this.getByName(nodeType), version);
	}

	getKnownTypes(): IDataObject {
		return {};
	}
}

export interface AdditionalDataOptions {
	credentialsHelper: HarnessCredentialsHelper;
	/** Base of production webhook URLs, e.g. `http://127.0.0.1:5678/webhook`. */
	webhookBaseUrl?: string;
	/** Base of test (manual) webhook URLs, e.g. `http://127.0.0.1:5678/webhook-test`. */
	webhookTestBaseUrl?: string;
	executionId?: string;
	workflowId?: string;
	workflowSettings?: IWorkflowSettings;
}

function notInHarness(what: string): never {
	throw new UnexpectedError(`${what} is not available in the engine test harness`);
}

/**
 * The equivalent of packages/cli/src/workflow-execute-additional-data.ts `getBase()`:
 * URLs, the credentials helper, and stubs for what a plain node never reaches
 * (sub-workflows, task runners, AI agents).
 */
export function createAdditionalData(opts: AdditionalDataOptions): IWorkflowExecuteAdditionalData {
	const webhookBaseUrl = opts.webhookBaseUrl ?? 'http://127.0.0.1:5678/webhook';
	const instanceBaseUrl = webhookBaseUrl.replace(/\/webhook\/?$/, '/');
	const webhookTestBaseUrl =
		opts.webhookTestBaseUrl ?? webhookBaseUrl.replace(/\/webhook\/?$/, '/webhook-test');
	const additionalData: IWorkflowExecuteAdditionalData = {
		credentialsHelper: opts.credentialsHelper,
		executeWorkflow: async () => notInHarness('executeWorkflow'),
		getRunExecutionData: async () => undefined,
		getRuntimeCredential: async () => undefined,
		executionId: opts.executionId,
		workflowId: opts.workflowId,
		currentNodeExecutionIndex: 0,
		restApiUrl: `${instanceBaseUrl}rest`,
		instanceBaseUrl,
		formBaseUrl: `${instanceBaseUrl}form`,
		formWaitingBaseUrl: `${instanceBaseUrl}form-waiting`,
		formTestBaseUrl: `${instanceBaseUrl}form-test`,
		webhookBaseUrl,
		webhookWaitingBaseUrl: `${instanceBaseUrl}webhook-waiting`,
		webhookTestBaseUrl,
		mcpBaseUrl: `${instanceBaseUrl}mcp`,
		mcpTestBaseUrl: `${instanceBaseUrl}mcp-test`,
		variables: {},
		logAiEvent: () => {},
		startRunnerTask: async () => notInHarness('startRunnerTask'),
		externalSecretsProxy: Container.get(ExternalSecretsProxy),
		workflowSettings: opts.workflowSettings,
	};
	return additionalData;
}

/** Deep copy through JSON, as static data round-trips through the database in n8n. */
export function jsonCopy<T>(value: T): T {
	return JSON.parse(JSON.stringify(value ?? {})) as T;
}

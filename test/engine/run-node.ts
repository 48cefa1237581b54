/**
 * runNode: execute one node type in a real two-node workflow with n8n-core's WorkflowExecute,
 * the way n8n's own NodeTestHarness (packages/core/nodes-testing/node-test-harness.ts) does:
 * a real Workflow, ExecutionLifecycleHooks, and WorkflowExecute.processRunExecutionData.
 */
import { ExecutionLifecycleHooks, WorkflowExecute } from 'n8n-core';
import type {
	ExecutionError,
	ICredentialDataDecryptedObject,
	ICredentialType,
	IConnections,
	IExecuteFunctions,
	INode,
	INodeExecutionData,
	INodeParameters,
	INodeType,
	IRun,
	IRunData,
	IVersionedNodeType,
	IWorkflowBase,
	WorkflowExecuteMode,
} from 'n8n-workflow';
import { createRunExecutionData, Workflow } from 'n8n-workflow';

import { createCredentialsHelper, type HarnessCredentialsHelper } from './credentials';
import { createAdditionalData, ensureEngine, HarnessNodeTypes, qualifiedTypeName } from './engine';

export const SOURCE_NODE_NAME = 'Source';
export const SOURCE_NODE_TYPE = 'n8n-nodes-marketplace-management-test.itemsSource';
export const NODE_UNDER_TEST_NAME = 'Node Under Test';

/**
 * Test-only start node: emits the items stored in its `items` parameter
 * (a JSON string, so n8n's parameter resolution leaves it untouched).
 */
export const itemsSourceNode: INodeType = {
	description: {
		displayName: 'Items Source (test)',
		name: SOURCE_NODE_TYPE,
		group: ['trigger'],
		version: 1,
		description: 'Emits the given items',
		defaults: { name: SOURCE_NODE_NAME },
		inputs: [],
		outputs: ['main'],
		properties: [{ displayName: 'Items', name: 'items', type: 'string', default: '[]' }],
	} as INodeType['description'],
	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = JSON.parse(this.getNodeParameter('items', 0) as string) as INodeExecutionData[];
		return [items];
	},
};

export interface RunNodeOptions {
	node: INodeType | IVersionedNodeType;
	credentialTypes: ICredentialType[];
	/** Decrypted credential data by credential type name. */
	credentials?: Record<string, ICredentialDataDecryptedObject>;
	parameters: INodeParameters;
	/** Items the source node emits into the node under test. Default: one empty item. */
	inputItems?: INodeExecutionData[];
	/** Sets `continueOnFail: true` and `onError: 'continueRegularOutput'` on the node. */
	continueOnFail?: boolean;
	/** Alternative to continueOnFail: the exact `onError` setting. */
	onError?: INode['onError'];
	typeVersion?: number;
	/** Execution mode of the run. Default 'manual' (what "Execute workflow" in the editor uses). */
	mode?: WorkflowExecuteMode;
	/** Node name of the node under test. Default 'Node Under Test'. */
	nodeName?: string;
	/** Reuse a credentials helper (e.g. to inspect `requested`). */
	credentialsHelper?: HarnessCredentialsHelper;
	/**
	 * A real node type as the start node instead of the test source (a trigger, as n8n runs it in a
	 * manual execution): a poll node is polled by WorkflowExecute; a webhook node passes on `data`,
	 * as n8n hands it what its webhook() returned. `inputItems` is then ignored.
	 */
	start?: StartNode;
	/** A node between the start node and the node under test (e.g. one that drops paired items). */
	between?: { node: INodeType; name: string; parameters?: INodeParameters };
}

export interface StartNode {
	node: INodeType | IVersionedNodeType;
	name: string;
	parameters?: INodeParameters;
	/** the items a webhook start node received (its webhook() output) */
	data?: INodeExecutionData[];
}

export interface RunNodeResult {
	/** Outputs of the node under test (one array per output), or null if it produced none. */
	outputs: INodeExecutionData[][] | null;
	/** The error n8n recorded for the node under test (taskData.error), if any. */
	error?: ExecutionError;
	/** Workflow-level error (resultData.error), set when the execution failed. */
	workflowError?: ExecutionError;
	runData: IRunData;
	run: IRun;
	/** The INode that ran (parameters as given, credentials, settings). */
	nodeUnderTest: INode;
	nodeExecutionOrder: string[];
}

function defaultTypeVersion(nodeType: INodeType | IVersionedNodeType): number {
	if ('nodeVersions' in nodeType) return nodeType.currentVersion;
	const version = nodeType.description.version;
	return Array.isArray(version) ? version[version.length - 1] : version;
}

export function credentialsForNode(
	nodeType: INodeType,
	credentials: Record<string, ICredentialDataDecryptedObject> | undefined,
): INode['credentials'] {
	const declared = new Set((nodeType.description.credentials ?? []).map((c) => c.name));
	const entries = Object.keys(credentials ?? {})
		.filter((name) => declared.has(name))
		.map((name) => [name, { id: `harness-${name}`, name: `${name} (harness)` }] as const);
	return entries.length ? Object.fromEntries(entries) : undefined;
}

export async function runNode(opts: RunNodeOptions): Promise<RunNodeResult> {
	ensureEngine();
	const typeName = qualifiedTypeName(opts.node);
	const typeVersion = opts.typeVersion ?? defaultTypeVersion(opts.node);
	const nodeTypes = new HarnessNodeTypes()
		.add(SOURCE_NODE_TYPE, itemsSourceNode)
		.add(typeName, opts.node);
	const versioned = nodeTypes.getByNameAndVersion(typeName, typeVersion);
	const nodeName = opts.nodeName ?? NODE_UNDER_TEST_NAME;

	let sourceNode: INode = {
		id: 'source-node-id',
		name: SOURCE_NODE_NAME,
		type: SOURCE_NODE_TYPE,
		typeVersion: 1,
		position: [0, 0],
		parameters: { items: JSON.stringify(opts.inputItems ?? [{ json: {} }]) },
	};
	if (opts.start) {
		const startType = qualifiedTypeName(opts.start.node);
		nodeTypes.add(startType, opts.start.node);
		const startVersion = defaultTypeVersion(opts.start.node);
		sourceNode = {
			id: 'start-node-id',
			name: opts.start.name,
			type: startType,
			typeVersion: startVersion,
			position: [0, 0],
			parameters: opts.start.parameters ?? {},
			credentials: credentialsForNode(
				nodeTypes.getByNameAndVersion(startType, startVersion),
				opts.credentials,
			),
		};
	}
	const nodeUnderTest: INode = {
		id: 'node-under-test-id',
		name: nodeName,
		type: typeName,
		typeVersion,
		position: [200, 0],
		parameters: opts.parameters,
		credentials: credentialsForNode(versioned, opts.credentials),
	};
	if (opts.continueOnFail) {
		nodeUnderTest.continueOnFail = true;
		nodeUnderTest.onError = 'continueRegularOutput';
	}
	if (opts.onError) nodeUnderTest.onError = opts.onError;

	const nodes = [sourceNode, nodeUnderTest];
	const connections: IConnections = {
		[sourceNode.name]: { main: [[{ node: nodeName, type: 'main', index: 0 }]] },
	};
	if (opts.between) {
		const betweenType = qualifiedTypeName(opts.between.node);
		nodeTypes.add(betweenType, opts.between.node);
		nodes.splice(1, 0, {
			id: 'between-node-id',
			name: opts.between.name,
			type: betweenType,
			typeVersion: defaultTypeVersion(opts.between.node),
			position: [100, 0],
			parameters: opts.between.parameters ?? {},
		});
		connections[sourceNode.name].main = [[{ node: opts.between.name, type: 'main', index: 0 }]];
		connections[opts.between.name] = { main: [[{ node: nodeName, type: 'main', index: 0 }]] };
	}
	const workflowData: IWorkflowBase = {
		id: 'harness-workflow',
		name: 'Engine harness workflow',
		active: false,
		isArchived: false,
		nodes,
		connections,
		settings: { executionOrder: 'v1' },
		createdAt: new Date(),
		updatedAt: new Date(),
	} as IWorkflowBase;
	const workflow = new Workflow({
		id: workflowData.id,
		name: workflowData.name,
		nodes: workflowData.nodes,
		connections,
		nodeTypes,
		settings: workflowData.settings,
		active: false,
	});

	const credentialsHelper =
		opts.credentialsHelper ?? createCredentialsHelper(opts.credentialTypes, opts.credentials ?? {});
	if (opts.credentialsHelper && opts.credentials)
		credentialsHelper.setCredentials({ ...opts.credentials });

	const mode = opts.mode ?? 'manual';
	const executionId = `harness-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
	const hooks = new ExecutionLifecycleHooks(mode, executionId, workflowData);
	const nodeExecutionOrder: string[] = [];
	hooks.addHandler('nodeExecuteAfter', (name: string) => {
		nodeExecutionOrder.push(name);
	});
	let resolveFinished!: (run: IRun) => void;
	const finished = new Promise<IRun>((resolve) => (resolveFinished = resolve));
	hooks.addHandler('workflowExecuteAfter', (fullRunData: IRun) => resolveFinished(fullRunData));

	const additionalData = createAdditionalData({
		credentialsHelper,
		executionId,
		workflowId: workflowData.id,
	});
	additionalData.hooks = hooks;

	const runExecutionData = createRunExecutionData({
		executionData: {
			nodeExecutionStack: [
				{
					node: sourceNode,
					data: { main: [opts.start?.data ?? [{ json: {} }]] },
					source: null,
				},
			],
		},
	});

	const workflowExecute = new WorkflowExecute(additionalData, mode, runExecutionData);
	await workflowExecute.processRunExecutionData(workflow);
	const run = await finished;

	const runData = run.data.resultData.runData;
	const task = runData[nodeName]?.[0];
	return {
		outputs: (task?.data?.main as INodeExecutionData[][] | undefined) ?? null,
		error: task?.error,
		workflowError: run.data.resultData.error,
		runData,
		run,
		nodeUnderTest,
		nodeExecutionOrder,
	};
}

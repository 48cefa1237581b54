/**
 * Credentials as n8n's CLI serves them to n8n-core, minus the database:
 * - HarnessCredentialTypes: packages/cli/src/credential-types.ts (by name, parents via `extends`).
 * - HarnessCredentialsHelper: packages/cli/src/credentials-helper.ts — returns the decrypted
 *   data a test gave, with the credential type's defaults applied and expressions resolved, and
 *   applies `authenticate` (generic: expression-valued headers/qs/body/auth resolved against
 *   `$credentials`; function: called).
 * - testCredential: packages/cli/src/services/credentials-tester.service.ts for credential types
 *   with a `test` request, run through n8n-core's RoutingNode inside an ExecuteContext.
 */
import { ExecuteContext, getAdditionalKeys, RoutingNode } from 'n8n-core';
import type {
	ICredentialDataDecryptedObject,
	ICredentials,
	ICredentialsDecrypted,
	ICredentialsExpressionResolveValues,
	ICredentialType,
	IExecuteData,
	IHttpRequestHelper,
	IHttpRequestOptions,
	INode,
	INodeCredentialsDetails,
	INodeCredentialTestResult,
	INodeExecutionData,
	INodeParameters,
	INodeProperties,
	INodeType,
	IRequestOptionsSimplified,
	IWorkflowDataProxyAdditionalKeys,
	IWorkflowExecuteAdditionalData,
	WorkflowExecuteMode,
} from 'n8n-workflow';
import {
	createEmptyRunExecutionData,
	ICredentialsHelper,
	isExpression,
	NodeHelpers,
	UnexpectedError,
	Workflow,
} from 'n8n-workflow';

import { createAdditionalData, ensureEngine, HarnessNodeTypes } from './engine';

export class HarnessCredentialTypes {
	private readonly byName = new Map<string, ICredentialType>();

	constructor(types: ICredentialType[]) {
		for (const type of types) this.byName.set(type.name, type);
	}

	recognizes(name: string): boolean {
		return this.byName.has(name);
	}

	getByName(name: string): ICredentialType {
		const type = this.byName.get(name);
		if (!type) throw new UnexpectedError(`Unknown credential type: ${name}`);
		return type;
	}

	getParentTypes(name: string): string[] {
		const parents = this.byName.get(name)?.extends ?? [];
		return parents.flatMap((parent) => [parent, ...this.getParentTypes(parent)]);
	}

	getSupportedNodes(name: string): string[] {
		return this.byName.get(name)?.supportedNodes ?? [];
	}
}

/** The placeholder node the CLI resolves credential expressions on (no workflow context). */
const mockNode: INode = {
	id: 'mock',
	name: '',
	typeVersion: 1,
	type: 'mock',
	position: [0, 0],
	parameters: {},
};

const mockNodeTypes = new HarnessNodeTypes().add('mock', {
	description: { properties: [] as INodeProperties[] },
} as unknown as INodeType);

export class HarnessCredentialsHelper extends ICredentialsHelper {
	/** Every getDecrypted call, for tests that want to see which credentials a node asked for. */
	readonly requested: Array<{ type: string; mode: WorkflowExecuteMode }> = [];

	constructor(
		readonly credentialTypes: HarnessCredentialTypes,
		private credentials: Record<string, ICredentialDataDecryptedObject> = {},
	) {
		super();
	}

	setCredentials(credentials: Record<string, ICredentialDataDecryptedObject>): void {
		this.credentials = credentials;
	}

	getParentTypes(name: string): string[] {
		return this.credentialTypes.getParentTypes(name);
	}

	isCredentialUsableByNode(credentialType: string, nodeType: string): boolean {
		if (!this.credentialTypes.recognizes(credentialType)) return true;
		const typeDef = this.credentialTypes.getByName(credentialType);
		if (!typeDef.restrictToSupportedNodes) return true;
		return this.credentialTypes.getSupportedNodes(credentialType).includes(nodeType);
	}

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		incomingRequestOptions: IHttpRequestOptions | IRequestOptionsSimplified,
		workflow?: Workflow,
		node?: INode,
	): Promise<IHttpRequestOptions> {
		const requestOptions = incomingRequestOptions;
		const credentialType = this.credentialTypes.getByName(typeName);
		const { authenticate } = credentialType;
		if (!authenticate) return requestOptions as IHttpRequestOptions;

		if (typeof authenticate === 'function') {
			return await authenticate(credentials, requestOptions as IHttpRequestOptions);
		}

		if (!workflow || !node) {
			throw new UnexpectedError(
				'Workflow and node are required for declarative credential authentication',
			);
		}
		if (requestOptions.headers === undefined) requestOptions.headers = {};
		if (authenticate.type === 'generic') {
			const target = requestOptions as unknown as Record<string, Record<string, unknown>>;
			for (const [outerKey, outerValue] of Object.entries(authenticate.properties)) {
				for (const [key, value] of Object.entries(outerValue as Record<string, string>)) {
					const keyResolved = this.resolveValue(key, { $credentials: credentials }, workflow, node);
					const valueResolved = this.resolveValue(
						value,
						{ $credentials: credentials },
						workflow,
						node,
					);
					if (!target[outerKey]) target[outerKey] = {};
					target[outerKey][keyResolved] = valueResolved;
				}
			}
		}
		return requestOptions as IHttpRequestOptions;
	}

	private resolveValue(
		parameterValue: string,
		additionalKeys: IWorkflowDataProxyAdditionalKeys,
		workflow: Workflow,
		node: INode,
	): string {
		if (!isExpression(parameterValue)) return parameterValue;
		const returnValue = workflow.expression.getSimpleParameterValue(
			node,
			parameterValue,
			'internal',
			additionalKeys,
			undefined,
			'',
		);
		if (!returnValue) return '';
		return returnValue.toString();
	}

	async preAuthentication(
		helpers: IHttpRequestHelper,
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		node: INode,
		credentialsExpired: boolean,
	): Promise<ICredentialDataDecryptedObject | undefined> {
		const credentialType = this.credentialTypes.getByName(typeName);
		const expirableProperty = credentialType.properties.find(
			(property) => property.type === 'hidden' && property?.typeOptions?.expirable === true,
		);
		if (expirableProperty?.name === undefined) return undefined;
		if (typeof credentialType.preAuthentication !== 'function') return undefined;
		if (credentials[expirableProperty.name] === '' || credentialsExpired) {
			const output = await credentialType.preAuthentication.call(helpers, credentials);
			if (output[expirableProperty.name] === undefined) return undefined;
			if (node.credentials) {
				this.credentials[typeName] = {
					...this.credentials[typeName],
					...output,
				} as ICredentialDataDecryptedObject;
				return Object.assign(credentials, output);
			}
		}
		return undefined;
	}

	async runPreAuthentication(
		helpers: IHttpRequestHelper,
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
	): Promise<ICredentialDataDecryptedObject | undefined> {
		const credentialType = this.credentialTypes.getByName(typeName);
		if (typeof credentialType.preAuthentication !== 'function') return undefined;
		return ((await credentialType.preAuthentication.call(helpers, credentials)) ?? undefined) as
			| ICredentialDataDecryptedObject
			| undefined;
	}

	async getCredentials(
		nodeCredentials: INodeCredentialsDetails,
		type: string,
	): Promise<ICredentials> {
		const data = this.rawData(type, nodeCredentials);
		return {
			id: nodeCredentials.id ?? undefined,
			name: nodeCredentials.name,
			type,
			data: undefined,
			getData: () => ({ ...data }),
			getDataToSave: () => ({
				id: nodeCredentials.id ?? undefined,
				name: nodeCredentials.name,
				type,
				data: '',
			}),
			setData: () => {},
		} as unknown as ICredentials;
	}

	private rawData(
		type: string,
		nodeCredentials?: INodeCredentialsDetails,
	): ICredentialDataDecryptedObject {
		const data = this.credentials[type];
		if (data === undefined) {
			// The CLI's CredentialNotFoundError message.
			throw new UnexpectedError(
				`Credential with ID "${nodeCredentials?.id ?? ''}" does not exist for type "${type}".`,
			);
		}
		return data;
	}

	async getDecrypted(
		additionalData: IWorkflowExecuteAdditionalData,
		nodeCredentials: INodeCredentialsDetails,
		type: string,
		mode: WorkflowExecuteMode,
		executeData?: IExecuteData,
		raw?: boolean,
		expressionResolveValues?: ICredentialsExpressionResolveValues,
	): Promise<ICredentialDataDecryptedObject> {
		this.requested.push({ type, mode });
		const original = { ...this.rawData(type, nodeCredentials) };
		if (raw === true) return original;
		return await this.applyDefaultsAndOverwrites(
			additionalData,
			original,
			type,
			mode,
			executeData,
			expressionResolveValues,
		);
	}

	/** As the CLI: credential-type defaults, then expressions in the credential data resolved. */
	async applyDefaultsAndOverwrites(
		additionalData: IWorkflowExecuteAdditionalData,
		decryptedDataOriginal: ICredentialDataDecryptedObject,
		type: string,
		mode: WorkflowExecuteMode,
		executeData?: IExecuteData,
		expressionResolveValues?: ICredentialsExpressionResolveValues,
	): Promise<ICredentialDataDecryptedObject> {
		const credentialsProperties = this.getCredentialsProperties(type);
		let decryptedData = NodeHelpers.getNodeParameters(
			credentialsProperties,
			decryptedDataOriginal as INodeParameters,
			true,
			false,
			null,
			null,
		) as ICredentialDataDecryptedObject;
		if (decryptedDataOriginal.oauthTokenData !== undefined) {
			decryptedData.oauthTokenData = decryptedDataOriginal.oauthTokenData;
		}
		const additionalKeys = getAdditionalKeys(additionalData, mode, null, { isCredential: true });
		if (expressionResolveValues) {
			try {
				decryptedData = expressionResolveValues.workflow.expression.getParameterValue(
					decryptedData as INodeParameters,
					expressionResolveValues.runExecutionData,
					expressionResolveValues.runIndex,
					expressionResolveValues.itemIndex,
					expressionResolveValues.node.name,
					expressionResolveValues.connectionInputData,
					mode,
					additionalKeys,
					executeData,
					false,
					decryptedData,
				) as ICredentialDataDecryptedObject;
			} catch (e) {
				(e as Error).message += ' [Error resolving credentials]';
				throw e;
			}
		} else {
			const workflow = new Workflow({
				nodes: [mockNode],
				connections: {},
				active: false,
				nodeTypes: mockNodeTypes,
			});
			decryptedData = workflow.expression.getComplexParameterValue(
				mockNode,
				decryptedData as INodeParameters,
				mode,
				additionalKeys,
				undefined,
				undefined,
				decryptedData,
			) as ICredentialDataDecryptedObject;
		}
		return decryptedData;
	}

	async updateCredentials(
		_nodeCredentials: INodeCredentialsDetails,
		type: string,
		data: ICredentialDataDecryptedObject,
	): Promise<void> {
		this.credentials[type] = { ...data };
	}

	async updateCredentialsOauthTokenData(
		_nodeCredentials: INodeCredentialsDetails,
		type: string,
		data: ICredentialDataDecryptedObject,
	): Promise<void> {
		this.credentials[type] = { ...this.credentials[type], oauthTokenData: data.oauthTokenData };
	}

	getCredentialsProperties(type: string): INodeProperties[] {
		const typeData = this.credentialTypes.getByName(type);
		if (typeData.extends === undefined) return typeData.properties;
		const combined: INodeProperties[] = [];
		for (const parent of typeData.extends) {
			NodeHelpers.mergeNodeProperties(combined, this.getCredentialsProperties(parent));
		}
		NodeHelpers.mergeNodeProperties(combined, typeData.properties);
		return combined;
	}
}

/** Build a helper for the given credential types and decrypted data (by credential type name). */
export function createCredentialsHelper(
	credentialTypes: ICredentialType[],
	credentials: Record<string, ICredentialDataDecryptedObject> = {},
): HarnessCredentialsHelper {
	return new HarnessCredentialsHelper(new HarnessCredentialTypes(credentialTypes), {
		...credentials,
	});
}

/**
 * Run a credential type's `test` request the way n8n's "Test credential" button does
 * (CredentialsTester.testCredentials for `type.test`): a temporary node whose only property
 * routes `test.request`, executed by n8n-core's RoutingNode, so `baseURL`/`url` expressions are
 * resolved against `$credentials` and `authenticate` is applied. Failures are reported with the
 * same messages as the CLI: a matching `responseCode` rule's message, else the HTTP status text
 * (or `Received HTTP status code: <code>`), else the network error code, else the error message.
 */
export async function testCredential(
	credentialType: ICredentialType,
	data: ICredentialDataDecryptedObject,
	opts: { credentialTypes?: ICredentialType[] } = {},
): Promise<INodeCredentialTestResult> {
	ensureEngine();
	const testRequest = credentialType.test;
	if (!testRequest) {
		return { status: 'Error', message: 'No testing function found for this credential.' };
	}
	const helper = createCredentialsHelper([credentialType, ...(opts.credentialTypes ?? [])], {
		[credentialType.name]: data,
	});
	const additionalData = createAdditionalData({ credentialsHelper: helper });

	const credentialsDecrypted: ICredentialsDecrypted = {
		id: 'harness-credential',
		name: `${credentialType.displayName} (harness)`,
		type: credentialType.name,
		data: { ...data },
	};
	try {
		credentialsDecrypted.data = await helper.applyDefaultsAndOverwrites(
			additionalData,
			credentialsDecrypted.data!,
			credentialType.name,
			'internal',
		);
	} catch (error) {
		return { status: 'Error', message: (error as Error).message.toString() };
	}

	// The CLI uses the n8n-nodes-base.noOp description as the base of the temporary node.
	const nodeTypeCopy: INodeType = {
		description: {
			displayName: 'No Operation, do nothing',
			name: 'n8n-nodes-base.noOp',
			group: ['organization'],
			version: 1,
			description: 'No Operation',
			defaults: { name: 'No Operation, do nothing' },
			inputs: ['main'],
			outputs: ['main'],
			credentials: [{ name: credentialType.name, required: true }],
			properties: [
				{
					displayName: 'Temp',
					name: 'temp',
					type: 'string',
					routing: { request: testRequest.request },
					default: '',
				},
			],
		} as INodeType['description'],
	};
	const node: INode = {
		id: 'temp',
		parameters: {},
		name: 'Temp-Node',
		type: nodeTypeCopy.description.name,
		typeVersion: 1,
		position: [0, 0],
		credentials: {
			[credentialType.name]: { id: credentialsDecrypted.id, name: credentialsDecrypted.name },
		},
	};
	const workflow = new Workflow({
		nodes: [node],
		connections: {},
		active: false,
		nodeTypes: new HarnessNodeTypes().add(nodeTypeCopy.description.name, nodeTypeCopy),
	});
	const runExecutionData = createEmptyRunExecutionData();
	const executeData: IExecuteData = { node, data: {}, source: null };
	const context = new ExecuteContext(
		workflow,
		node,
		additionalData,
		'internal',
		runExecutionData,
		0,
		[],
		{ main: [[{ json: {} }]] },
		executeData,
		[],
	);
	const routingNode = new RoutingNode(context, nodeTypeCopy, credentialsDecrypted);

	let response: INodeExecutionData[][] | null | undefined;
	try {
		response = await routingNode.runNode();
	} catch (error) {
		const cause = (
			error as { cause?: { response?: { status: number; statusText?: string }; code?: string } }
		).cause;
		if (cause?.response) {
			const statusCode = cause.response.status;
			const statusMessage = cause.response.statusText;
			for (const rule of testRequest.rules ?? []) {
				if (rule.type === 'responseCode' && statusCode === rule.properties.value) {
					return { status: 'Error', message: rule.properties.message };
				}
			}
			if (statusCode < 199 || statusCode > 299) {
				return {
					status: 'Error',
					message: statusMessage || `Received HTTP status code: ${statusCode}`,
				};
			}
		} else if (cause?.code) {
			return { status: 'Error', message: cause.code };
		}
		return { status: 'Error', message: (error as Error).message.toString() };
	}

	for (const rule of testRequest.rules ?? []) {
		if (rule.type === 'responseSuccessBody') {
			const responseData = response?.[0]?.[0]?.json ?? {};
			const actual = rule.properties.key
				.split('.')
				.reduce<unknown>(
					(acc, key) => (acc as Record<string, unknown> | undefined)?.[key],
					responseData,
				);
			if (actual === rule.properties.value) {
				return { status: 'Error', message: rule.properties.message };
			}
		}
	}
	return { status: 'OK', message: 'Connection successful!' };
}

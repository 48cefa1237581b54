/**
 * What the n8n editor does when a user opens a picker or a dropdown that loads its options: the
 * equivalent of the CLI's DynamicNodeParametersService (getResourceLocatorResults, getOptionsViaMethodName),
 * which builds a one-node workflow named "Temp-Node" from the panel's current parameters and calls
 * the node's method with n8n-core's LoadOptionsContext.
 */
import { LoadOptionsContext } from 'n8n-core';
import type {
	ICredentialDataDecryptedObject,
	ICredentialType,
	INode,
	INodeListSearchResult,
	INodeParameters,
	INodePropertyOptions,
	INodeType,
} from 'n8n-workflow';
import { Workflow } from 'n8n-workflow';

import { createCredentialsHelper } from './credentials';
import { createAdditionalData, ensureEngine, HarnessNodeTypes, qualifiedTypeName } from './engine';
import { credentialsForNode } from './run-node';

export interface EditorCallOptions {
	node: INodeType;
	typeVersion: number;
	credentialTypes: ICredentialType[];
	credentials: Record<string, ICredentialDataDecryptedObject>;
	/** the panel's current parameters */
	parameters: INodeParameters;
}

function contextFor(opts: EditorCallOptions, path: string): LoadOptionsContext {
	ensureEngine();
	const typeName = qualifiedTypeName(opts.node);
	const nodeTypes = new HarnessNodeTypes().add(typeName, opts.node);
	const node: INode = {
		id: 'temp-node-id',
		name: 'Temp-Node',
		type: typeName,
		typeVersion: opts.typeVersion,
		position: [0, 0],
		parameters: opts.parameters,
		credentials: credentialsForNode(opts.node, opts.credentials),
	};
	const workflow = new Workflow({ nodes: [node], connections: {}, active: false, nodeTypes });
	const additionalData = createAdditionalData({
		credentialsHelper: createCredentialsHelper(opts.credentialTypes, opts.credentials),
	});
	// getCurrentNodeParameter reads the panel's values from here, as the CLI sets them
	additionalData.currentNodeParameters = opts.parameters;
	return new LoadOptionsContext(workflow, node, additionalData, path);
}

/** A resource locator's list ("From List"), with the search box's text. */
export async function listSearch(
	opts: EditorCallOptions & { method: string; parameter: string; filter?: string },
): Promise<INodeListSearchResult> {
	const method = opts.node.methods?.listSearch?.[opts.method];
	if (!method) throw new Error(`No listSearch method ${opts.method}`);
	return await method.call(contextFor(opts, opts.parameter), opts.filter);
}

/** A dropdown whose options the node loads (loadOptionsMethod). */
export async function loadOptions(
	opts: EditorCallOptions & { method: string; parameter: string },
): Promise<INodePropertyOptions[]> {
	const method = opts.node.methods?.loadOptions?.[opts.method];
	if (!method) throw new Error(`No loadOptions method ${opts.method}`);
	return await method.call(contextFor(opts, opts.parameter));
}

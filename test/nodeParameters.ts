/**
 * Shared by the tests of Connect's secrets (not a test file): what n8n keeps of a run, as JSON, with
 * every node's own parameters left out. A value typed into a node belongs there (the workflow keeps
 * it, as README says), so a secret found anywhere else in the JSON leaked.
 */

/** A node as n8n keeps it in a workflow, an execution or an error (INode). */
const isNode = (holder: unknown): boolean => {
	const node = holder as { name?: unknown; type?: unknown; typeVersion?: unknown };
	return (
		typeof node?.name === 'string' &&
		typeof node.type === 'string' &&
		typeof node.typeVersion === 'number'
	);
};

export function jsonBesideNodeParameters(value: unknown): string {
	return JSON.stringify(value, function (key, inner) {
		return key === 'parameters' && isNode(this) ? '(the node parameters)' : inner;
	});
}

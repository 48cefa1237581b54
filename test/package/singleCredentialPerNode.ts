/**
 * n8n's lint rule `single-credential-per-node`, ported for test/package/singleCredentialPerNode.test.ts
 * (not a test file). The rule is in the recommended config of n8n's community-node ESLint plugin on
 * n8n's main branch (the n8n-io/n8n repository, folder packages/@n8n/eslint-plugin-community-nodes, its
 * rule single-credential-per-node and that rule's tests), but not in the release our lint pins (0.32.0);
 * n8n's package scanner will report a node that breaks it once the release has it.
 *
 * What it reports, as main defines it: in a `*.node.ts` file, a class that implements INodeType (or
 * extends Node) whose description lists two credentials that are not mutually exclusive. Two are
 * exclusive when some parameter, not a multiOptions one, is in both `displayOptions.show` with every
 * value of one unlike every value of the other. A value counts when it resolves to a constant (a
 * literal, a const, a local enum member) or is a member of the same import; one that does not makes
 * its condition count for nothing. Trigger nodes are held to it too (an earlier version on main
 * skipped them; main's tests now report them).
 */
import type { TSESLint, TSESTree } from '@typescript-eslint/utils';
import { AST_NODE_TYPES, ASTUtils, ESLintUtils } from '@typescript-eslint/utils';

type Scope = ReturnType<TSESLint.SourceCode['getScope']>;
type Variable = NonNullable<ReturnType<typeof ASTUtils.findVariable>>;
type Element = TSESTree.ArrayExpression['elements'][number];

/** A value of a show condition: a constant (`<type>:<value>`) or a member of an imported name. */
type ShownValue = { constant: string } | { imported: Variable; member: string };

/** The name a property key stands for, or null when only the running code knows it. */
function keyName(
	property: TSESTree.Property | TSESTree.PropertyDefinition | TSESTree.MethodDefinition,
): string | null {
	const { key } = property;
	if (key.type === AST_NODE_TYPES.Literal) return key.value === null ? null : String(key.value);
	if (key.type === AST_NODE_TYPES.TemplateLiteral)
		return key.expressions.length === 0 ? (key.quasis[0]?.value.cooked ?? null) : null;
	if (key.type === AST_NODE_TYPES.Identifier) return property.computed ? null : key.name;
	return null;
}

function propertyOf(object: TSESTree.ObjectExpression, name: string): TSESTree.Property | null {
	for (const property of object.properties)
		if (property.type === AST_NODE_TYPES.Property && keyName(property) === name) return property;
	return null;
}

function arrayOf(object: TSESTree.ObjectExpression, name: string): TSESTree.ArrayExpression | null {
	const value = propertyOf(object, name)?.value;
	return value?.type === AST_NODE_TYPES.ArrayExpression ? value : null;
}

function objectOf(node: TSESTree.Node | null | undefined): TSESTree.ObjectExpression | null {
	let current = node;
	// `{ … } as INodeTypeDescription` and the like name the same object
	while (
		current?.type === AST_NODE_TYPES.TSAsExpression ||
		current?.type === AST_NODE_TYPES.TSSatisfiesExpression ||
		current?.type === AST_NODE_TYPES.TSTypeAssertion ||
		current?.type === AST_NODE_TYPES.TSNonNullExpression
	)
		current = current.expression;
	return current?.type === AST_NODE_TYPES.ObjectExpression ? current : null;
}

function isNodeClass(node: TSESTree.ClassDeclaration): boolean {
	const implementsNodeType = (node.implements ?? []).some(
		(clause) =>
			clause.expression.type === AST_NODE_TYPES.Identifier &&
			clause.expression.name === 'INodeType',
	);
	return (
		implementsNodeType ||
		(node.superClass?.type === AST_NODE_TYPES.Identifier && node.superClass.name === 'Node')
	);
}

/** The class's `description` object: its property, else `this.description = {…}` in the constructor. */
function descriptionOf(node: TSESTree.ClassDeclaration): TSESTree.ObjectExpression | null {
	const property = node.body.body.find(
		(member) =>
			member.type === AST_NODE_TYPES.PropertyDefinition && keyName(member) === 'description',
	);
	const declared = property?.type === AST_NODE_TYPES.PropertyDefinition && objectOf(property.value);
	if (declared) return declared;
	for (const member of node.body.body) {
		if (member.type !== AST_NODE_TYPES.MethodDefinition || member.kind !== 'constructor') continue;
		for (const statement of member.value.body?.body ?? []) {
			if (statement.type !== AST_NODE_TYPES.ExpressionStatement) continue;
			const assignment = statement.expression;
			if (
				assignment.type === AST_NODE_TYPES.AssignmentExpression &&
				assignment.operator === '=' &&
				assignment.left.type === AST_NODE_TYPES.MemberExpression &&
				assignment.left.object.type === AST_NODE_TYPES.ThisExpression &&
				assignment.left.property.type === AST_NODE_TYPES.Identifier &&
				assignment.left.property.name === 'description'
			) {
				const description = objectOf(assignment.right);
				if (description) return description;
			}
		}
	}
	return null;
}

/** `Name.member` with a plain name and member, and the one definition of that name. */
function memberOfName(node: TSESTree.Node, scope: Scope) {
	if (
		node.type !== AST_NODE_TYPES.MemberExpression ||
		node.computed ||
		node.object.type !== AST_NODE_TYPES.Identifier ||
		node.property.type !== AST_NODE_TYPES.Identifier
	)
		return null;
	const variable = ASTUtils.findVariable(scope, node.object);
	const definition = variable?.defs.length === 1 ? variable.defs[0].node : null;
	return { variable, definition, member: node.property.name };
}

function shownValue(node: Element, scope: Scope): ShownValue | null {
	if (!node) return null;
	let value = ASTUtils.getStaticValue(node, scope)?.value;
	const named = memberOfName(node, scope);
	if (value === undefined && named?.definition?.type === AST_NODE_TYPES.TSEnumDeclaration) {
		const member = named.definition.body.members.find(
			({ id }) =>
				(id.type === AST_NODE_TYPES.Identifier && id.name === named.member) ||
				(id.type === AST_NODE_TYPES.Literal && id.value === named.member),
		);
		const initializer = member?.initializer;
		value =
			initializer?.type === AST_NODE_TYPES.Literal ? (initializer.value ?? undefined) : undefined;
	}
	if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
		return { constant: `${typeof value}:${String(value)}` };
	const definition = named?.definition?.type;
	if (
		named?.variable &&
		(definition === AST_NODE_TYPES.ImportSpecifier ||
			definition === AST_NODE_TYPES.ImportDefaultSpecifier ||
			definition === AST_NODE_TYPES.ImportNamespaceSpecifier)
	)
		return { imported: named.variable, member: named.member };
	return null;
}

function unlike(left: ShownValue, right: ShownValue): boolean {
	if ('constant' in left && 'constant' in right) return left.constant !== right.constant;
	return (
		'imported' in left &&
		'imported' in right &&
		left.imported === right.imported &&
		left.member !== right.member
	);
}

/** A credential's show conditions, by parameter; a condition with a value that does not resolve is left out. */
function showConditions(credential: Element, sourceCode: TSESLint.SourceCode) {
	const conditions = new Map<string, ShownValue[]>();
	if (credential?.type !== AST_NODE_TYPES.ObjectExpression) return conditions;
	// here, unlike the description, only an object written out counts (as upstream)
	const displayOptions = propertyOf(credential, 'displayOptions')?.value;
	if (displayOptions?.type !== AST_NODE_TYPES.ObjectExpression) return conditions;
	const show = propertyOf(displayOptions, 'show')?.value;
	if (show?.type !== AST_NODE_TYPES.ObjectExpression) return conditions;
	for (const condition of show.properties) {
		if (
			condition.type !== AST_NODE_TYPES.Property ||
			condition.value.type !== AST_NODE_TYPES.ArrayExpression
		)
			continue;
		const name = keyName(condition);
		const values = condition.value.elements.map((element) =>
			shownValue(element, sourceCode.getScope(element ?? condition)),
		);
		if (name && values.length > 0 && values.every((v) => v !== null))
			conditions.set(name, values as ShownValue[]);
	}
	return conditions;
}

/** The names of the node's top-level multiOptions parameters: any mix of their values can be shown. */
function multiOptionsNames(description: TSESTree.ObjectExpression): Set<string> {
	const names = new Set<string>();
	for (const element of arrayOf(description, 'properties')?.elements ?? []) {
		if (element?.type !== AST_NODE_TYPES.ObjectExpression) continue;
		const type = propertyOf(element, 'type')?.value;
		const name = propertyOf(element, 'name')?.value;
		if (
			type?.type === AST_NODE_TYPES.Literal &&
			type.value === 'multiOptions' &&
			name?.type === AST_NODE_TYPES.Literal &&
			typeof name.value === 'string'
		)
			names.add(name.value);
	}
	return names;
}

function exclusive(
	left: Element,
	right: Element,
	multiOptions: Set<string>,
	sourceCode: TSESLint.SourceCode,
): boolean {
	const rightConditions = showConditions(right, sourceCode);
	for (const [name, leftValues] of showConditions(left, sourceCode)) {
		const rightValues = rightConditions.get(name);
		if (multiOptions.has(name) || !rightValues) continue;
		if (leftValues.every((l) => rightValues.every((r) => unlike(l, r)))) return true;
	}
	return false;
}

export const MESSAGE =
	'A node can use only one credential at a time. Use mutually exclusive displayOptions for alternative authentication methods. Move non-authentication settings to a node property or collection so users can set them with expressions.';

export const singleCredentialPerNode = ESLintUtils.RuleCreator(
	(name) =>
		`https://github.com/n8n-io/n8n/blob/master/packages/@n8n/eslint-plugin-community-nodes/docs/rules/${name}.md`,
)({
	name: 'single-credential-per-node',
	meta: {
		type: 'problem',
		docs: { description: 'Ensure a node uses only one credential at a time' },
		messages: { multipleCredentials: MESSAGE },
		schema: [],
	},
	defaultOptions: [],
	create(context) {
		if (!context.filename.endsWith('.node.ts')) return {};
		return {
			ClassDeclaration(node) {
				if (!isNodeClass(node)) return;
				const description = descriptionOf(node);
				const credentials = description && arrayOf(description, 'credentials');
				if (!description || !credentials || credentials.elements.length < 2) return;
				const multiOptions = multiOptionsNames(description);
				const { elements } = credentials;
				const together = elements.some((left, i) =>
					elements
						.slice(i + 1)
						.some((right) => !exclusive(left, right, multiOptions, context.sourceCode)),
				);
				// one report a node, on its credentials list
				if (together) context.report({ node: credentials, messageId: 'multipleCredentials' });
			},
		};
	},
});

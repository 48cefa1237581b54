// `npm run lint:more`, the second half of `npm run lint` (--max-warnings 0), after `n8n-node lint`
// (.ci/n8n-node-lint) and beside it: further checks of ours; `npm run lint:fix` applies its fixes to the sources. The package's sources and package.json get
// n8n's own community-node config again, imported from @n8n/node-cli, plus every rule of the pinned
// plugin and the rules below, so it follows n8n's releases instead of drifting. The tests are not published and are not n8n nodes: they get typescript-eslint's
// recommended rules only, the same blocks node-cli's config contains.
import { config as n8nNodeConfig } from '@n8n/node-cli/eslint';

const TS_RECOMMENDED = new Set(['typescript-eslint/base', 'typescript-eslint/eslint-recommended', 'typescript-eslint/recommended']);
const isGlobalIgnore = (block) => Object.keys(block).every((key) => key === 'ignores' || key === 'name');

// Rules of n8n's main branch (packages/@n8n/eslint-plugin-community-nodes) that the pinned plugin (0.32.0,
// the newest release) lacks, as far as a selector can check them, on every node and the credential:
// - require-continue-on-fail: a node class's execute() calls this.continueOnFail();
// - node-operation-error-itemindex: a NodeOperationError or NodeApiError made where an item is at hand
//   carries { itemIndex } in its options. Upstream looks only at loops over this.getInputData() in
//   execute(); here "at hand" is any function with an `itemIndex` parameter and any item loop.
// The codex rules (no-codex-subcategories, valid-node-categories, no-ai-codex-category,
// no-logic-or-flow-nodes) and the description rules are checked on the built descriptions in
// test/package/lintRules.test.ts.
const NODE_ERROR = 'NewExpression[callee.name=/^Node(Operation|Api)Error$/]';
const ITEM_AT_HAND = [
	":function:has(> Identifier[name='itemIndex'])",
	"ForStatement:has(> VariableDeclaration:has(> VariableDeclarator[id.name=/^(i|itemIndex)$/]))",
	'ForOfStatement',
];
const ITEM_INDEX_MESSAGE =
	'An item is at hand: give the error its item ({ itemIndex } in the third argument), as n8n\'s node-operation-error-itemindex rule asks.';
const upstreamRulesNotReleased = {
	files: ['nodes/**/*.ts', 'credentials/**/*.ts'],
	rules: {
		'no-restricted-syntax': [
			'error',
			{
				selector:
					"ClassDeclaration MethodDefinition[key.name='execute'] > FunctionExpression:not(:has(CallExpression[callee.object.type='ThisExpression'][callee.property.name='continueOnFail']))",
				message: "execute() must read this.continueOnFail() (n8n's require-continue-on-fail rule).",
			},
			...ITEM_AT_HAND.flatMap((scope) => [
				{ selector: `${scope} ${NODE_ERROR}:not([arguments.2])`, message: ITEM_INDEX_MESSAGE },
				{
					selector: `${scope} ${NODE_ERROR}[arguments.2.type='ObjectExpression']:not(:has(> ObjectExpression:nth-child(3):has(> Property[key.name='itemIndex'], > SpreadElement)))`,
					message: ITEM_INDEX_MESSAGE,
				},
			]),
		],
	},
};

// Every rule of the pinned community-node plugin, not only the recommended set node-cli enables (0.32.0:
// 44 rules, 43 recommended; the one more is node-class-description-icon-missing).
const communityPlugin = n8nNodeConfig.find((block) => block.plugins?.['@n8n/community-nodes'] && block.files?.includes('**/*.ts'))
	.plugins['@n8n/community-nodes'];
const everyCommunityRule = {
	files: ['nodes/**/*.ts', 'credentials/**/*.ts'],
	plugins: { '@n8n/community-nodes': communityPlugin },
	rules: Object.fromEntries(Object.keys(communityPlugin.rules).map((rule) => [`@n8n/community-nodes/${rule}`, 'error'])),
};

export default [
	{ ignores: ['dist/**', 'tmp/**', '.ci/**', 'gulpfile.js'] },
	...n8nNodeConfig.map((block) => (isGlobalIgnore(block) ? block : { ...block, ignores: [...(block.ignores ?? []), 'test/**'] })),
	...n8nNodeConfig.filter((block) => TS_RECOMMENDED.has(block.name)).map((block) => ({ ...block, files: ['test/**/*.ts'] })),
	upstreamRulesNotReleased,
	everyCommunityRule,
];

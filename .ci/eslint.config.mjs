// n8n's own lint rule sets for community nodes, run by `npm run lint` with --max-warnings 0.
// This mirrors the config n8n ships in @n8n/node-cli (what `n8n-node lint` runs and what the
// community-package scanner expects): @n8n/eslint-plugin-community-nodes recommended, plus
// eslint-plugin-n8n-nodes-base community/credentials/nodes rules, with the same five main-repo-only
// rules switched off that node-cli switches off. No inline disables anywhere.
import { n8nCommunityNodesPlugin } from '@n8n/eslint-plugin-community-nodes';
import n8nNodesPlugin from 'eslint-plugin-n8n-nodes-base';
import tsParser from '@typescript-eslint/parser';

export default [
	{ ignores: ['dist/**', 'node_modules/**', '.ci/**', 'test/**', 'gulpfile.js'] },
	n8nCommunityNodesPlugin.configs.recommended,
	{ rules: { 'no-console': 'error' } },
	{ plugins: { 'n8n-nodes-base': n8nNodesPlugin } },
	{ files: ['package.json'], rules: { ...n8nNodesPlugin.configs.community.rules } },
	{
		files: ['**/credentials/**/*.ts'],
		rules: {
			...n8nNodesPlugin.configs.credentials.rules,
			'n8n-nodes-base/cred-class-field-documentation-url-miscased': 'off',
			'n8n-nodes-base/cred-class-field-type-options-password-missing': 'off',
		},
	},
	{
		files: ['**/nodes/**/*.ts'],
		rules: {
			...n8nNodesPlugin.configs.nodes.rules,
			'n8n-nodes-base/node-class-description-inputs-wrong-regular-node': 'off',
			'n8n-nodes-base/node-class-description-outputs-wrong': 'off',
			'n8n-nodes-base/node-param-type-options-max-value-present': 'off',
		},
	},
	{ files: ['**/*.json'], languageOptions: { parser: tsParser, parserOptions: { extraFileExtensions: ['.json'] } } },
	{ files: ['**/*.ts'], languageOptions: { parser: tsParser, parserOptions: { sourceType: 'module' } } },
];

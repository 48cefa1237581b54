/**
 * n8n's single-credential-per-node rule (ported in ./singleCredentialPerNode.ts from n8n's main
 * branch) on every node of the package, before the plugin release that has it reaches our lint: each
 * node declares one credential, or only mutually exclusive ones. The cases of main's own tests come
 * first, so a port that drifted from the rule fails here rather than passing our nodes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

import * as tsParser from '@typescript-eslint/parser';
import { Linter, RuleTester, type Rule } from 'eslint';

import { MESSAGE, singleCredentialPerNode } from './singleCredentialPerNode';

const repoRoot = resolve(__dirname, '..', '..');
// typescript-eslint's rule type and ESLint's differ only in their typings
const rule = singleCredentialPerNode as unknown as Rule.RuleModule;

/** A node file with the given credentials and properties (source text), as main's tests write one. */
function nodeSource(
	credentials: string,
	properties = '[]',
	{ className = 'TestNode', group = 'output', before = '' } = {},
): string {
	return `${before}
import type { INodeType, INodeTypeDescription } from 'n8n-workflow';
export class ${className} implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Test Node',
		name: 'testNode',
		group: ['${group}'],
		version: 1,
		description: 'Test node',
		defaults: { name: 'Test Node' },
		inputs: ['main'],
		outputs: ['main'],
		credentials: ${credentials},
		properties: ${properties},
	};
}`;
}

/** Two credentials shown for the given `authentication` values (source text of each list). */
const shownFor = (first: string, second: string) =>
	`[{ name: 'firstApi', displayOptions: { show: { authentication: [${first}] } } },
	  { name: 'secondApi', displayOptions: { show: { authentication: [${second}] } } }]`;
const AUTHENTICATION = (type: string) =>
	`[{ displayName: 'Authentication', name: 'authentication', type: '${type}', default: 'apiKey',
	    options: [{ name: 'API Key', value: 'apiKey' }, { name: 'OAuth2', value: 'oAuth2' }] }]`;
const LOCAL_ENUM = (second: string) => `enum AuthenticationType { ApiKey = 'apiKey', ${second} }`;
const IMPORTED_ENUM = "import { AuthenticationType } from './AuthenticationType';";
const TOGETHER =
	"[{ name: 'testOAuth2Api', required: true }, { name: 'senderProfile', required: true }]";

/** RuleTester cases from [name, source, file name] (a node file unless named otherwise). */
const cases = (list: Array<[string, string, string?]>) =>
	list.map(([name, code, filename = 'Test.node.ts']) => ({ name, code, filename }));

new RuleTester({ languageOptions: { parser: tsParser } }).run(
	"single-credential-per-node: main's cases",
	rule,
	{
		valid: cases([
			['a class that is not a node', 'export class TestNode {}'],
			['a file that is not a node file', nodeSource(TOGETHER), 'Test.ts'],
			['one credential', nodeSource("[{ name: 'testApi', required: true }]")],
			[
				'alternatives on literal values',
				nodeSource(shownFor("'apiKey'", "'oAuth2'"), AUTHENTICATION('options')),
			],
			[
				'alternatives on local enum members',
				nodeSource(shownFor('AuthenticationType.ApiKey', 'AuthenticationType.OAuth2'), '[]', {
					before: LOCAL_ENUM("OAuth2 = 'oAuth2'"),
				}),
			],
			[
				'alternatives on consts',
				nodeSource(shownFor('API_KEY_AUTH', 'OAUTH2_AUTH'), '[]', {
					before: "const API_KEY_AUTH = 'apiKey'; const OAUTH2_AUTH = 'oAuth2';",
				}),
			],
			[
				'alternatives on members of one import',
				nodeSource(shownFor('AuthenticationType.ApiKey', 'AuthenticationType.OAuth2'), '[]', {
					before: IMPORTED_ENUM,
				}),
			],
		]),
		invalid: cases([
			[
				'a trigger node with two credentials',
				nodeSource(TOGETHER, '[]', { className: 'TestTrigger', group: 'trigger' }),
				'TestTrigger.node.ts',
			],
			['two credentials without displayOptions', nodeSource(TOGETHER)],
			['overlapping show values', nodeSource(shownFor("'apiKey', 'shared'", "'shared', 'oAuth2'"))],
			[
				'a const and a literal of one value',
				nodeSource(shownFor('API_KEY_AUTH', "'apiKey'"), '[]', {
					before: "const API_KEY_AUTH = 'apiKey';",
				}),
			],
			[
				'two enum members of one value',
				nodeSource(
					shownFor('AuthenticationType.ApiKey', 'AuthenticationType.AlternateApiKey'),
					'[]',
					{
						before: LOCAL_ENUM("AlternateApiKey = 'apiKey'"),
					},
				),
			],
			['a value that does not resolve', nodeSource(shownFor('EXTERNAL_API_KEY', "'oAuth2'"))],
			[
				'one member of one import twice',
				nodeSource(shownFor('AuthenticationType.ApiKey', 'AuthenticationType.ApiKey'), '[]', {
					before: IMPORTED_ENUM,
				}),
			],
			[
				'an imported member beside a literal',
				nodeSource(shownFor('AuthenticationType.ApiKey', "'apiKey'"), '[]', {
					before: IMPORTED_ENUM,
				}),
			],
			[
				'alternatives on a multiOptions parameter',
				nodeSource(shownFor("'apiKey'", "'oAuth2'"), AUTHENTICATION('multiOptions')),
			],
			['a call as a show value', nodeSource(shownFor('getAuthentication()', "'oAuth2'"))],
		]).map((c) => ({ ...c, errors: [{ messageId: 'multipleCredentials' }] })),
	},
);

/** The rule's messages for one file's source, linted as that file. */
function lint(file: string, source = readFileSync(join(repoRoot, file), 'utf8')): string[] {
	const linter = new Linter({ configType: 'flat' });
	const config: Linter.Config[] = [
		{
			files: ['**/*.ts'],
			languageOptions: { parser: tsParser },
			plugins: { n8n: { rules: { 'single-credential-per-node': rule } } },
			rules: { 'n8n/single-credential-per-node': 'error' },
		},
	];
	return linter.verify(source, config, { filename: join(repoRoot, file) }).map((m) => m.message);
}

const nodeFiles = (dir = join(repoRoot, 'nodes')): string[] =>
	readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
		entry.isDirectory()
			? nodeFiles(join(dir, entry.name))
			: entry.name.endsWith('.node.ts')
				? [relative(repoRoot, join(dir, entry.name))]
				: [],
	);

describe("the package's nodes", () => {
	test('every node file is checked: the action node and both triggers', () => {
		expect(nodeFiles().sort()).toEqual([
			'nodes/Marketplace/Marketplace.node.ts',
			'nodes/MarketplacePollingTrigger/MarketplacePollingTrigger.node.ts',
			'nodes/MarketplaceTrigger/MarketplaceTrigger.node.ts',
		]);
	});

	test.each(nodeFiles())('%s: one credential at a time', (file) => {
		expect(lint(file)).toEqual([]);
	});

	test('the rule reads our node files: Marketplace with a second credential and no displayOptions is reported', () => {
		const file = 'nodes/Marketplace/Marketplace.node.ts';
		const source = readFileSync(join(repoRoot, file), 'utf8');
		const credentials = "credentials: [{ name: 'marketplaceApi', required: true }";
		expect(source).toContain(credentials);
		const withSecond = source.replace(
			credentials,
			`${credentials}, { name: 'marketplaceOtherApi' }`,
		);
		expect(lint(file, withSecond)).toEqual([MESSAGE]);
	});
});

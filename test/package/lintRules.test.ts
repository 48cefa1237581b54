/**
 * Rules of n8n's community-node lint plugin on n8n's main branch (packages/@n8n/eslint-plugin-community-nodes)
 * that the plugin we run (0.32.0, its newest release) does not have yet, checked on what n8n loads: the codex
 * files beside the nodes and the node and credential descriptions. Upstream reads only literals in a
 * `.node.ts`, where our descriptions are mostly imported, so these run on the built objects and reach every
 * nesting level. The two rules a selector can check in the sources (require-continue-on-fail,
 * node-operation-error-itemindex) are in .ci/eslint.config.mjs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

import type { INodeProperties, INodeTypeDescription } from 'n8n-workflow';

import { MarketplaceApi } from '../../credentials/MarketplaceApi.credentials';
import { Marketplace } from '../../nodes/Marketplace/Marketplace.node';
import { MarketplacePollingTrigger } from '../../nodes/MarketplacePollingTrigger/MarketplacePollingTrigger.node';
import { MarketplaceTrigger } from '../../nodes/MarketplaceTrigger/MarketplaceTrigger.node';

const repoRoot = resolve(__dirname, '..', '..');
const packageName = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).name as string;

/** Each node's description and the folder its class file lives in. */
const nodes: Array<{ folder: string; description: INodeTypeDescription }> = [
	{ folder: 'Marketplace', description: new Marketplace().description },
	{ folder: 'MarketplaceTrigger', description: new MarketplaceTrigger().description },
	{ folder: 'MarketplacePollingTrigger', description: new MarketplacePollingTrigger().description },
];

/** The categories a community node's codex may name (valid-node-categories, without the reserved 'AI'). */
const COMMUNITY_CATEGORIES = new Set([
	'Analytics',
	'Communication',
	'Data & Storage',
	'Development',
	'Finance & Accounting',
	'Marketing & Content',
	'Miscellaneous',
	'Productivity',
	'Sales',
	'Utility',
]);

/** Every parameter and option of a description, at every nesting level, with its path. */
function* everyProperty(
	properties: INodeProperties[],
	path: string,
): Generator<{ property: Record<string, unknown>; path: string }> {
	for (const property of properties as unknown as Array<Record<string, unknown>>) {
		const here = `${path} > ${String(property.displayName ?? property.name)}`;
		yield { property, path: here };
		for (const nested of [property.options, property.values])
			if (Array.isArray(nested)) yield* everyProperty(nested as INodeProperties[], here);
	}
}

const isParameter = (p: Record<string, unknown>) =>
	typeof p.type === 'string' && typeof p.name === 'string' && typeof p.displayName === 'string';

describe.each(nodes)('$folder', ({ folder, description }) => {
	const codexFile = join(repoRoot, 'nodes', folder, `${folder}.node.json`);
	const codex = JSON.parse(readFileSync(codexFile, 'utf8'));
	const parameters = [...everyProperty(description.properties, description.name)];

	test('codex: names the node, no subcategories (no-codex-subcategories), community categories only, neither AI nor Logic/Flow (valid-node-categories, no-ai-codex-category, no-logic-or-flow-nodes)', () => {
		expect(codex.node).toBe(`${packageName}.${description.name}`);
		expect(codex).not.toHaveProperty('subcategories');
		expect(codex.categories.length).toBeGreaterThan(0);
		expect(codex.categories.filter((c: string) => !COMMUNITY_CATEGORIES.has(c))).toEqual([]);
		expect(description.codex).toBeUndefined(); // else n8n would not read the codex file
	});

	test('the file is named after description.name, which is camelCase (node-filename-against-convention, node-class-description-name-camelcase)', () => {
		expect(description.name).toMatch(/^[a-z][a-zA-Z0-9]*$/);
		const files = readdirSync(join(repoRoot, 'nodes', folder)).filter((f) =>
			f.endsWith('.node.ts'),
		);
		expect(files).toEqual([
			`${description.name[0].toUpperCase()}${description.name.slice(1)}.node.ts`,
		]);
	});

	test("one credential (single-credential-per-node), not n8n's core color (node-class-description-non-core-color)", () => {
		expect(description.credentials?.map((c) => c.name)).toEqual(['marketplaceApi']);
		const colors = [description.defaults.color, (description as { color?: string }).color];
		expect(colors.map((c) => String(c ?? '').toUpperCase())).not.toContain('#FF6D5A');
	});

	test('every parameter has a default (require-param-default); hints of at most 120 characters (hint-max-length)', () => {
		const problems = parameters.flatMap(({ property, path }) => [
			...(isParameter(property) && !('default' in property) ? [`no default: ${path}`] : []),
			...(typeof property.hint === 'string' && property.hint.length > 120
				? [`hint of ${property.hint.length} characters: ${path}`]
				: []),
		]);
		expect(problems).toEqual([]);
	});

	test('options: sorted by name (options-sorted-alphabetically), names and values unique (no-duplicate-param-options), no asterisk in a name (no-asterisk-in-option-names)', () => {
		const problems: string[] = [];
		for (const { property, path } of parameters) {
			if (!['options', 'multiOptions'].includes(String(property.type))) continue;
			const options = (property.options ?? []) as Array<{ name: string; value: unknown }>;
			const names = options.map((o) => o.name);
			const sorted = [...names].sort((a, b) =>
				a.localeCompare(b, undefined, { sensitivity: 'base' }),
			);
			// upstream sorts the options type only; a multiOptions list keeps the service's order
			if (property.type === 'options' && names.join('|') !== sorted.join('|'))
				problems.push(`not sorted: ${path} (${names.join(', ')})`);
			if (new Set(names).size !== names.length) problems.push(`a name twice: ${path}`);
			const values = options.map((o) => JSON.stringify(o.value));
			if (new Set(values).size !== values.length) problems.push(`a value twice: ${path}`);
			for (const name of names.filter((n) => n.includes('*')))
				problems.push(`asterisk: ${path} > ${name}`);
		}
		expect(problems).toEqual([]);
	});
});

test('the credential: class, name and file agree and end in Api (cred-class-name-suffix, cred-class-name-field-conventions, cred-filename-against-convention)', () => {
	const credential = new MarketplaceApi();
	expect(credential.constructor.name).toMatch(/Api$/);
	expect(credential.name).toMatch(/^[a-z][a-zA-Z0-9]*Api$/);
	const files = readdirSync(join(repoRoot, 'credentials')).filter((f) =>
		f.endsWith('.credentials.ts'),
	);
	expect(files.map((f) => basename(f, '.credentials.ts'))).toEqual([credential.constructor.name]);
	const parameters = [...everyProperty(credential.properties, credential.name)];
	expect(parameters.filter(({ property }) => !('default' in property))).toEqual([]);
});

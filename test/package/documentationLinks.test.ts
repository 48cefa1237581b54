/**
 * The documentation links n8n shows: the credential's `documentationUrl` (the dialog's "Open docs") and each
 * codex file's `resources` (the node panel's docs link). Every one that points into this repository's README
 * must name a heading the README has, by GitHub's anchor rules; the node's primary documentation carries no
 * anchor at all, because n8n 2.41.1's editor appends `?utm_source=...` to it and an anchor would end up before
 * the query (CONTRIBUTING.md, "Documentation links"). The README's and CONTRIBUTING's links into the README
 * are held to the same headings.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { MarketplaceApi } from '../../credentials/MarketplaceApi.credentials';

const repoRoot = resolve(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(repoRoot, file), 'utf8');
const manifest = JSON.parse(read('package.json')) as { homepage: string };
/** The repository's page, where GitHub shows README.md (package.json's homepage without its #readme). */
const repositoryPage = manifest.homepage.replace(/#.*$/, '');

/**
 * The anchors GitHub gives README.md's headings (github-slugger): the heading's text without its markdown
 * marks, lower-cased, every character but letters, digits, `_`, `-` and spaces dropped, spaces made `-`; a
 * repeated slug gets `-1`, `-2`, ...
 */
export function headingAnchors(markdown: string): Set<string> {
	const withoutCode = markdown.replace(/^```[\s\S]*?^```$/gm, '');
	const seen = new Map<string, number>();
	const anchors = new Set<string>();
	for (const [, text] of withoutCode.matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
		const plain = text.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[`*]/g, '');
		const slug = plain
			.toLowerCase()
			.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
			.replace(/ /g, '-');
		const count = seen.get(slug) ?? 0;
		seen.set(slug, count + 1);
		anchors.add(count === 0 ? slug : `${slug}-${count}`);
	}
	return anchors;
}

const readmeAnchors = headingAnchors(read('README.md'));

/** Every URL of a codex file's `resources`, by kind. */
function codexLinks(): Array<{ file: string; kind: string; url: string }> {
	const links: Array<{ file: string; kind: string; url: string }> = [];
	for (const folder of readdirSync(join(repoRoot, 'nodes'))) {
		const file = `nodes/${folder}/${folder}.node.json`;
		let codex: { resources?: Record<string, Array<{ url: string }>> };
		try {
			codex = JSON.parse(read(file));
		} catch {
			continue; // nodes/shared has no codex file
		}
		for (const [kind, entries] of Object.entries(codex.resources ?? {}))
			for (const { url } of entries) links.push({ file, kind, url });
	}
	return links;
}

test('the anchor rules: punctuation dropped, spaces kept as hyphens, repeats numbered', () => {
	expect([
		...headingAnchors(
			'# A\n## Walkthrough: new order -> mark it packed -> e-mail me\n## The `x` (y)\n## Credentials\n## Credentials\n```sh\n# not a heading\n```',
		),
	]).toEqual([
		'a',
		'walkthrough-new-order---mark-it-packed---e-mail-me',
		'the-x-y',
		'credentials',
		'credentials-1',
	]);
});

test("the README has the headings of n8n's community-node template that users look for", () => {
	for (const anchor of [
		'credentials',
		'compatibility',
		'resources',
		'troubleshooting',
		'the-trigger-does-not-fire',
	])
		expect(readmeAnchors).toContain(anchor);
});

test("the credential's documentationUrl and every codex link point at this repository, and each anchor is a README heading", () => {
	const links = [
		{
			file: 'credentials/MarketplaceApi.credentials.ts',
			kind: 'documentationUrl',
			url: new MarketplaceApi().documentationUrl,
		},
		...codexLinks(),
	];
	expect(links.filter((l) => l.kind !== 'documentationUrl').length).toBeGreaterThanOrEqual(6);
	const problems: string[] = [];
	for (const { file, kind, url } of links) {
		const [page, anchor] = url.split('#');
		if (page !== repositoryPage) problems.push(`${file} ${kind}: ${url} is not ${repositoryPage}`);
		if (kind === 'primaryDocumentation' && anchor !== undefined)
			problems.push(`${file} ${kind}: ${url} has an anchor, which n8n's ?utm_ query would follow`);
		if (anchor !== undefined && !readmeAnchors.has(anchor))
			problems.push(`${file} ${kind}: #${anchor} is no heading of README.md`);
	}
	expect(problems).toEqual([]);
});

test("README.md's own anchors and CONTRIBUTING.md's links into README.md name its headings", () => {
	const anchors = [
		...[...read('README.md').matchAll(/\]\(#([^)]+)\)/g)].map((m) => `README.md: #${m[1]}`),
		...[...read('CONTRIBUTING.md').matchAll(/\]\(README\.md#([^)]+)\)/g)].map(
			(m) => `CONTRIBUTING.md: #${m[1]}`,
		),
	];
	expect(anchors.length).toBeGreaterThan(0);
	expect(anchors.filter((a) => !readmeAnchors.has(a.split('#')[1]))).toEqual([]);
});

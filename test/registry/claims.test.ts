/**
 * Keeps CONTRIBUTING.md's table "The README's claims and the tests behind them" true: every file it names
 * exists, and every quoted test name follows a file that contains it. Also: every local file README.md links
 * or shows exists, and the README stays within its 250 lines. Reads files only (no n8n).
 *
 *   .ci/with-node24 npx jest -c test/registry/jest.config.js test/registry/claims.test.ts
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

const repoRoot = resolve(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(repoRoot, file), 'utf8');
const readme = read('README.md');

function claimRows(): string[] {
	const contributing = read('CONTRIBUTING.md');
	const start = contributing.indexOf("## The README's claims and the tests behind them");
	expect(start).toBeGreaterThanOrEqual(0);
	const end = contributing.indexOf('\n## ', start + 1);
	return contributing
		.slice(start, end)
		.split('\n')
		.filter((line) => line.startsWith('| ') && !line.startsWith('| README claim'));
}

test('the claim table has its rows, and each names a test or a results file, or says it is not run', () => {
	const rows = claimRows();
	expect(rows.length).toBeGreaterThanOrEqual(30);
	for (const row of rows)
		expect(row.split('|')[2]).toMatch(/`(test|\.ci)\/|\]\(test\/|not run|#the-docker-recipes/);
});

test('every file the table names exists, and every quoted test name is in the file named before it', () => {
	const problems: string[] = [];
	for (const row of claimRows()) {
		const evidence = row.split('|').slice(-2, -1)[0];
		let file: string | undefined;
		for (const [, path, quoted] of evidence.matchAll(/`([^`]+)`|"([^"]+)"/g)) {
			if (path !== undefined) {
				if (!/^(test|\.ci)\//.test(path)) continue;
				if (!existsSync(join(repoRoot, path))) problems.push(`missing: ${path}`);
				file = existsSync(join(repoRoot, path)) ? path : undefined;
			} else if (!file || statSync(join(repoRoot, file)).isDirectory())
				problems.push(`no file before "${quoted}"`);
			else if (!read(file).includes(quoted)) problems.push(`not in ${file}: "${quoted}"`);
		}
		for (const [, link] of evidence.matchAll(/\]\((test\/[^)#]+)/g))
			if (!existsSync(join(repoRoot, link))) problems.push(`missing: ${link}`);
	}
	expect(problems).toEqual([]);
});

test('README.md: every local link and image exists; at most 250 lines; no test file cited', () => {
	const targets = [
		...[...readme.matchAll(/\]\(([^)#:]+)(#[^)]*)?\)/g)].map((m) => m[1]),
		...[...readme.matchAll(/<img src="([^"]+)"/g)].map((m) => m[1]),
	];
	expect(targets.length).toBeGreaterThan(5);
	expect(targets.filter((t) => !existsSync(join(repoRoot, t)))).toEqual([]);
	expect(readme.split('\n').length - 1).toBeLessThanOrEqual(250);
	expect(readme).not.toMatch(/\.test\.ts/);
});

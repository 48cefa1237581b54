// Packs the package as `npm publish` would and runs n8n's community-package scanner on it, offline.
// `npx @n8n/scan-community-package <name>` first checks the registry's provenance record and then lints
// two things: the source checkout the provenance points at (nodes, credentials, package.json) and the
// published tarball (its .js files and package.json). The provenance check needs a published version;
// both lint passes are the scanner's own exported `analyzePackage`, run here on this checkout and on
// the tarball `npm pack` makes from it. Also checks what the tarball holds: every file package.json's
// `n8n` section names, and no source maps, declarations, tests or output of deleted sources.
// Usage (after `npm run build`): node .ci/scan-package.mjs
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { analyzePackage, SOURCE_FILE_PATTERNS } from '@n8n/scan-community-package/scanner/scanner.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'tmp', 'pack');
rmSync(out, { recursive: true, force: true });
mkdirSync(path.join(out, 'package'), { recursive: true });

const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', out], { cwd: root, encoding: 'utf8' }))[0];
const tarball = path.join(out, packed.filename);
execFileSync('tar', ['-xzf', tarball, '-C', path.join(out, 'package'), '--strip-components=1']);

const problems = [];
const files = packed.files.map((f) => f.path);
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
for (const wanted of [...manifest.n8n.nodes, ...manifest.n8n.credentials, 'LICENSE', 'README.md', 'package.json']) {
	if (!files.includes(wanted)) problems.push(`missing from the tarball: ${wanted}`);
}
for (const file of files) {
	if (file.endsWith('.js') && !existsSync(path.join(root, file.replace(/^dist\//, '').replace(/\.js$/, '.ts')))) {
		problems.push(`build output without a source (run npm run build): ${file}`);
	}
	if (/\.(map|d\.ts|ts)$/.test(file) || !/^(dist\/(nodes|credentials)\/|LICENSE$|README\.md$|CHANGELOG\.md$|package\.json$)/.test(file)) {
		problems.push(`should not be published: ${file}`);
	}
}

const source = await analyzePackage(root, SOURCE_FILE_PATTERNS);
const dist = await analyzePackage(path.join(out, 'package'), ['**/*.js', 'package.json']);
for (const [leg, result] of [['source', source], ['tarball', dist]]) {
	if (!result.passed) problems.push(`scanner (${leg}): ${result.message}\n${result.details ?? ''}`);
}

const summary = `${packed.filename}: ${files.length} files, ${packed.size} bytes packed, ${packed.unpackedSize} unpacked`;
if (problems.length > 0) {
	console.error(`[scan] FAILED for ${summary}\n${problems.join('\n')}`);
	process.exit(1);
}
console.error(`[scan] ${summary}; n8n's scanner passed the source and the tarball`);

// Packs the package as `npm publish` would and runs n8n's community-package scanner on it, offline.
// `npx @n8n/scan-community-package <name>` first checks the registry's provenance record and then lints
// two things: the source checkout the provenance points at (nodes, credentials, package.json) and the
// published tarball (its .js files and package.json). The provenance check needs a published version;
// both lint passes are the scanner's own exported `analyzePackage`, run here on this checkout and on
// the tarball `npm pack` makes from it. Also checks what the tarball holds: every file package.json's
// `n8n` section names, one output schema per operation and node version of each node with operations
// (where n8n's editor asks for them), and no source maps, declarations, tests or output of deleted sources.
// Usage (after `npm run build`): node .ci/scan-package.mjs
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
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

// n8n reads `<folder of the node's .js>/__schema__/v<x.y.z>/<resource>/<operation>.json`, the version padded to three
// parts, and `__schema__/v<x.y.z>.json` for a node without resource and operation.
const padVersion = (v) => String(v).split('.').concat(['0', '0']).slice(0, 3).join('.');
const requireFromTarball = createRequire(path.join(out, 'package', 'package.json'));
const wantedSchemas = new Set();
for (const nodeFile of manifest.n8n.nodes) {
	const exported = requireFromTarball(path.join(out, 'package', nodeFile));
	const { description } = new (Object.values(exported)[0])();
	const operationProperties = description.properties.filter((p) => p.name === 'operation');
	for (const version of [description.version].flat()) {
		// a node without operations (the triggers): one schema per version, `__schema__/v<x.y.z>.json`
		if (operationProperties.length === 0) wantedSchemas.add(`${path.dirname(nodeFile)}/__schema__/v${padVersion(version)}.json`);
		for (const property of operationProperties) {
			for (const resource of property.displayOptions?.show?.resource ?? []) {
				for (const { value } of property.options) {
					wantedSchemas.add(`${path.dirname(nodeFile)}/__schema__/v${padVersion(version)}/${resource}/${value}.json`);
				}
			}
		}
	}
}
for (const wanted of wantedSchemas) {
	if (!files.includes(wanted)) {
		problems.push(`missing output schema: ${wanted}`);
		continue;
	}
	// The editor shows a preview only for a schema with a `type` and non-empty `properties`.
	const schema = JSON.parse(readFileSync(path.join(out, 'package', wanted), 'utf8'));
	if (!schema.type || Object.keys(schema.properties ?? {}).length === 0) problems.push(`output schema without fields: ${wanted}`);
}
for (const file of files.filter((f) => f.includes('/__schema__/') && !wantedSchemas.has(f))) {
	problems.push(`output schema of no operation: ${file}`);
}

const source = await analyzePackage(root, SOURCE_FILE_PATTERNS);
const dist = await analyzePackage(path.join(out, 'package'), ['**/*.js', 'package.json']);
for (const [leg, result] of [['source', source], ['tarball', dist]]) {
	if (!result.passed) problems.push(`scanner (${leg}): ${result.message}\n${result.details ?? ''}`);
}

const summary = `${packed.filename}: ${files.length} files (${wantedSchemas.size} output schemas), ${packed.size} bytes packed, ${packed.unpackedSize} unpacked`;
if (problems.length > 0) {
	console.error(`[scan] FAILED for ${summary}\n${problems.join('\n')}`);
	process.exit(1);
}
console.error(`[scan] ${summary}; n8n's scanner passed the source and the tarball`);

// `gulp build:dist`, the second step of `npm run build`, after `n8n-node build` (@n8n/node-cli), which empties
// dist/, runs tsc with tsconfig.json (the JavaScript, and the codex `*.node.json` and `__schema__` JSON files,
// which tsconfig.json's `include` names) and then copies every `*.png`, `*.svg` and `__schema__/**/*.json` of
// the checkout into dist/ under the same path. Its glob leaves out only dist/ and node_modules/, so it also
// copies the screenshots of test/ (dist/test/...) and whatever lies in tmp/ (the lint copy, the packed
// tarball: dist/tmp/...). This task is what n8n-node build lacks:
// 1. it removes from dist/ everything outside dist/nodes and dist/credentials, the folders package.json's
//    `n8n` section and `files` name, so dist/ holds the package and nothing else;
// 2. it checks that every icon, codex file and output schema of nodes/ and credentials/ is in dist/ next to
//    the compiled JavaScript, where n8n reads them (icons through the descriptions' `file:` paths, schemas
//    and codex beside the node's .js file), and fails the build if one is missing, e.g. if a release of
//    n8n-node build copied less or tsconfig.json stopped emitting the JSON files.
const fs = require('fs');
const path = require('path');
const { task } = require('gulp');

const PACKAGE_FOLDERS = ['nodes', 'credentials'];
const STATIC_FILE = /\.(png|svg)$|\.node\.json$|\/__schema__\/.*\.json$/;

task('build:dist', async function buildDist() {
	const dist = path.resolve('dist');
	if (!fs.existsSync(dist)) throw new Error('dist/ does not exist: run n8n-node build first');

	const removed = [];
	for (const entry of fs.readdirSync(dist)) {
		if (PACKAGE_FOLDERS.includes(entry)) continue;
		removed.push(...walk(path.join(dist, entry)).map((file) => path.relative('.', file)));
		fs.rmSync(path.join(dist, entry), { recursive: true, force: true });
	}
	if (removed.length > 0) {
		console.log(`[build:dist] removed ${removed.length} files outside dist/nodes and dist/credentials (${summarize(removed)})`);
	}

	const missing = [];
	for (const folder of PACKAGE_FOLDERS) {
		for (const file of walk(path.resolve(folder))) {
			const relativePath = path.relative('.', file).split(path.sep).join('/');
			if (STATIC_FILE.test(relativePath) && !fs.existsSync(path.join(dist, relativePath))) {
				missing.push(`dist/${relativePath}`);
			}
		}
	}
	if (missing.length > 0) throw new Error(`[build:dist] missing from dist/:\n${missing.join('\n')}`);
});

function walk(target) {
	if (!fs.statSync(target).isDirectory()) return [target];
	return fs.readdirSync(target).flatMap((name) => walk(path.join(target, name)));
}

// "dist/test (6 files), dist/tmp (52 files)"
function summarize(files) {
	const counts = new Map();
	for (const file of files) {
		const top = file.split(path.sep).slice(0, 2).join('/');
		counts.set(top, (counts.get(top) ?? 0) + 1);
	}
	return [...counts].map(([top, count]) => `${top} (${count} files)`).join(', ');
}

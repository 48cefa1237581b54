// Copies node and credential icons, the nodes' codex .node.json files and their output schemas
// (`__schema__/v<x.y.z>/<resource>/<operation>.json`) next to the compiled JavaScript in dist/, where n8n
// reads them: icons through the descriptions' `file:` paths, schemas beside the node's .js file.
const path = require('path');
const { finished } = require('stream/promises');
const { task, src, dest } = require('gulp');

task('build:icons', copyIcons);

// Both copies are awaited, so the build ends only once every file is in dist/.
async function copyIcons() {
	const nodeSource = path.resolve('nodes', '**', '*.{png,svg,json}');
	const nodeDestination = path.resolve('dist', 'nodes');
	const credSource = path.resolve('credentials', '**', '*.{png,svg}');
	const credDestination = path.resolve('dist', 'credentials');
	await Promise.all([
		finished(src(nodeSource, { encoding: false }).pipe(dest(nodeDestination))),
		finished(src(credSource, { encoding: false }).pipe(dest(credDestination))),
	]);
}

// `npm run lint` (--max-warnings 0). The package's sources and package.json get n8n's own community-node
// config, imported from @n8n/node-cli (what `n8n-node lint` runs), so it follows n8n's releases instead
// of drifting. The tests are not published and are not n8n nodes: they get typescript-eslint's
// recommended rules only, the same blocks node-cli's config contains.
import { config as n8nNodeConfig } from '@n8n/node-cli/eslint';

const TS_RECOMMENDED = new Set(['typescript-eslint/base', 'typescript-eslint/eslint-recommended', 'typescript-eslint/recommended']);
const isGlobalIgnore = (block) => Object.keys(block).every((key) => key === 'ignores' || key === 'name');

export default [
	{ ignores: ['dist/**', 'tmp/**', '.ci/**', 'gulpfile.js'] },
	...n8nNodeConfig.map((block) => (isGlobalIgnore(block) ? block : { ...block, ignores: [...(block.ignores ?? []), 'test/**'] })),
	...n8nNodeConfig.filter((block) => TS_RECOMMENDED.has(block.name)).map((block) => ({ ...block, files: ['test/**/*.ts'] })),
];

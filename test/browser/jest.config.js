// Browser suite (test/browser): headless Chromium against a real n8n 2.41.1 (test/e2e/n8n.ts). One
// worker (one n8n, about 0.9 GB, plus Chromium) and generous timeouts.
//   .ci/browser-install && .ci/with-node24 npx jest -c test/browser/jest.config.js
/** @type {import('jest').Config} */
module.exports = {
	...require('../e2e/jest.config.js'),
	roots: ['<rootDir>/test/browser'],
	testTimeout: 120_000,
};

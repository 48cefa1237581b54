// End-to-end suite against a real n8n 2.41.1 (test/e2e/n8n.ts): one worker, since each file may
// boot an n8n (about 0.9 GB and 10-15 s), and generous timeouts.
//   .ci/with-node24 npx jest -c test/e2e/jest.config.js
/** @type {import('jest').Config} */
module.exports = {
	rootDir: '../..',
	roots: ['<rootDir>/test/e2e'],
	testEnvironment: 'node',
	testMatch: ['**/*.test.ts'],
	transform: {
		'^.+\\.ts$': [
			'ts-jest',
			{
				tsconfig: {
					isolatedModules: true,
					module: 'commonjs',
					target: 'es2022',
					esModuleInterop: true,
					resolveJsonModule: true,
					strict: true,
				},
			},
		],
	},
	testTimeout: 300_000,
	maxWorkers: 1,
	passWithNoTests: true,
};

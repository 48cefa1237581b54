// Registry suite (test/registry): the package packed, published to a private registry on loopback and
// installed, updated and removed through a real n8n 2.41.1's community-packages API. One worker
// (one n8n, about 0.9 GB) and generous timeouts.
//   .ci/registry-install && .ci/with-node24 npx jest -c test/registry/jest.config.js
/** @type {import('jest').Config} */
module.exports = {
	...require('../e2e/jest.config.js'),
	roots: ['<rootDir>/test/registry'],
	passWithNoTests: false,
};

// The queue-mode suite (real n8n 2.41.1 processes, PostgreSQL, Redis): same settings as the
// end-to-end suite, its own folder.
//   .ci/with-node24 npx jest -c test/queue/jest.config.js
const e2e = require('../e2e/jest.config.js');
/** @type {import('jest').Config} */
module.exports = { ...e2e, roots: ['<rootDir>/test/queue'] };

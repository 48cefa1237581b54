/**
 * JSON a server under test answered (n8n's REST and public API, the sandbox): deliberately untyped,
 * because the tests' assertions are what check its shape.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

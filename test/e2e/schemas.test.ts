/**
 * End-to-end: a real n8n 2.41.1 serves the Marketplace node's output schemas at the path its editor asks
 * for (`GET /schemas/<node type>/<x.y.z>/<resource>/<operation>.json`, no sign-in), for every operation
 * and every version n8n lists for the node, and for its AI tool variant too; what is not shipped is 404.
 *
 *   .ci/with-node24 npm run build && .ci/with-node24 npx jest -c test/e2e/jest.config.js test/e2e/schemas.test.ts
 */
import { resolve } from 'node:path';

import { operations } from '../../nodes/Marketplace/actions/resources';
import { OUTPUT_SCHEMAS, readCommitted } from '../schema/outputSchemas';
import { startN8n, type N8nHandle } from './n8n';

const repoRoot = resolve(__dirname, '..', '..');
const ACTION = 'n8n-nodes-marketplace-management.marketplace';
/** The type n8n derives for the node as an AI Agent tool (it has `usableAsTool`). */
const TOOL = `${ACTION}Tool`;
const KEYS = Object.entries(operations).flatMap(([resource, ops]) =>
	Object.keys(ops).map((op) => `${resource}/${op}`),
);
/** The editor pads the node version to three parts (its getSchemaPreview). */
const pad = (version: number) =>
	String(version).split('.').concat(['0', '0']).slice(0, 3).join('.');

let n8n: N8nHandle;
let versions: number[] = [];
let resourceOptions: unknown[] = [];

/** What the editor's request gets: no cookie, as the editor sends it (`withCredentials: false`). */
const schemaAt = async (type: string, version: string, key: string) =>
	await fetch(`${n8n.baseUrl}/schemas/${type}/${version}/${key}.json`);

beforeAll(async () => {
	n8n = await startN8n({ packageRoot: repoRoot });
	await n8n.setupOwner();
	const types = (await (await n8n.fetch('/types/nodes.json')).json()) as Array<{
		name: string;
		version: number | number[];
		properties: Array<{ name: string; options?: Array<{ value: unknown }> }>;
	}>;
	const action = types.find((t) => t.name === ACTION);
	expect(action).toBeDefined();
	versions = [action!.version].flat();
	resourceOptions = action!.properties
		.filter((p) => p.name === 'resource')
		.flatMap((p) => (p.options ?? []).map((o) => o.value));
}, 180_000);

afterAll(async () => await n8n?.stop());

test('n8n lists the Marketplace node in its one version, 1', () => {
	expect(versions).toEqual([1]);
});

test('the editor\'s types offer "Custom API Call": n8n adds it for a credential whose type carries authenticate (the generic object)', () => {
	expect(resourceOptions).toContain('webhookEndpoint');
	expect(resourceOptions).toContain('__CUSTOM_API_CALL__');
});

test("every operation's schema, in every version, at the editor's path: the committed file, one the editor accepts", async () => {
	for (const version of versions) {
		for (const key of KEYS) {
			const response = await schemaAt(ACTION, pad(version), key);
			const body =
				response.status === 200 ? ((await response.json()) as Record<string, unknown>) : undefined;
			expect({ version, key, status: response.status }).toEqual({ version, key, status: 200 });
			expect(body).toEqual(JSON.parse(readCommitted(version, key)!));
			expect(body).toEqual(OUTPUT_SCHEMAS[key]);
			// The editor's own check before it shows a preview: a type and non-empty properties.
			expect(body!.type).toBe('object');
			expect(Object.keys(body!.properties as object).length).toBeGreaterThan(0);
		}
	}
});

test('the AI tool variant of the node resolves to the same files', async () => {
	for (const key of ['order/getAll', 'fulfillment/markPacked', 'webhookEndpoint/create']) {
		const response = await schemaAt(TOOL, '1.0.0', key);
		expect(response.status).toBe(200);
		expect(await response.json()).toEqual(OUTPUT_SCHEMAS[key]);
	}
});

test('what the package does not ship is 404: an unknown operation, a version the node does not have', async () => {
	expect((await schemaAt(ACTION, '1.0.0', 'order/cancel')).status).toBe(404);
	expect((await schemaAt(ACTION, '2.0.0', 'order/getAll')).status).toBe(404);
});

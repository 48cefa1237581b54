/**
 * The output schemas cannot drift from the output: every operation of the Marketplace node runs, in
 * each node version, in n8n-core's engine against the sandbox over HTTP, and every output item must
 * validate (Ajv) against the committed schema file n8n's editor would read for that version. Every
 * field a schema lists must also turn up in some item, so a schema cannot promise what never comes.
 * The committed files must equal test/schema/outputSchemas.ts; RECORD_RESULTS=1 writes them.
 *
 * Run: .ci/with-node24 npx jest test/schema/outputSchemas.test.ts
 */
import path from 'node:path';

import type { ValidateFunction } from 'ajv';
import { loadOutputSchema, resolveOutputSchemaPath } from 'n8n-core';
import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { operations } from '../../nodes/Marketplace/actions/resources';
import { useSteppedClock } from '../action/clock';
import { fixtureWithReceiver, items, node } from '../action/helpers';
import {
	OUTPUT_SCHEMAS,
	SCHEMA_ROOT,
	committedFiles,
	readCommitted,
	schemaValidator,
	serialize,
	versionFolder,
	writeSchemas,
	type JsonSchema,
} from './outputSchemas';

const VERSIONS = [node.description.version].flat();
const KEYS = Object.entries(operations).flatMap(([resource, ops]) =>
	Object.keys(ops).map((op) => `${resource}/${op}`),
);
const RECORD = process.env.RECORD_RESULTS === '1';

const { fixture, receiver } = fixtureWithReceiver();
afterEach(async () => await fixture.control.clearFaults());
// Retries after an injected fault wait on the stepped clock instead of real time.
useSteppedClock(() => fixture.control);

beforeAll(() => {
	if (RECORD) writeSchemas(VERSIONS);
});

const ajv = schemaValidator();
const validators = new Map<string, ValidateFunction>();
function validatorFor(version: number, key: string): ValidateFunction {
	const id = `${version} ${key}`;
	if (!validators.has(id)) {
		const file = readCommitted(version, key);
		if (file === undefined) throw new Error(`no schema file ${versionFolder(version)}/${key}.json`);
		validators.set(id, ajv.compile(JSON.parse(file) as JsonSchema));
	}
	return validators.get(id)!;
}

/** Top-level fields seen in valid items, per operation, over all versions. */
const seen = new Map<string, Set<string>>(KEYS.map((k) => [k, new Set<string>()]));

/** Runs one operation and checks every output item against the version's schema file. */
async function runAndValidate(
	version: number,
	parameters: INodeParameters,
	inputItems?: INodeExecutionData[],
) {
	const key = `${String(parameters.resource)}/${String(parameters.operation)}`;
	const r = await fixture.run(parameters, { typeVersion: version, inputItems });
	expect(r.error).toBeUndefined();
	expect(r.items.length).toBeGreaterThan(0);
	const validate = validatorFor(version, key);
	for (const out of r.items) {
		// n8n keeps and passes items as JSON, in which a field set to undefined does not exist.
		const json = JSON.parse(JSON.stringify(out.json)) as IDataObject;
		const valid = validate(json);
		expect({ item: json, errors: valid ? null : validate.errors }).toEqual({
			item: json,
			errors: null,
		});
		for (const field of Object.keys(json)) seen.get(key)!.add(field);
	}
	return r.items;
}

test("one schema per operation: the node's operations and the schemas name the same ones", () => {
	expect(Object.keys(OUTPUT_SCHEMAS).sort()).toEqual([...KEYS].sort());
});

test('the committed files are the schemas, one per operation and node version, and nothing else', () => {
	const expected = VERSIONS.flatMap((v) => KEYS.map((k) => `${versionFolder(v)}/${k}.json`)).sort();
	expect(committedFiles().sort()).toEqual(expected);
	for (const version of VERSIONS) {
		for (const key of KEYS) {
			expect({ key, file: readCommitted(version, key) }).toEqual({
				key,
				file: serialize(OUTPUT_SCHEMAS[key]),
			});
		}
	}
});

test('each schema is one the editor accepts: an object type with fields, each field described', () => {
	for (const [key, schema] of Object.entries(OUTPUT_SCHEMAS)) {
		// n8n's editor refuses a preview without `type` and non-empty `properties` (its isValidJsonSchema).
		expect({ key, type: schema.type }).toEqual({ key, type: 'object' });
		const properties = schema.properties as Record<string, JsonSchema>;
		expect(Object.keys(properties).length).toBeGreaterThan(0);
		for (const [field, definition] of Object.entries(properties)) {
			expect({ key, field, description: typeof definition.description }).toEqual({
				key,
				field,
				description: 'string',
			});
		}
		expect(() => ajv.compile(schema)).not.toThrow();
	}
});

test("n8n-core finds each file the way n8n reads it: the editor's route by exact version, the AI workflow builder with its fallback", () => {
	const nodeDir = path.dirname(SCHEMA_ROOT);
	for (const version of VERSIONS) {
		for (const key of KEYS) {
			const [resource, operation] = key.split('/');
			const expected = path.join(SCHEMA_ROOT, versionFolder(version), `${key}.json`);
			expect(resolveOutputSchemaPath({ nodeDir, version, resource, operation })).toBe(expected);
			expect(
				loadOutputSchema({ nodeDir, version, resource, operation, versionFallback: true }),
			).toEqual(OUTPUT_SCHEMAS[key]);
		}
	}
});

describe.each(VERSIONS)(
	'node version %i: every output item validates against its schema file',
	(version) => {
		/** A brand or endpoint as its picker holds it, set to By ID. */
		const pick = (id: number | string) => ({ __rl: true, mode: 'id', value: String(id) });
		let endpointId = 0;

		test('brand: Get Many', async () => {
			await runAndValidate(version, { resource: 'brand', operation: 'getAll', returnAll: true });
		});

		test('brand health: Get', async () => {
			await runAndValidate(version, {
				resource: 'brandHealth',
				operation: 'get',
				brandId: pick(2),
				filters: {},
			});
		});

		test('fulfillment: Mark Orders Packed, with orders packed, missing, already packed, and one whose answer was lost', async () => {
			const created = [
				(await fixture.control.createOrder({ brandId: 1 })).order.id,
				(await fixture.control.createOrder({ brandId: 2 })).order.id,
			];
			const packed = (await fixture.control.createOrder({ brandId: 1, status: 'Packed' })).order.id;
			const out = await runAndValidate(
				version,
				{ resource: 'fulfillment', operation: 'markPacked', orderIds: '={{ $json.ids }}' },
				items({ ids: created.join(',') }, { ids: `${packed}, 999999` }),
			);
			expect(out.map((i) => i.json.success)).toEqual([true, true, false, false]);
			// A 500 after the effect: the retry answers conflict, the node reads the order back and adds a note.
			const lost = (await fixture.control.createOrder({ brandId: 1 })).order.id;
			await fixture.control.injectFault({
				route: 'markOrdersPacked',
				mode: '500',
				when: 'after',
				count: 1,
			});
			const [settled] = await runAndValidate(version, {
				resource: 'fulfillment',
				operation: 'markPacked',
				orderIds: String(lost),
			});
			expect(settled.json.note).toEqual(expect.any(String));
		});

		test('inventory forecast: Get Many', async () => {
			await runAndValidate(version, {
				resource: 'inventoryForecast',
				operation: 'getAll',
				limit: 30,
				filters: {},
			});
		});

		test('order: Get and Get Many', async () => {
			const orders = await runAndValidate(version, {
				resource: 'order',
				operation: 'getAll',
				filters: { brandIds: '1' },
			});
			await runAndValidate(version, {
				resource: 'order',
				operation: 'get',
				orderId: String(orders[0].json.id),
			});
		});

		test('product: Get Many', async () => {
			await runAndValidate(version, {
				resource: 'product',
				operation: 'getAll',
				limit: 20,
				filters: {},
			});
		});

		test('purchase order: Get Many and Export', async () => {
			await runAndValidate(version, {
				resource: 'purchaseOrder',
				operation: 'getAll',
				returnAll: true,
				filters: {},
			});
			await runAndValidate(version, {
				resource: 'purchaseOrder',
				operation: 'export',
				filters: {},
			});
		});

		test('return: Get Many', async () => {
			await runAndValidate(version, {
				resource: 'return',
				operation: 'getAll',
				returnAll: true,
				filters: {},
			});
		});

		test.each([
			['connected', 'Amazon', { apiKey: 'k', apiSecret: 's' }, 'Connected'],
			["awaiting the merchant's approval", 'Shopify', {}, 'PendingAuthorization'],
			['failed', 'Amazon', {}, 'Error'],
			[
				'with a fulfillment setup',
				'Zalando',
				{ fulfillmentModel: 'Merchant', inventoryScope: 'All' },
				'Connected',
			],
		])('sale channel: Connect, %s', async (_, saleChannelName, additionalFields, status) => {
			const [out] = await runAndValidate(version, {
				resource: 'saleChannel',
				operation: 'connect',
				brandId: pick(3),
				saleChannelName,
				additionalFields,
			});
			expect(out.json.status).toBe(status);
		});

		test('webhook endpoint: Create, Get, Get Many, Test, Get Deliveries, Update, Rotate Secret, Delete', async () => {
			const [created] = await runAndValidate(version, {
				resource: 'webhookEndpoint',
				operation: 'create',
				url: receiver().url,
				eventTypes: ['order.created'],
				description: `schema check v${version}`,
			});
			endpointId = created.json.id as number;
			const endpoint = { endpointId: pick(endpointId) };
			await runAndValidate(version, { resource: 'webhookEndpoint', operation: 'get', ...endpoint });
			await runAndValidate(version, { resource: 'webhookEndpoint', operation: 'getAll' });
			await runAndValidate(version, {
				resource: 'webhookEndpoint',
				operation: 'test',
				...endpoint,
			});
			await runAndValidate(version, {
				resource: 'webhookEndpoint',
				operation: 'getDeliveries',
				returnAll: true,
				...endpoint,
			});
			await runAndValidate(version, {
				resource: 'webhookEndpoint',
				operation: 'update',
				updateFields: { status: 'Disabled' },
				...endpoint,
			});
			await runAndValidate(version, {
				resource: 'webhookEndpoint',
				operation: 'rotateSecret',
				...endpoint,
			});
			await runAndValidate(version, {
				resource: 'webhookEndpoint',
				operation: 'delete',
				...endpoint,
			});
		});
	},
);

test('every field a schema lists turned up in some output item', () => {
	const unseen = KEYS.flatMap((key) =>
		Object.keys(OUTPUT_SCHEMAS[key].properties as object)
			.filter((field) => !seen.get(key)!.has(field))
			.map((field) => `${key}: ${field}`),
	);
	expect(unseen).toEqual([]);
});

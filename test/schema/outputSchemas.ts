/**
 * The output schemas of the Marketplace node, one per operation: the source of the JSON files in
 * nodes/Marketplace/__schema__/v<version>/<resource>/<operation>.json, which n8n's editor shows as a
 * preview of a node that has not run yet. Fields the service documents carry their documented types
 * and say which are always there; records whose fields the documentation does not show list only the
 * fields the node, its triggers or its example workflows rely on. Every record stays open to more
 * fields (`additionalProperties`), because the service may add fields within v1.
 *
 * outputSchemas.test.ts checks that the committed files equal these and that every output item of
 * every operation validates against its schema; RECORD_RESULTS=1 writes the files.
 */
import {
	existsSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	rmSync,
	statSync,
	writeFileSync,
} from 'node:fs';
import path from 'node:path';

import Ajv from 'ajv';

export type JsonSchema = Record<string, unknown>;

export const SCHEMA_ROOT = path.join(__dirname, '..', '..', 'nodes', 'Marketplace', '__schema__');

const text = (description: string, extra: JsonSchema = {}): JsonSchema => ({
	type: 'string',
	description,
	...extra,
});
const whole = (description: string, extra: JsonSchema = {}): JsonSchema => ({
	type: 'integer',
	description,
	...extra,
});
const timestamp = (description: string): JsonSchema =>
	text(`${description} (date and time, UTC)`, { format: 'date-time' });
/** An id whose type the service's documentation does not state. */
const someId = (description: string): JsonSchema => ({ type: ['integer', 'string'], description });

/** One output item: an object with these fields, the `required` ones always present, open to more. */
function item(
	description: string,
	properties: Record<string, JsonSchema>,
	required: string[],
): JsonSchema {
	return {
		$schema: 'http://json-schema.org/draft-07/schema#',
		type: 'object',
		description,
		properties,
		required,
		additionalProperties: true,
	};
}

const RECORD_ID =
	'Its ID in the service, the same in every run (use it to match records between runs)';

const ENDPOINT_FIELDS: Record<string, JsonSchema> = {
	id: whole("The webhook endpoint's ID: use it to get, change, test or delete the endpoint"),
	url: text('The https address the service sends events to'),
	description: text('Your note to recognise the endpoint by'),
	eventTypes: {
		type: 'array',
		description: 'The events sent to this address, e.g. order.created',
		items: { type: 'string' },
	},
	status: text('Enabled: events are sent. Disabled: nothing is sent until you enable it again', {
		enum: ['Enabled', 'Disabled'],
	}),
	disabledReason: {
		type: ['string', 'null'],
		description:
			'Why the service disabled the endpoint: FailingDeliveries after 5 days without a successful delivery; empty (null) otherwise',
	},
	createdAt: timestamp('When the endpoint was created'),
	updatedAt: timestamp('When the endpoint was last changed'),
};
const ENDPOINT_REQUIRED = Object.keys(ENDPOINT_FIELDS);

const endpoint = (description: string) => item(description, ENDPOINT_FIELDS, ENDPOINT_REQUIRED);

const endpointWithSecret = (description: string) =>
	item(
		description,
		{
			...ENDPOINT_FIELDS,
			secret: text(
				'The signing secret (starts with whsec_). Shown only in this answer: store it now, the service never returns it again',
				{
					pattern: '^whsec_',
				},
			),
			secretNotice: text('A reminder that the secret is shown only once'),
		},
		[...ENDPOINT_REQUIRED, 'secret', 'secretNotice'],
	);

const delivery = (description: string) =>
	item(description, { id: someId(`The delivery's ID. ${RECORD_ID}`) }, ['id']);

const ORDER = item(
	'One order (the service sends more fields than listed here)',
	{
		id: whole("The order's ID: use it with Order > Get or Fulfillment > Mark Orders Packed"),
		status: text('Where the order stands, e.g. Created, Packed, Cancelled or Returned'),
		createdAt: text('When the order was placed'),
		updatedAt: text('When the order last changed'),
	},
	['id', 'status'],
);

const listed = (what: string) =>
	item(
		`One ${what} (the service sends more fields than listed here)`,
		{ id: someId(`The ${what}'s ID. ${RECORD_ID}`) },
		['id'],
	);

/** Output schema of each operation, by `<resource>/<operation>` (the parameter values). */
export const OUTPUT_SCHEMAS: Record<string, JsonSchema> = {
	'brand/getAll': item(
		'One brand your API key may see',
		{
			id: whole("The brand's ID: use it wherever a Brand is asked for"),
			name: text("The brand's name"),
		},
		['id'],
	),
	'brandHealth/get': item(
		"The brand's health (the service sends more fields than listed here)",
		{
			categories: {
				type: 'array',
				description: 'The categories the health is reported for',
				items: { type: 'string' },
			},
			dimensions: {
				type: 'array',
				description: 'Each health dimension and the band it is in',
				items: {
					type: 'object',
					properties: {
						dimension: text('What is measured'),
						band: text('The band the dimension is in now'),
					},
					additionalProperties: true,
				},
			},
		},
		['categories'],
	),
	'fulfillment/markPacked': item(
		'The result for one order: packed, or why not',
		{
			orderId: whole('The order this result is about'),
			success: {
				type: 'boolean',
				description: 'true: the order is now packed. false: it is not; see error',
			},
			status: text("The order's status afterwards, e.g. Packed (when it worked)"),
			error: {
				type: 'object',
				description: 'Why the order was not packed (only when success is false)',
				properties: {
					type: text(
						'A fixed code for the kind of failure, e.g. one ending in not-found or conflict',
					),
					title: text('The kind of failure, in short'),
					detail: text('What went wrong with this order'),
				},
				additionalProperties: true,
			},
			note: text(
				'Extra explanation, e.g. that an earlier attempt whose answer was lost had already packed the order',
			),
			requestId: text(
				"The ID of the request that carried this order: quote it when you ask the service's support",
			),
			attempts: whole(
				'How many times the order was sent (more than 1 when failed orders were resent)',
				{ minimum: 1 },
			),
		},
		['orderId', 'success', 'requestId', 'attempts'],
	),
	'inventoryForecast/getAll': listed('inventory forecast'),
	'order/get': ORDER,
	'order/getAll': ORDER,
	'product/getAll': listed('product'),
	'purchaseOrder/export': listed('purchase order'),
	'purchaseOrder/getAll': listed('purchase order'),
	'return/getAll': listed('return'),
	'saleChannel/connect': item(
		"The brand's connection to the marketplace",
		{
			id: { type: 'number', description: "The connection's ID (not always given)" },
			brandId: { type: 'number', description: 'The brand that was connected' },
			saleChannelName: text('The marketplace, e.g. Amazon'),
			status: text('The state of the connection, as the service names it'),
			connectionDate: text('When the connection was made'),
			connectionError: text('Why the connection failed, when it did'),
			oauthUrl: text(
				"For marketplaces that need the merchant's approval: the address the merchant opens to approve the connection",
			),
			sellerFulfillmentSetup: {
				type: 'object',
				description:
					'How orders are fulfilled for this brand on the marketplace; its fields depend on the marketplace',
				additionalProperties: true,
			},
		},
		['brandId', 'saleChannelName', 'status', 'connectionDate'],
	),
	'webhookEndpoint/create': endpointWithSecret('The new webhook endpoint and its signing secret'),
	'webhookEndpoint/delete': item(
		'The endpoint that was deleted',
		{
			id: whole("The deleted endpoint's ID"),
			deleted: {
				type: 'boolean',
				const: true,
				description: 'Always true: the endpoint no longer exists',
			},
		},
		['id', 'deleted'],
	),
	'webhookEndpoint/get': endpoint('One of your webhook endpoints (never its secret)'),
	'webhookEndpoint/getAll': endpoint('One of your webhook endpoints (never its secret)'),
	'webhookEndpoint/getDeliveries': delivery(
		'One event sent to the endpoint, newest first (the service sends more fields than listed here)',
	),
	'webhookEndpoint/rotateSecret': endpointWithSecret(
		'The webhook endpoint and its new signing secret (the old one keeps working for 24 hours)',
	),
	'webhookEndpoint/test': delivery(
		'The test event sent to the endpoint (the service sends more fields than listed here)',
	),
	'webhookEndpoint/update': endpoint('The webhook endpoint as it is after the change'),
};

/** n8n pads the node version to x.y.z for the folder name: version 1 is `v1.0.0`. */
export const versionFolder = (version: number) =>
	`v${String(version).split('.').concat(['0', '0']).slice(0, 3).join('.')}`;

export const schemaFile = (version: number, key: string) =>
	path.join(SCHEMA_ROOT, versionFolder(version), `${key}.json`);

export const serialize = (schema: JsonSchema) => `${JSON.stringify(schema, null, '\t')}\n`;

/** Every JSON file under the schema folder, as `<version folder>/<resource>/<operation>.json`. */
export function committedFiles(dir = SCHEMA_ROOT, prefix = ''): string[] {
	if (!existsSync(dir)) return [];
	return readdirSync(dir).flatMap((name) => {
		const full = path.join(dir, name);
		return statSync(full).isDirectory()
			? committedFiles(full, `${prefix}${name}/`)
			: [`${prefix}${name}`];
	});
}

export function readCommitted(version: number, key: string): string | undefined {
	const file = schemaFile(version, key);
	return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}

/** Writes one file per operation and version (and nothing else) under the schema folder. */
export function writeSchemas(versions: number[]): void {
	rmSync(SCHEMA_ROOT, { recursive: true, force: true });
	for (const version of versions) {
		for (const [key, schema] of Object.entries(OUTPUT_SCHEMAS)) {
			const file = schemaFile(version, key);
			mkdirSync(path.dirname(file), { recursive: true });
			writeFileSync(file, serialize(schema));
		}
	}
}

/** The validator the schema tests check items with: strict, and timestamps ISO 8601 in UTC, as the service documents them. */
export function schemaValidator(): Ajv {
	return new Ajv({ strict: true, allowUnionTypes: true, allErrors: true }).addFormat('date-time', {
		type: 'string',
		validate: (s: string) =>
			/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(s) && !Number.isNaN(Date.parse(s)),
	});
}

/**
 * The output schemas of the two triggers: the source of nodes/MarketplaceTrigger/__schema__/v<x.y.z>.json
 * and nodes/MarketplacePollingTrigger/__schema__/v1.0.0.json. n8n 2.41.1's editor shows no preview of a
 * trigger's output, but it asks for these files, and n8n's AI workflow builder (Instance AI) reads them to
 * know a trigger's fields. triggerSchemas.test.ts runs both triggers in n8n-core's engine and validates
 * every item; RECORD_RESULTS=1 writes the files.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import type { JsonSchema } from './outputSchemas';

const nodesDir = path.join(__dirname, '..', '..', 'nodes');
const text = (description: string, extra: JsonSchema = {}): JsonSchema => ({
	type: 'string',
	description,
	...extra,
});
const timestamp = (description: string): JsonSchema =>
	text(`${description} (date and time, UTC)`, { format: 'date-time' });
const open = (
	description: string,
	properties: Record<string, JsonSchema> = {},
	required: string[] = [],
): JsonSchema => ({
	type: 'object',
	description,
	properties,
	required,
	additionalProperties: true,
});

const ORDER_FIELDS: Record<string, JsonSchema> = {
	id: { type: 'integer', description: "The order's ID" },
	status: text("The order's status now, e.g. Created or Packed"),
	createdAt: timestamp('When the order was created'),
	updatedAt: timestamp('When the order last changed'),
};

export const MARKETPLACE_TRIGGER_SCHEMA: JsonSchema = {
	$schema: 'http://json-schema.org/draft-07/schema#',
	...open(
		'One event from the service: what changed names only IDs (read the order or brand health for its state, or turn on Fetch Current State)',
		{
			id: text("The event's ID, the same on every delivery of it"),
			type: text('What happened, e.g. order.created or brand_health.band_entered'),
			createdAt: timestamp('When it happened (events arrive in any order: sort by this)'),
			data: open('The IDs of what changed', {
				brandId: { type: 'integer', description: 'The brand' },
				orderId: { type: 'integer', description: 'The order (order events)' },
				dimension: text('The brand health dimension (brand health events)'),
				band: text('The band it entered or left (brand health events)'),
				webhookEndpointId: { type: 'integer', description: 'The endpoint tested (webhook.test)' },
			}),
			current: open('With Fetch Current State: the order or brand health as it is now'),
			currentError: open(
				'With Fetch Current State: why that read failed',
				{ message: text('What went wrong') },
				['message'],
			),
			headers: open("With Include Headers: the delivery's HTTP headers"),
			caughtUp: {
				type: 'boolean',
				const: true,
				description:
					'Only on an order brought by Catch Up Missed Orders: its Order Created event had not run',
			},
			sample: {
				type: 'boolean',
				const: true,
				description:
					'Only on the item of "Listen for test event" after a Webhook Endpoint > Test: a sample made from a real record (or made up), not an event',
			},
			sampleSource: text(
				'Only on a sample: what it was made from (newest-order, brand-health or synthetic)',
			),
			sampleNote: text('Only on a sample: what it is, in words'),
			storageWarning: text(
				"Only where n8n's deduplication store could not be used: what failed, and that a copy of this event may run again",
			),
		},
		['id', 'type', 'createdAt', 'data'],
	),
};

export const POLLING_TRIGGER_SCHEMA: JsonSchema = {
	$schema: 'http://json-schema.org/draft-07/schema#',
	...open(
		"An order that is new, or whose status changed, since the last check (the order's own fields and how it changed)",
		{
			...ORDER_FIELDS,
			brandId: { type: 'integer', description: "The order's brand" },
			change: open(
				'What the check saw',
				{
					kind: text('created: a new order; statusChanged: its status changed', {
						enum: ['created', 'statusChanged'],
					}),
					status: text('Its status now'),
					previousStatus: text('Its status at the previous check (status changes)'),
					detectedAt: timestamp('When the check saw it'),
				},
				['kind', 'status', 'detectedAt'],
			),
			sample: {
				type: 'boolean',
				const: true,
				description:
					'Only on the item of Fetch Test Event: a sample made from a real order, not a detected change',
			},
			sampleSource: text('Only on a sample: what it was made from (newest-order)'),
			sampleNote: text('Only on a sample: what it is, in words'),
		},
		['id', 'change'],
	),
};

/** The committed file of each schema (the Marketplace Trigger's one version is 2). */
export const TRIGGER_SCHEMA_FILES: Record<string, JsonSchema> = {
	'MarketplaceTrigger/__schema__/v2.0.0.json': MARKETPLACE_TRIGGER_SCHEMA,
	'MarketplacePollingTrigger/__schema__/v1.0.0.json': POLLING_TRIGGER_SCHEMA,
};

export const triggerSchemaPath = (file: string) => path.join(nodesDir, file);

export const readTriggerSchema = (file: string): JsonSchema =>
	JSON.parse(readFileSync(triggerSchemaPath(file), 'utf8')) as JsonSchema;

export function writeTriggerSchemas(serialize: (schema: JsonSchema) => string): void {
	for (const [file, schema] of Object.entries(TRIGGER_SCHEMA_FILES))
		writeFileSync(triggerSchemaPath(file), serialize(schema));
}

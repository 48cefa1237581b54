/**
 * The triggers' output schemas cannot drift from their items: the Marketplace Trigger (events with and
 * without Fetch Current State and Include Headers, a brand health event, the item after refusals, a
 * catch-up run with its notice) and the Marketplace Polling Trigger (a new order, a status change, its sample) run
 * in n8n-core's engine against the sandbox, and every item must validate against the committed file;
 * every field a schema lists must turn up. n8n-core's resolver must find each file where n8n looks.
 *
 * Run: .ci/with-node24 npx jest test/schema/triggerSchemas.test.ts
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { resolveOutputSchemaPath } from 'n8n-core';
import type { IDataObject } from 'n8n-workflow';

import { MarketplaceApi } from '../../credentials/MarketplaceApi.credentials';
import { MarketplacePollingTrigger } from '../../nodes/MarketplacePollingTrigger/MarketplacePollingTrigger.node';
import { parseSecret, signWebhook } from '../../nodes/shared/webhookVerifier';
import { createPollHarness } from '../engine/harness';
import { transportClock } from '../../nodes/shared/transport/clock';
import { outageOf, recordOf, SharedClock, startAgain, TriggerBench } from '../trigger/helpers';
import { schemaValidator, serialize, type JsonSchema } from './outputSchemas';
import {
	TRIGGER_SCHEMA_FILES,
	readTriggerSchema,
	triggerSchemaPath,
	writeTriggerSchemas,
} from './triggerSchemas';

const bench = new TriggerBench();
const shared = new SharedClock(bench);
const ajv = schemaValidator();
const seen = new Map<string, Set<string>>();

beforeAll(async () => {
	if (process.env.RECORD_RESULTS === '1') {
		for (const file of Object.keys(TRIGGER_SCHEMA_FILES))
			mkdirSync(path.dirname(triggerSchemaPath(file)), { recursive: true });
		writeTriggerSchemas(serialize);
	}
	await bench.start();
});
afterAll(async () => await bench.close());

/** Validates items against a committed file and notes their fields (and those of `data` and `notice`). */
function check(file: string, items: IDataObject[]): void {
	const validate = ajv.compile(readTriggerSchema(file));
	const fields = seen.get(file) ?? new Set<string>();
	seen.set(file, fields);
	for (const raw of items) {
		const json = JSON.parse(JSON.stringify(raw)) as IDataObject;
		const valid = validate(json);
		expect({ item: json, errors: valid ? null : validate.errors }).toEqual({
			item: json,
			errors: null,
		});
		for (const [key, value] of Object.entries(json)) {
			fields.add(key);
			if (value && typeof value === 'object' && !Array.isArray(value))
				for (const inner of Object.keys(value)) fields.add(`${key}.${inner}`);
		}
	}
}

test('the committed files equal the source, and n8n-core finds each where n8n looks (exact version, and with fallback)', () => {
	for (const [file, schema] of Object.entries(TRIGGER_SCHEMA_FILES)) {
		expect(readFileSync(triggerSchemaPath(file), 'utf8')).toBe(serialize(schema));
		const [nodeFolder, , versionFile] = file.split('/');
		const version = versionFile.replace(/^v|\.json$/g, '');
		const nodeDir = path.join(triggerSchemaPath(nodeFolder));
		expect(resolveOutputSchemaPath({ nodeDir, version })).toBe(triggerSchemaPath(file));
		expect(resolveOutputSchemaPath({ nodeDir, version, versionFallback: true })).toBe(
			triggerSchemaPath(file),
		);
	}
});

test('Marketplace Trigger: every item validates', async () => {
	shared.install();
	try {
		const file = 'MarketplaceTrigger/__schema__/v2.0.0.json';
		expect(existsSync(triggerSchemaPath(file))).toBe(true);
		// a catch-up run: the missed orders (caughtUp, notice), then a delivered event
		const { t, brandId } = await outageOf(bench, shared, {
			options: { catchUpMissedOrders: true, fetchCurrentState: true, includeHeaders: true },
		});
		t.node.parameters.eventTypes = [
			'order.created',
			'brand_health.band_entered',
			'brand_health.band_exited',
		];
		expect(await startAgain(t, shared)).toBe(true);
		await bench.control.createOrder({ brandId });
		await t.waitForRuns(3);
		// a refused delivery, then an event that carries the count
		const secret = String(recordOf(t, t.webhookUrl)!.secret);
		const body = JSON.stringify({
			id: 'evt_schema_refused',
			type: 'order.created',
			createdAt: new Date(transportClock().now()).toISOString(),
			data: { brandId, orderId: 1 },
		});
		const timestamp = Math.floor(transportClock().now() / 1000);
		const refused = await t.deliver(`${body} `, {
			'content-type': 'application/json',
			'webhook-id': 'evt_schema_refused',
			'webhook-timestamp': String(timestamp),
			'webhook-signature': signWebhook(
				'evt_schema_refused',
				timestamp,
				Buffer.from(body),
				parseSecret(secret),
			),
		});
		expect(refused.status).toBe(401);
		await bench.control.createOrder({ brandId });
		await t.waitForRuns(4);
		// brand health events, and an order that is gone (currentError)
		let band = await bench.control.setBand(brandId, {
			dimension: 'DeliveryPerformance',
			band: 'Critical',
		});
		if (band.events.length === 0)
			band = await bench.control.setBand(brandId, {
				dimension: 'DeliveryPerformance',
				band: 'Excellent',
			});
		await t.waitForRuns(4 + band.events.length);
		check(
			file,
			t.runs.flatMap((run) => run[0].map((i) => i.json)),
		);
	} finally {
		shared.uninstall();
	}
	const fields = seen.get('MarketplaceTrigger/__schema__/v2.0.0.json')!;
	for (const field of [
		'caughtUp',
		'catchUpWindow',
		'notice',
		'notice.caughtUpOrders',
		'refusedDeliveries',
		'current',
		'headers',
		'data.orderId',
		'data.dimension',
		'data.band',
	]) {
		expect({ field, seen: fields.has(field) }).toEqual({ field, seen: true });
	}
});

test('Marketplace Polling Trigger: a new order, a status change and the Fetch Test Event sample validate', async () => {
	const file = 'MarketplacePollingTrigger/__schema__/v1.0.0.json';
	const poller = createPollHarness({
		node: new MarketplacePollingTrigger(),
		credentialTypes: [new MarketplaceApi()],
		credentials: {
			marketplaceApi: { baseUrl: bench.sandbox.baseUrl, apiKey: bench.sandbox.demoApiKey },
		},
		parameters: { events: ['created', 'statusChanged'] },
	});
	await poller.poll();
	const { order } = await bench.control.createOrder({ brandId: 1 });
	const created = (await poller.poll())![0];
	await bench.control.cancelOrder(order.id as number);
	const changed = (await poller.poll())![0];
	const sample = (await poller.poll('manual'))![0];
	check(
		file,
		[...created, ...changed, ...sample].map((i) => i.json),
	);
	const schema = readTriggerSchema(file) as { properties: Record<string, JsonSchema> };
	const changeFields = Object.keys(
		(schema.properties.change as { properties: Record<string, JsonSchema> }).properties,
	).map((f) => `change.${f}`);
	for (const field of [...Object.keys(schema.properties), ...changeFields]) {
		expect({ field, seen: seen.get(file)!.has(field) }).toEqual({ field, seen: true });
	}
});

/**
 * The triggers' output schemas cannot drift from their items: the Marketplace Trigger (order events
 * with Fetch Current State and Include Headers, a gone order's currentError, brand health events, a
 * webhook.test with Emit Test Events, an order a check caught up, a sample of "Listen for test event",
 * an item whose key n8n could not record) and the Marketplace Polling Trigger (a new order, a status
 * change, its sample) run in n8n-core's engine against the sandbox, and every item must validate
 * against the committed file; every field a schema lists must turn up. n8n-core's resolver must find
 * each file where n8n looks.
 *
 * Run: .ci/with-node24 npx jest test/schema/triggerSchemas.test.ts
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { DataDeduplicationService, resolveOutputSchemaPath } from 'n8n-core';
import type { IDataObject } from 'n8n-workflow';

import { MarketplaceApi } from '../../credentials/MarketplaceApi.credentials';
import { MarketplacePollingTrigger } from '../../nodes/MarketplacePollingTrigger/MarketplacePollingTrigger.node';
import { createPollHarness } from '../engine/harness';
import {
	forgetActivationTraffic,
	settle,
	SharedClock,
	TriggerBench,
	type TriggerHarness,
} from '../trigger/helpers';
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

/** Every field of a schema, with those of its object fields as `field.inner`. */
function fieldsOf(schema: JsonSchema): string[] {
	const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
	return Object.entries(properties).flatMap(([name, inner]) => [
		name,
		...Object.keys((inner.properties ?? {}) as Record<string, JsonSchema>).map(
			(field) => `${name}.${field}`,
		),
	]);
}

/** Webhook Endpoint > Test, as the Marketplace node sends it. */
async function sendTest(apiKey: string, endpointId: number): Promise<void> {
	const res = await fetch(`${bench.sandbox.baseUrl}/v1/webhook-endpoints/${endpointId}/test`, {
		method: 'POST',
		headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': crypto.randomUUID() },
	});
	expect(res.status).toBe(200);
}

const items = (t: TriggerHarness) => t.runs.flatMap((run) => run[0].map((i) => i.json));

test('Marketplace Trigger: every item validates, and every field the schema lists turns up', async () => {
	const file = 'MarketplaceTrigger/__schema__/v2.0.0.json';
	expect(existsSync(triggerSchemaPath(file))).toBe(true);
	shared.install();
	try {
		await shared.advance(60_000);
		const { apiKey, brandId, userId } = await bench.user();
		const parameters = {
			eventTypes: ['order.created', 'brand_health.band_entered', 'brand_health.band_exited'],
			options: { fetchCurrentState: true, includeHeaders: true, emitTestEvents: true },
		};

		// an order a check caught up (its event never came: this trigger has no endpoint)
		const checker = await bench.trigger(apiKey, parameters);
		await checker.startTrigger();
		await checker.stopTrigger();
		await shared.advance(60_000);
		const missed = (await bench.control.createOrder({ brandId })).order;
		await shared.advance(60_000);
		await checker.startTrigger('init');
		await settle(checker);
		expect(items(checker)).toEqual([
			expect.objectContaining({ caughtUp: true, data: { brandId, orderId: missed.id } }),
		]);

		// published: an order event, brand health events, a gone order, a webhook.test
		const t = await bench.trigger(apiKey, parameters);
		await t.activate();
		await forgetActivationTraffic(t);
		const [endpoint] = await bench.endpointsOf(userId);
		await bench.control.createOrder({ brandId });
		await t.waitForRuns(1);
		let band = await bench.control.setBand(brandId, {
			dimension: 'DeliveryPerformance',
			band: 'Critical',
		});
		if (band.events.length === 0)
			band = await bench.control.setBand(brandId, {
				dimension: 'DeliveryPerformance',
				band: 'Excellent',
			});

		await t.waitForRuns(1 + band.events.length);
		await bench.control.emitEvent({
			type: 'order.created',
			data: { brandId, orderId: 987_654 },
			endpointIds: [endpoint.id],
		});
		await t.waitForRuns(2 + band.events.length);
		await sendTest(apiKey, endpoint.id);
		await t.waitForRuns(3 + band.events.length);
		// n8n's store fails for one run: the item runs with storageWarning
		jest
			.spyOn(DataDeduplicationService.getInstance(), 'checkProcessedAndRecord')
			.mockRejectedValueOnce(new Error('database is locked'));
		await bench.control.createOrder({ brandId });
		await t.waitForRuns(4 + band.events.length);
		jest.restoreAllMocks();

		const published = items(t);

		// listening: a sample after Webhook Endpoint > Test to the test URL
		await t.activate('manual');
		await forgetActivationTraffic(t);
		const listening = (await bench.endpointsOf(userId)).find((e) => e.url === t.testWebhookUrl)!;
		await sendTest(apiKey, listening.id);
		await t.waitForRuns(1);

		expect(items(t)).toEqual([expect.objectContaining({ sample: true })]);
		expect(published.filter((json) => json.storageWarning !== undefined)).toHaveLength(1);
		check(file, [...items(checker), ...published, ...items(t)]);
	} finally {
		jest.restoreAllMocks();
		shared.uninstall();
	}
	const fields = seen.get(file)!;
	const listed = fieldsOf(readTriggerSchema(file));
	expect(listed).toEqual(expect.arrayContaining(['caughtUp', 'sample', 'storageWarning']));
	for (const field of listed)
		expect({ field, seen: fields.has(field) }).toEqual({ field, seen: true });
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

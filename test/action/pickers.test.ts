/**
 * The brand and webhook endpoint pickers and the brand health categories, called as the n8n editor
 * calls them (LoadOptionsContext, see test/engine/editor.ts) against the sandbox over HTTP; and the
 * parameters they fill, through n8n's real engine.
 */
import type { IDataObject, INodeParameters, INodeProperties } from 'n8n-workflow';

import { listSearch, loadOptions, type EditorCallOptions } from '../engine/editor';
import { setTransportClock } from '../transportClock';
import { SteppedClock } from './clock';
import { fixtureWithReceiver, credentialType, node } from './helpers';

const { fixture, receiver } = fixtureWithReceiver();

const rl = (value: string, mode = 'list') => ({ __rl: true, mode, value });

function panel(parameters: INodeParameters, apiKey = fixture.apiKey): EditorCallOptions {
	return {
		node,
		typeVersion: node.description.version as number,
		credentialTypes: [credentialType],
		credentials: { marketplaceApi: { baseUrl: fixture.sandbox.baseUrl, apiKey } },
		parameters,
	};
}

async function requestsDuring<T>(call: () => Promise<T>): Promise<{ result: T; paths: string[] }> {
	const before = (await fixture.control.requests()).at(-1)?.seq ?? 0;
	const result = await call();
	return {
		result,
		paths: (await fixture.control.requests(before)).map(
			(r) => `${r.method} ${r.path}?${r.rawQuery}`,
		),
	};
}

describe('Brand picker', () => {
	test("lists the brands of the key's scope, one request, and the search box filters by name or ID", async () => {
		const { apiKey } = await fixture.control.createUser({ brandIds: [2, 3] });
		const brands = (await fixture.control.state<{ id: number; name: string }>('brands')).filter(
			(b) => [2, 3].includes(b.id),
		);
		const opts = {
			...panel({ resource: 'brandHealth', operation: 'get' }, apiKey),
			method: 'searchBrands',
			parameter: 'brandId',
		};

		const all = await requestsDuring(async () => await listSearch(opts));
		expect(all.paths).toEqual(['GET /v1/brands?']);
		expect(all.result.results).toEqual(
			brands.map((b) => ({ name: `${b.name} (${b.id})`, value: String(b.id) })),
		);

		const byName = await listSearch({ ...opts, filter: brands[1].name.slice(0, 4).toUpperCase() });
		expect(byName.results.map((r) => r.value)).toContain(String(brands[1].id));
		expect((await listSearch({ ...opts, filter: 'no brand is called this' })).results).toEqual([]);
	});

	test('a key without brands.read gets a message that names the permission and the way on', async () => {
		const { apiKey } = await fixture.control.createUser({
			permissions: ['brand-health.read'],
			brandIds: [1],
		});
		const error = await listSearch({
			...panel({}, apiKey),
			method: 'searchBrands',
			parameter: 'brandId',
		}).catch((e: Error) => e);
		expect(error).toBeInstanceOf(Error);
		expect((error as Error).message).toMatch(/lacks the brands\.read permission.*By ID/);
	});

	test('lists go through the transport: a 429 is waited out and retried, not shown to the user', async () => {
		await fixture.control.injectFault({
			route: 'listBrands',
			mode: '429',
			retryAfterSeconds: 1,
			count: 1,
		});
		const clock = new SteppedClock(fixture.control);
		setTransportClock(clock);
		try {
			const { result, paths } = await requestsDuring(
				async () =>
					await listSearch({ ...panel({}), method: 'searchBrands', parameter: 'brandId' }),
			);
			expect(paths).toEqual(['GET /v1/brands?', 'GET /v1/brands?']);
			expect(result.results.length).toBeGreaterThan(0);
			// the wait the 429's Retry-After asked for
			expect(clock.waits).toEqual([1000]);
		} finally {
			setTransportClock();
		}
	});
});

describe('Brand Names or IDs filters (multi-select)', () => {
	const filterOperations = [
		'product.getAll',
		'order.getAll',
		'return.getAll',
		'purchaseOrder.getAll',
		'purchaseOrder.export',
		'inventoryForecast.getAll',
	];

	test('every list operation offers brandIds as a multi-select loaded by getBrands', () => {
		for (const operation of filterOperations) {
			const [resource, op] = operation.split('.');
			const filters = node.description.properties.find(
				(p) =>
					p.name === 'filters' &&
					p.displayOptions?.show?.resource?.includes(resource) &&
					p.displayOptions?.show?.operation?.includes(op),
			);
			const brandIds = (filters?.options as INodeProperties[] | undefined)?.find(
				(o) => o.name === 'brandIds',
			);
			expect([operation, brandIds?.type, brandIds?.typeOptions?.loadOptionsMethod]).toEqual([
				operation,
				'multiOptions',
				'getBrands',
			]);
		}
	});

	test("getBrands lists the key's brands, one request; a picked brand is sent as the filter", async () => {
		const { apiKey } = await fixture.control.createUser({ brandIds: [2, 3] });
		const brands = (await fixture.control.state<{ id: number; name: string }>('brands')).filter(
			(b) => [2, 3].includes(b.id),
		);
		const { result, paths } = await requestsDuring(
			async () =>
				await loadOptions({
					...panel({ resource: 'order', operation: 'getAll', filters: {} }, apiKey),
					method: 'getBrands',
					parameter: 'filters.brandIds',
				}),
		);
		expect(paths).toEqual(['GET /v1/brands?']);
		expect(result).toEqual(brands.map((b) => ({ name: `${b.name} (${b.id})`, value: b.id })));

		const picked = await fixture.run(
			{ resource: 'order', operation: 'getAll', filters: { brandIds: [result[1].value] } },
			{ apiKey },
		);
		expect(picked.sent.map((s) => s.rawQuery)).toEqual([`brandIds=${brands[1].id}`]);
		expect(picked.items.every((i) => i.json.brandId === brands[1].id)).toBe(true);
	});

	test('a key without brands.read is told to give the IDs by expression instead', async () => {
		const { apiKey } = await fixture.control.createUser({
			permissions: ['products.read'],
			brandIds: [1],
		});
		const error = await loadOptions({
			...panel({ resource: 'product', operation: 'getAll' }, apiKey),
			method: 'getBrands',
			parameter: 'filters.brandIds',
		}).catch((e: Error) => e);
		expect((error as Error).message).toMatch(
			/lacks the brands\.read permission\. Give the brand IDs by expression instead/,
		);
	});
});

describe('Webhook Endpoint picker', () => {
	test("shows the user's own endpoints with URL and status, nobody else's", async () => {
		const { apiKey } = await fixture.control.createUser({ brandIds: [1] });
		const { apiKey: otherKey } = await fixture.control.createUser({ brandIds: [1] });
		const create = async (key: string, description: string) =>
			(
				await fixture.run(
					{
						resource: 'webhookEndpoint',
						operation: 'create',
						url: receiver().url,
						eventTypes: ['order.created'],
						description,
					},
					{ apiKey: key },
				)
			).items[0].json as IDataObject;
		const mine = await create(apiKey, 'warehouse');
		await create(otherKey, 'someone else');
		await fixture.run(
			{
				resource: 'webhookEndpoint',
				operation: 'update',
				endpointId: rl(String(mine.id)),
				updateFields: { status: 'Disabled' },
			},
			{ apiKey },
		);

		const opts = {
			...panel({ resource: 'webhookEndpoint', operation: 'get' }, apiKey),
			method: 'searchWebhookEndpoints',
			parameter: 'endpointId',
		};
		expect((await listSearch(opts)).results).toEqual([
			{ name: `${receiver().url} (Disabled)`, value: String(mine.id), description: 'warehouse' },
		]);
		expect((await listSearch({ ...opts, filter: 'WAREHOUSE' })).results).toHaveLength(1);
		expect((await listSearch({ ...opts, filter: 'elsewhere' })).results).toHaveLength(0);
	});
});

describe('Brand Health categories', () => {
	test('loaded for the chosen brand, as the service names them (commas included)', async () => {
		const expected = (
			await fixture.control.state<{ brandId: number; categories: string[] }>('brandHealth')
		).find((h) => h.brandId === 2)!.categories;
		const opts = {
			...panel({ resource: 'brandHealth', operation: 'get', brandId: rl('2') }),
			method: 'getBrandHealthCategories',
			parameter: 'filters.categories',
		};
		const { result, paths } = await requestsDuring(async () => await loadOptions(opts));
		expect(paths).toEqual(['GET /v1/brand-health?brandId=2']);
		expect(result).toEqual(expected.map((name) => ({ name, value: name })));
		expect(expected).toContain('Home, Garden');
	});

	test('without a brand: a message to choose one first, and no request', async () => {
		const opts = {
			...panel({ resource: 'brandHealth', operation: 'get', brandId: rl('') }),
			method: 'getBrandHealthCategories',
			parameter: 'filters.categories',
		};
		const { result, paths } = await requestsDuring(
			async () => await loadOptions(opts).catch((e: Error) => e),
		);
		expect((result as Error).message).toMatch(/Choose a Brand first/);
		expect(paths).toEqual([]);
	});
});

describe("the parameters the pickers fill, in n8n's engine", () => {
	test('a picked brand and picked categories send brandId and repeated categories keys', async () => {
		const r = await fixture.run({
			resource: 'brandHealth',
			operation: 'get',
			brandId: rl('2'),
			filters: { categories: ['Home, Garden'] },
		});
		expect(r.error).toBeUndefined();
		expect(r.sent.map((s) => `${s.path}?${s.rawQuery}`)).toEqual([
			'/v1/brand-health?brandId=2&categories=Home%2C%20Garden',
		]);
	});

	test('By ID and an expression work like the list', async () => {
		const byId = await fixture.run({
			resource: 'brandHealth',
			operation: 'get',
			brandId: rl(' 3 ', 'id'),
		});
		expect(byId.sent.map((s) => s.rawQuery)).toEqual(['brandId=3']);
		const expression = await fixture.run(
			{ resource: 'brandHealth', operation: 'get', brandId: rl('={{ $json.brand }}', 'id') },
			{ inputItems: [{ json: { brand: 4 } }] },
		);
		expect(expression.sent.map((s) => s.rawQuery)).toEqual(['brandId=4']);
		// a typed ID is checked by n8n itself (the mode's validation), before the workflow runs
		const before = (await fixture.control.requests()).at(-1)?.seq ?? 0;
		await expect(
			fixture.run({ resource: 'brandHealth', operation: 'get', brandId: rl('abc', 'id') }),
		).rejects.toThrow(/Not a valid brand ID: a whole number of 1 or more/);
		// an expression is checked by the node, per item, naming the field
		const bad = await fixture.run({
			resource: 'brandHealth',
			operation: 'get',
			brandId: rl('={{ "abc" }}', 'id'),
		});
		expect(bad.error?.message).toBe(
			'Invalid parameter "Brand": must be a whole number of 1 or more, got "abc"',
		);
		expect(await fixture.control.requests(before)).toEqual([]);
	});

	test('the endpoint picker: an expression that is no ID fails the item, naming the field as the panel shows it', async () => {
		const bad = await fixture.run({
			resource: 'webhookEndpoint',
			operation: 'get',
			endpointId: rl('={{ "first" }}', 'id'),
		});
		expect(bad.error?.message).toBe(
			'Invalid parameter "Webhook Endpoint": must be a whole number of 1 or more, got "first"',
		);
		expect(bad.sent).toEqual([]);
	});
});

/**
 * What the n8n editor asks the node for while a user fills in parameters: the brand and webhook
 * endpoint pickers' lists, the brands the Brand Names or IDs filters offer and the brand's health
 * categories. Every request goes through the
 * transport, so the lists are paced and retried like any read, and they show only what the key
 * may see (the service applies the key's brand scope and endpoint ownership).
 */
import type {
	IDataObject,
	ILoadOptionsFunctions,
	JsonObject,
	INodeListSearchItems,
	INodeListSearchResult,
	INodePropertyOptions,
} from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { ROUTES, type Route } from '../../shared/routes';
import { readFailure } from '../../shared/transport/transportErrors';
import { readAll, type ReadAllOptions } from '../../shared/transport/pagination';
import { toStringList } from '../../shared/validation';

/** Case-insensitive match of the search box text against what the list shows. */
function matches(filter: string | undefined, ...texts: unknown[]): boolean {
	const wanted = filter?.trim().toLowerCase();
	if (!wanted) return true;
	return texts.some((t) =>
		String(t ?? '')
			.toLowerCase()
			.includes(wanted),
	);
}

/**
 * One list read; a key without the read permission gets a message the picker can show that says
 * what is missing and how to go on (`instead`), instead of the bare 403.
 */
async function listFor(
	ctx: ILoadOptionsFunctions,
	what: string,
	options: ReadAllOptions,
	instead = 'Enter the ID instead (By ID)',
): Promise<IDataObject[]> {
	try {
		return await readAll.call(ctx, options);
	} catch (error) {
		const route: Route = ROUTES[options.route];
		if (readFailure(error).status === 403 && route.permission !== undefined) {
			throw new NodeOperationError(
				ctx.getNode(),
				`Your API key may not list ${what}: it lacks the ${route.permission} permission. ${instead}, or use a key with ${route.permission}.`,
			);
		}
		// the transport's NodeApiError, unchanged (n8n hands an error it is given back as it is)
		throw new NodeApiError(ctx.getNode(), error as JsonObject);
	}
}

/** Brand discovery without a limit answers with the whole accessible set in one request. */
async function brandsOf(ctx: ILoadOptionsFunctions, instead?: string): Promise<IDataObject[]> {
	return await listFor(ctx, 'brands', { route: 'listBrands', returnAll: true }, instead);
}

const brandLabel = (b: IDataObject) => `${String(b.name ?? 'Brand')} (${String(b.id)})`;

/** The Brand picker (a resource locator's list), with its search box. */
async function searchBrands(
	this: ILoadOptionsFunctions,
	filter?: string,
): Promise<INodeListSearchResult> {
	const results: INodeListSearchItems[] = (await brandsOf(this))
		.filter((b) => matches(filter, b.name, b.id))
		.map((b) => ({ name: brandLabel(b), value: String(b.id) }));
	return { results };
}

/** The Brand Names or IDs filters (multi-select): the same brands, the ID as the value. */
async function getBrands(this: ILoadOptionsFunctions): Promise<INodePropertyOptions[]> {
	const instead = 'Give the brand IDs by expression instead (e.g. 1,2)';
	return (await brandsOf(this, instead)).map((b) => ({ name: brandLabel(b), value: Number(b.id) }));
}

/** A user owns at most ten endpoints, so one read lists them all; each shows URL and status. */
async function searchWebhookEndpoints(
	this: ILoadOptionsFunctions,
	filter?: string,
): Promise<INodeListSearchResult> {
	const endpoints = await listFor(this, 'webhook endpoints', {
		route: 'listWebhookEndpoints',
		returnAll: true,
	});
	const results: INodeListSearchItems[] = endpoints
		.filter((e) => matches(filter, e.url, e.description, e.id))
		.map((e: IDataObject) => ({
			name: `${String(e.url)} (${String(e.status)})`,
			value: String(e.id),
			description: typeof e.description === 'string' ? e.description : undefined,
		}));
	return { results };
}

/** The category names the service reports for the chosen brand's health. */
async function getBrandHealthCategories(
	this: ILoadOptionsFunctions,
): Promise<INodePropertyOptions[]> {
	const picked = this.getCurrentNodeParameter('brandId', { extractValue: true });
	const brandId = /^\s*[1-9][0-9]*\s*$/.test(String(picked ?? '')) ? Number(picked) : undefined;
	if (brandId === undefined) {
		throw new NodeOperationError(
			this.getNode(),
			'Choose a Brand first: the categories are listed per brand',
		);
	}
	const [health] = await listFor(this, 'brand health categories', {
		route: 'getBrandHealth',
		query: { brandId },
		returnAll: true,
	});
	return toStringList(health?.categories, 'categories').map((name) => ({ name, value: name }));
}

export const methods = {
	listSearch: { searchBrands, searchWebhookEndpoints },
	loadOptions: { getBrands, getBrandHealthCategories },
};

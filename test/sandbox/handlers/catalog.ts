import { ROUTES } from '../../../nodes/shared/routes';
import { ApiError, invalid } from '../errors';
import { paginate } from '../query';
import { type ApiContext, brandFilter, inScope, ok } from './context';

export function listProducts({ state, user, query }: ApiContext) {
	const route = ROUTES.listProducts;
	query.allowOnly(['brandIds', 'page', 'limit']);
	const brands = brandFilter(user, query.intList('brandIds', route.listEncoding));
	const { page, limit } = query.page(route.pagination);
	const matching = state.store.products.filter((p) => brands.has(p.brandId));
	const result = paginate(matching, page, limit as number);
	const categoryCounts = new Map<string, { id: number; name: string; productCount: number }>();
	const brandCounts: Record<string, number> = {};
	const statusCounts: Record<string, number> = {};
	for (const p of matching) {
		const c = categoryCounts.get(p.category) ?? {
			id: p.categoryId,
			name: p.category,
			productCount: 0,
		};
		c.productCount++;
		categoryCounts.set(p.category, c);
		brandCounts[p.brandId] = (brandCounts[p.brandId] ?? 0) + 1;
		statusCounts[p.status] = (statusCounts[p.status] ?? 0) + 1;
	}
	return ok({
		products: result.items,
		categories: [...categoryCounts.values()].sort((a, b) => a.id - b.id),
		filterCounts: { brandIds: brandCounts, statuses: statusCounts },
		pagination: result.pagination,
	});
}

export function listBrands({ state, user, query }: ApiContext) {
	query.allowOnly(['page', 'limit']);
	const { page, limit } = query.page(ROUTES.listBrands.pagination);
	const brands = state.store.brands.filter((b) => inScope(user, b.id));
	if (limit === undefined) {
		if (query.scalar('page') !== undefined) throw invalid('/page', 'page needs limit');
		return ok({ brands });
	}
	const result = paginate(brands, page, limit);
	return ok({ brands: result.items, pagination: result.pagination });
}

export function listInventoryForecasts({ state, user, query }: ApiContext) {
	const route = ROUTES.listInventoryForecasts;
	query.allowOnly(['brandIds', 'page', 'limit']);
	const brands = brandFilter(user, query.intList('brandIds', route.listEncoding));
	const { page, limit } = query.page(route.pagination);
	const result = paginate(
		state.store.forecasts.filter((f) => brands.has(f.brandId)),
		page,
		limit as number,
	);
	return ok({ forecasts: result.items, pagination: result.pagination });
}

export function getBrandHealth({ state, user, query }: ApiContext) {
	query.allowOnly(['brandId', 'categories']);
	const brandId = query.positiveInt('brandId');
	if (brandId === undefined) throw invalid('/brandId', 'brandId is required');
	const categories = query.list('categories', ROUTES.getBrandHealth.listEncoding);
	for (const name of categories ?? []) {
		if (!state.store.categories.some((c) => c.name === name))
			throw invalid('/categories', `unknown category '${name}'`);
	}
	if (!inScope(user, brandId))
		throw new ApiError('forbidden', `brand ${brandId} is outside the key's brand scope`);
	const health = state.store.brandHealth.find((h) => h.brandId === brandId);
	if (!health) throw new ApiError('not-found', `no brand health for brand ${brandId}`);
	const wanted = (name: string) => !categories || categories.includes(name);
	return ok({
		brandId,
		categories: health.categories.filter(wanted),
		dimensions: health.dimensions.filter((d) => wanted(d.category)),
		updatedAt: health.updatedAt,
	});
}

import { ROUTES, type RouteName } from '../../nodes/shared/routes';

/** The shared route table compiled to matchers (immutable). */
const MATCHERS = (Object.keys(ROUTES) as RouteName[]).map((name) => {
	const keys: string[] = [];
	const pattern = ROUTES[name].path
		.replace(/[.*+?^$()|[\]\\]/g, '\\$&')
		.replace(/\\?\{(\w+)\\?\}/g, (_, key: string) => {
			keys.push(key);
			return '([^/]+)';
		});
	return { name, method: ROUTES[name].method as string, regex: new RegExp(`^${pattern}$`), keys };
});

export function matchRoute(
	method: string,
	path: string,
): { name: RouteName; params: Record<string, string> } | undefined {
	for (const m of MATCHERS) {
		if (m.method !== method) continue;
		const found = m.regex.exec(path);
		if (!found) continue;
		const params: Record<string, string> = {};
		m.keys.forEach((key, i) => (params[key] = decodeURIComponent(found[i + 1])));
		return { name: m.name, params };
	}
	return undefined;
}

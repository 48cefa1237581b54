/**
 * Which top-level parameters of a node description the editor shows for given values, by the
 * description's own displayOptions (show/hide by value, `@version`, and `_cnd` comparisons), so the
 * suite knows what a rendered parameter panel must contain without listing it by hand.
 */

export interface Property {
	name: string;
	displayName: string;
	type: string;
	default?: unknown;
	options?: Array<{ name: string; value: unknown; action?: string }>;
	displayOptions?: { show?: Record<string, unknown[]>; hide?: Record<string, unknown[]> };
}

type Condition = { _cnd: Record<string, unknown> };

const isCondition = (c: unknown): c is Condition =>
	typeof c === 'object' && c !== null && '_cnd' in c;

function matches(condition: unknown, value: unknown): boolean {
	if (isCondition(condition)) {
		const [op, target] = Object.entries(condition._cnd)[0];
		const v = Number(value);
		const t = Number(target);
		if (op === 'gte') return v >= t;
		if (op === 'lte') return v <= t;
		if (op === 'gt') return v > t;
		if (op === 'lt') return v < t;
		if (op === 'eq') return value === target;
		if (op === 'not') return value !== target;
		throw new Error(`display condition ${op} is not handled here`);
	}
	return Array.isArray(value) ? value.includes(condition) : condition === value;
}

function shown(p: Property, values: Record<string, unknown>, version: number): boolean {
	const valueOf = (key: string) => (key === '@version' ? version : values[key]);
	const { show, hide } = p.displayOptions ?? {};
	for (const [key, conditions] of Object.entries(show ?? {}))
		if (!conditions.some((c) => matches(c, valueOf(key)))) return false;
	for (const [key, conditions] of Object.entries(hide ?? {}))
		if (conditions.some((c) => matches(c, valueOf(key)))) return false;
	return true;
}

/**
 * The properties shown for `given` (e.g. resource and operation), every other parameter at its
 * default, in description order.
 */
export function visibleProperties(
	properties: Property[],
	given: Record<string, unknown>,
	version: number,
): Property[] {
	const values: Record<string, unknown> = { ...given };
	const visible: Property[] = [];
	for (const p of properties) {
		if (!shown(p, values, version)) continue;
		visible.push(p);
		if (!(p.name in values)) values[p.name] = p.default;
	}
	return visible;
}

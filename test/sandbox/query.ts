import type { ListEncoding, Pagination } from '../../nodes/shared/routes';
import { invalid } from './errors';

/**
 * Query-string reading as the service does it: each operation reads its list filters with its own
 * encoding, so a value written the other way is one (invalid) value, not a list.
 */
export class Query {
	readonly entries: [string, string][];

	constructor(readonly raw: string) {
		this.entries = [...new URLSearchParams(raw).entries()];
	}

	all(name: string): string[] {
		return this.entries.filter(([k]) => k === name).map(([, v]) => v);
	}

	/** 400 for any parameter the operation does not know */
	allowOnly(allowed: readonly string[]): void {
		for (const [name] of this.entries) {
			if (!allowed.includes(name)) throw invalid(`/${name}`, `unknown query parameter ${name}`);
		}
	}

	/** a scalar parameter: at most once */
	scalar(name: string): string | undefined {
		const values = this.all(name);
		if (values.length > 1) throw invalid(`/${name}`, `${name} must be given once`);
		return values[0];
	}

	/** a list parameter in the operation's encoding; undefined when absent */
	list(name: string, encoding: ListEncoding): string[] | undefined {
		const values = this.all(name);
		if (values.length === 0) return undefined;
		if (encoding === 'comma') {
			if (values.length > 1)
				throw invalid(`/${name}`, `${name} is one comma-separated value; the key must not repeat`);
			values.splice(0, 1, ...values[0].split(','));
		}
		for (const value of values) {
			if (value === '') throw invalid(`/${name}`, `${name} contains an empty value`);
		}
		return values;
	}

	intList(name: string, encoding: ListEncoding): number[] | undefined {
		const values = this.list(name, encoding);
		return values?.map((v) => {
			if (!isPositiveInteger(v))
				throw invalid(`/${name}`, `${name}: '${v}' is not a positive integer`);
			return Number(v);
		});
	}

	enumList<T extends string>(
		name: string,
		encoding: ListEncoding,
		allowed: readonly T[],
	): T[] | undefined {
		const values = this.list(name, encoding);
		return values?.map((v) => {
			if (!(allowed as readonly string[]).includes(v)) {
				throw invalid(
					`/${name}`,
					`${name}: '${v}' is not one of ${allowed.join(', ')} (case-sensitive)`,
				);
			}
			return v as T;
		});
	}

	positiveInt(name: string): number | undefined {
		const value = this.scalar(name);
		if (value === undefined) return undefined;
		if (!isPositiveInteger(value)) throw invalid(`/${name}`, `${name} must be a positive integer`);
		return Number(value);
	}

	/** page and limit of a paginated read; limit undefined when omitted and there is no default */
	page(p: Pagination): { page: number; limit: number | undefined } {
		const page = this.positiveInt('page') ?? 1;
		const raw = this.scalar('limit');
		if (raw === undefined) return { page, limit: p.defaultLimit };
		if (!/^-?\d+$/.test(raw)) throw invalid('/limit', 'limit must be an integer');
		const limit = Number(raw);
		if (limit < 1 || limit > p.maxLimit)
			throw invalid('/limit', `limit must be between 1 and ${p.maxLimit}`);
		return { page, limit };
	}
}

export function isPositiveInteger(value: string): boolean {
	return /^[1-9]\d{0,14}$/.test(value);
}

export interface PageResult<T> {
	items: T[];
	pagination: { page: number; limit: number; total: number; totalPages: number };
}

/** One page of `items`; a page past the last one is empty, not an error. */
export function paginate<T>(items: T[], page: number, limit: number): PageResult<T> {
	const total = items.length;
	return {
		items: items.slice((page - 1) * limit, page * limit),
		pagination: { page, limit, total, totalPages: Math.ceil(total / limit) },
	};
}

import { type FieldError, invalid } from './errors';

/** A tiny schema for the JSON bodies the service validates (exact fields, types, case). */
export type FieldSpec =
	| {
			type: 'string';
			required?: boolean;
			enum?: readonly string[];
			minLength?: number;
			maxLength?: number;
	  }
	| { type: 'boolean'; required?: boolean }
	| { type: 'integer'; required?: boolean; min?: number }
	| { type: 'integerArray'; required?: boolean; minItems?: number; maxItems?: number }
	| { type: 'stringArray'; required?: boolean; enum?: readonly string[]; minItems?: number };

export type BodySchema = Record<string, FieldSpec>;

/** Parses a JSON object body; anything else is a 400 pointing at the whole body. */
export function parseJsonObject(raw: string, emptyIsObject = false): Record<string, unknown> {
	if (raw.trim() === '' && emptyIsObject) return {};
	let value: unknown;
	try {
		value = JSON.parse(raw);
	} catch {
		throw invalid('', 'body is not valid JSON');
	}
	if (typeof value !== 'object' || value === null || Array.isArray(value))
		throw invalid('', 'body must be a JSON object');
	return value as Record<string, unknown>;
}

/** Every violation of `schema` in `body` (unknown fields included), as JSON Pointers. */
export function validateBody(body: Record<string, unknown>, schema: BodySchema): FieldError[] {
	const errors: FieldError[] = [];
	for (const name of Object.keys(body)) {
		if (!(name in schema)) errors.push({ pointer: `/${name}`, detail: `unknown field ${name}` });
	}
	for (const [name, spec] of Object.entries(schema)) {
		const pointer = `/${name}`;
		const value = body[name];
		if (value === undefined) {
			if (spec.required) errors.push({ pointer, detail: `${name} is required` });
			continue;
		}
		errors.push(...checkField(pointer, name, value, spec));
	}
	return errors;
}

function checkField(pointer: string, name: string, value: unknown, spec: FieldSpec): FieldError[] {
	const fail = (detail: string, at = pointer) => [{ pointer: at, detail }];
	switch (spec.type) {
		case 'string':
			if (typeof value !== 'string') return fail(`${name} must be a string`);
			if (spec.enum && !spec.enum.includes(value))
				return fail(`${name} must be one of ${spec.enum.join(', ')} (case-sensitive)`);
			if (spec.minLength !== undefined && value.length < spec.minLength)
				return fail(`${name} must not be empty`);
			if (spec.maxLength !== undefined && value.length > spec.maxLength)
				return fail(`${name} is longer than ${spec.maxLength}`);
			return [];
		case 'boolean':
			return typeof value === 'boolean' ? [] : fail(`${name} must be a boolean`);
		case 'integer':
			if (!Number.isInteger(value)) return fail(`${name} must be an integer`);
			if (spec.min !== undefined && (value as number) < spec.min)
				return fail(`${name} must be at least ${spec.min}`);
			return [];
		case 'integerArray':
		case 'stringArray': {
			if (!Array.isArray(value)) return fail(`${name} must be an array`);
			if (spec.minItems !== undefined && value.length < spec.minItems)
				return fail(`${name} needs at least ${spec.minItems} item(s)`);
			if (
				spec.type === 'integerArray' &&
				spec.maxItems !== undefined &&
				value.length > spec.maxItems
			) {
				return fail(`${name} accepts at most ${spec.maxItems} items`);
			}
			const errors: FieldError[] = [];
			value.forEach((item, i) => {
				const at = `${pointer}/${i}`;
				if (spec.type === 'integerArray') {
					if (!Number.isInteger(item))
						errors.push({ pointer: at, detail: `${name}[${i}] must be an integer` });
				} else if (typeof item !== 'string') {
					errors.push({ pointer: at, detail: `${name}[${i}] must be a string` });
				} else if (spec.enum && !spec.enum.includes(item)) {
					errors.push({
						pointer: at,
						detail: `${name}[${i}] '${item}' is not one of ${spec.enum.join(', ')}`,
					});
				}
			});
			return errors;
		}
	}
}

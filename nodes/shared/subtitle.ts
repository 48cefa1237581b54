/**
 * Canvas subtitles that show what the panel shows (option names, not values): n8n evaluates a
 * node's subtitle as an expression, so the names go in as a literal lookup table.
 */
import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

/** `"name"` of each option value of `options`. */
export function optionNames(
	options: ReadonlyArray<{ name: string; value: unknown }>,
): Record<string, string> {
	return Object.fromEntries(options.map((o) => [String(o.value), o.name]));
}

/** The names of the chosen values of a multi-option parameter, joined (unknown values as they are). */
export function namesSubtitle(
	parameter: string,
	names: Record<string, string>,
	prefix = '',
): string {
	return `={{ ${JSON.stringify(prefix)} + ($parameter["${parameter}"] || []).map((v) => (${JSON.stringify(names)})[v] || v).join(", ") }}`;
}

/**
 * "Operation: Resource" for every operation selector in `properties` ("Get Many: Order"); an
 * operation whose name already says what it acts on stands alone ("Mark Orders Packed").
 */
export function operationSubtitle(
	properties: INodeProperties[],
	standAlone: string[] = [],
): string {
	const resources = optionNames(
		(properties.find((p) => p.name === 'resource')?.options ?? []) as INodePropertyOptions[],
	);
	const labels: Record<string, string> = {};
	for (const selector of properties.filter((p) => p.name === 'operation')) {
		for (const resource of (selector.displayOptions?.show?.resource ?? []) as string[]) {
			for (const option of (selector.options ?? []) as INodePropertyOptions[]) {
				const key = `${resource}.${String(option.value)}`;
				labels[key] = standAlone.includes(key)
					? option.name
					: `${option.name}: ${resources[resource] ?? resource}`;
			}
		}
	}
	return `={{ (${JSON.stringify(labels)})[$parameter["resource"] + "." + $parameter["operation"]] }}`;
}

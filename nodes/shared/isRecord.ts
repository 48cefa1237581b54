/** A plain JSON object (not null, not an array): the shape of every record the service sends. */
export const isRecord = (value: unknown): value is Record<string, any> =>
	typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The mark both triggers put on a sample item (the webhook trigger's "Listen for test event", the
 * Polling Trigger's "Fetch Test Event"), which the Marketplace node's writes read to hold it back in a
 * run from the editor. Pure: no n8n imports.
 */

/** The field a workflow checks: true only on a sample. */
export const SAMPLE_FIELD = 'sample';

/** Marks `json` as a sample: the field, where the sample came from, and a note in words. */
export function markSample(json: Record<string, unknown>, source: string, note: string): void {
	json[SAMPLE_FIELD] = true;
	json.sampleSource = source;
	json.sampleNote = note;
}

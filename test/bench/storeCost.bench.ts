/**
 * What the trigger's key store costs one delivery, by the number of keys kept: the static data's JSON
 * parsed (as n8n hands it over), the endpoint's stored state loaded and joined into this process's
 * copy, one key looked up and added, and the state written back. 200 rounds per size.
 *
 *   .ci/with-node24 node -r ts-node/register/transpile-only test/bench/storeCost.bench.ts
 */
import { EndpointMemory } from '../../nodes/MarketplaceTrigger/memory';
import { KeySet } from '../../nodes/MarketplaceTrigger/keySet';
import { EndpointStore } from '../../nodes/MarketplaceTrigger/store';
import { deliveryKey } from '../../nodes/MarketplaceTrigger/once';

const ROUNDS = 200;
for (const n of [100, 1_000, 10_000]) {
	const now = Date.now();
	const store = new KeySet();
	// ids spread over 10 minutes of expiry, as steady traffic leaves them
	for (let i = 0; i < n; i++)
		store.keep(deliveryKey(`evt_${n}_${i}`), now + 15 * 60_000 + (i % 600) * 1000);
	let json = JSON.stringify({ known: { url: store.toState() } });
	const memory = new EndpointMemory('url');
	const started = process.hrtime.bigint();
	for (let round = 0; round < ROUNDS; round++) {
		const data = JSON.parse(json) as Record<string, unknown>;
		const stored = EndpointStore.read(data, 'url', memory);
		stored.isKnown(deliveryKey(`new_${round}`), now);
		stored.add({
			key: deliveryKey(`new_${round}`),
			section: 'known',
			expiresAt: now + 15 * 60_000,
		});
		stored.writeBack(now);
		// n8n saves what the request wrote; the next request loads that
		json = JSON.stringify(data);
	}
	const ms = Number(process.hrtime.bigint() - started) / 1e6 / ROUNDS;
	console.log(
		`${String(n).padStart(6)} ids: ${ms.toFixed(3)} ms per delivery (static data ${json.length} B)`,
	);
}

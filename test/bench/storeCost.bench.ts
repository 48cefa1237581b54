/**
 * What the trigger's id store costs one delivery, by the number of ids kept: the static data's JSON
 * parsed (as n8n hands it over), the endpoint's stored state loaded and united with this process's
 * memory, one id looked up and added, and the state written back. 200 rounds per size. Then what one
 * save request costs the process that receives it: the static data read, the keys it carries (a
 * second of traffic: 100 and 1,000) compared with and added to the stored ones, written back.
 *
 *   .ci/with-node24 node -r ts-node/register/transpile-only test/bench/storeCost.bench.ts
 */
import { EndpointMemory } from '../../nodes/MarketplaceTrigger/memory';
import { receiveSaveRequest } from '../../nodes/MarketplaceTrigger/saveViaOwnWebhook';
import { KeySet, EndpointStore } from '../../nodes/MarketplaceTrigger/store';
import { deliveryKey } from '../../nodes/MarketplaceTrigger/once';

const ROUNDS = 200;
for (const n of [100, 1_000, 10_000]) {
	const now = Date.now();
	const store = new KeySet();
	// ids spread over 10 minutes of expiry, as steady traffic leaves them
	for (let i = 0; i < n; i++)
		store.keep(deliveryKey(`evt_${n}_${i}`), now + 15 * 60_000 + (i % 600) * 1000);
	const json = JSON.stringify({ seen: { url: store.toState() } });
	const memory = new EndpointMemory('url');
	const started = process.hrtime.bigint();
	for (let round = 0; round < ROUNDS; round++) {
		const stored = EndpointStore.read(JSON.parse(json) as Record<string, unknown>, 'url', memory);
		stored.isKnown('seen', deliveryKey(`new_${round}`), now);
		stored.add({ key: deliveryKey(`new_${round}`), section: 'seen', expiresAt: now + 15 * 60_000 });
		stored.writeBack(now);
	}
	const ms = Number(process.hrtime.bigint() - started) / 1e6 / ROUNDS;
	console.log(
		`${String(n).padStart(6)} ids: ${ms.toFixed(3)} ms per delivery (static data ${json.length} B)`,
	);
}

const SAVE_ROUNDS = 20;
for (const n of [1_000, 10_000]) {
	for (const carried of [100, 1_000]) {
		const now = Date.now();
		const store = new KeySet();
		for (let i = 0; i < n; i++)
			store.keep(deliveryKey(`evt_${n}_${i}`), now + 15 * 60_000 + (i % 600) * 1000);
		const json = JSON.stringify({ seen: { url: store.toState() } });
		const sent = new KeySet();
		for (let i = 0; i < carried; i++)
			sent.keep(deliveryKey(`new_${n}_${carried}_${i}`), now + 15 * 60_000);
		const data = { seen: sent.toState(), orders: new KeySet().toState() };
		const started = process.hrtime.bigint();
		for (let round = 0; round < SAVE_ROUNDS; round++) {
			const stored = EndpointStore.read(JSON.parse(json) as Record<string, unknown>, 'url');
			receiveSaveRequest(stored, JSON.parse(JSON.stringify(data)));
			stored.writeBack(now);
		}
		const ms = Number(process.hrtime.bigint() - started) / 1e6 / SAVE_ROUNDS;
		console.log(
			`${String(n).padStart(6)} ids kept, a save request of ${String(carried).padStart(5)} keys: ${ms.toFixed(2)} ms`,
		);
	}
}

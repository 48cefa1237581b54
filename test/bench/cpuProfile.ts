/**
 * Summarises a V8 CPU profile (`node --cpu-prof`, e.g. of n8n run by floor.bench.ts --cpu-prof) as
 * markdown: sampled time by where the code comes from (this package, the floor package, n8n and its
 * packages, the database, other modules, Node itself, GC, idle), the frames with the most self time,
 * and this package's functions by inclusive time (synchronous stacks only: time after an await is
 * counted where it resumes).
 *
 * Run: .ci/with-node24 node -r ts-node/register/transpile-only test/bench/cpuProfile.ts <file.cpuprofile> [--window measured-window.json] [--top 25]
 *      [--against <other.cpuprofile> --against-window <its measured-window.json>] [--level N]
 *      [--split [--label T] [--against-label F]]
 * --window: only the samples between `fromUs` and `toUs` (the monotonic clock, as V8 stamps samples;
 * floor.bench.ts --cpu-prof writes the file for its measured phase), and the time per delivery.
 * --against: instead of the summary, both measured phases per delivery, the frames that differ most.
 * --level N: only concurrency level N's part of the measured phase (its own window and deliveries).
 * --split: instead, ms per delivery of the parts a delivery of the trigger is judged by (n8n's
 * deduplication helper, the JSON of its row, the database, this package, the HMAC), for this profile
 * and, with --against, the other and the difference.
 * This package's code is what n8n loaded from a `dist/nodes/` or `dist/credentials/` folder outside
 * any node_modules (n8n resolves the linked package to its real path).
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
	id: number;
	callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
	children?: number[];
}
interface Profile {
	nodes: ProfileNode[];
	samples: number[];
	timeDeltas: number[];
	startTime: number;
	endTime: number;
}

export type Category =
	| 'this package'
	| 'floor package'
	| 'n8n'
	| 'database'
	| 'other modules'
	| 'node'
	| 'gc'
	| 'idle'
	| 'program'
	| 'other';

export function categoryOf(url: string, functionName: string): Category {
	if (functionName === '(idle)') return 'idle';
	if (functionName === '(garbage collector)') return 'gc';
	if (functionName === '(program)') return 'program';
	if (/\/dist\/(nodes|credentials)\//.test(url) && !url.includes('node_modules/'))
		return 'this package';
	if (url.includes('n8n-nodes-bench-floor') || url.includes('floor-package'))
		return 'floor package';
	if (/node_modules\/(sqlite3|typeorm|@n8n\/typeorm|pg)\//.test(url)) return 'database';
	if (/node_modules\/(n8n|n8n-core|n8n-workflow|n8n-nodes-base|@n8n)\//.test(url)) return 'n8n';
	if (url.includes('node_modules/')) return 'other modules';
	if (url.startsWith('node:') || url === '') return url === '' ? 'other' : 'node';
	return 'other';
}

export interface Window {
	fromUs: number;
	toUs: number;
	deliveries?: number;
	/** per concurrency level (floor.bench.ts writes them since its per-level windows) */
	levels?: Array<{ level: number; fromUs: number; toUs: number; deliveries: number }>;
}

/** `window`, or its level `level` when one is asked for. */
export function windowOf(window: Window, level?: number): Window {
	if (level === undefined) return window;
	const found = window.levels?.find((l) => l.level === level);
	if (!found) throw new Error(`the window has no level ${level}`);
	return found;
}

/**
 * The parts of a delivery the split reports, each a test on a sample's stack (synchronous frames
 * only: time after an await counts where it resumes, so the database's callbacks are not under the
 * helper that awaited them) or on its own frame.
 */
const isDedup = (n: ProfileNode) => /deduplication/i.test(n.callFrame.url);
const SPLIT: Array<{
	name: string;
	on: 'stack' | 'self';
	test: (n: ProfileNode) => boolean;
	/** a stack with such a frame does not count */
	unless?: (n: ProfileNode) => boolean;
}> = [
	{
		name: "n8n's deduplication helper, synchronous (`DeduplicationHelper`, n8n-core's helper functions, the md5 of each key, the queries it builds)",
		on: 'stack',
		test: isDedup,
	},
	{
		name: "JSON of `simple-json` columns (typeorm `stringToSimpleJson`, `simpleJsonToString`): T's deduplication row, and both targets' execution data",
		on: 'stack',
		test: (n) => /^(stringToSimpleJson|simpleJsonToString)$/.test(n.callFrame.functionName),
	},
	{ name: 'database (sqlite3, typeorm), self', on: 'self', test: (n) => cat(n) === 'database' },
	{ name: "n8n's own code, self", on: 'self', test: (n) => cat(n) === 'n8n' },
	{ name: 'this package, self', on: 'self', test: (n) => cat(n) === 'this package' },
	{
		name: 'under a frame of this package (inclusive: its own frames and what they call)',
		on: 'stack',
		test: (n) => cat(n) === 'this package',
	},
	{
		name: "under a frame of this package, less n8n's deduplication helper it calls (the package's own work)",
		on: 'stack',
		test: (n) => cat(n) === 'this package',
		unless: isDedup,
	},
	{
		name: "the HMAC of the verification (under this package's `hmac`)",
		on: 'stack',
		test: (n) =>
			cat(n) === 'this package' &&
			n.callFrame.functionName === 'hmac' &&
			n.callFrame.url.includes('webhookVerifier'),
	},
	{
		name: "under this package's `webhook` (receive: verification, item)",
		on: 'stack',
		test: (n) =>
			cat(n) === 'this package' &&
			n.callFrame.functionName === 'webhook' &&
			n.callFrame.url.includes('MarketplaceTrigger.node'),
	},
	{
		name: "under this package's `execute` (admitItems, once.ts, to the first await)",
		on: 'stack',
		test: (n) =>
			cat(n) === 'this package' &&
			n.callFrame.functionName === 'execute' &&
			n.callFrame.url.includes('MarketplaceTrigger.node'),
	},
	{ name: 'Node internals, self', on: 'self', test: (n) => cat(n) === 'node' },
	{ name: 'garbage collector', on: 'self', test: (n) => cat(n) === 'gc' },
	{ name: '(program)', on: 'self', test: (n) => cat(n) === 'program' },
	{ name: 'all, not idle', on: 'self', test: (n) => cat(n) !== 'idle' },
];

/** ms per delivery of each part of SPLIT, in the window of `file`. */
export function splitPerDelivery(file: string, window: Window): number[] {
	const { profile, byId } = readProfile(file);
	const parent = new Map<number, number>();
	for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
	const totals = SPLIT.map(() => 0);
	for (const [id, us] of sampledSelfUs(profile, window)) {
		const self = byId.get(id)!;
		SPLIT.forEach((part, i) => {
			if (part.on === 'self') {
				if (part.test(self)) totals[i] += us;
				return;
			}
			let found = false;
			for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
				const frame = byId.get(cur)!;
				if (part.unless?.(frame)) return;
				if (part.test(frame)) found = true;
			}
			if (found) totals[i] += us;
		});
	}
	return totals.map((us) => us / 1000 / (window.deliveries ?? 1));
}

/** The split as markdown: one column per profile, and the first less the second when two are given. */
export function split(profiles: Array<{ label: string; file: string; window: Window }>): string {
	const columns = profiles.map((p) => splitPerDelivery(p.file, p.window));
	const two = profiles.length === 2;
	const heads = profiles.map((p) => `${p.label} (${p.window.deliveries ?? '?'} deliveries)`);
	if (two) heads.push(`${profiles[0].label} - ${profiles[1].label}`);
	const lines = [
		`| ms of n8n's main thread per delivery | ${heads.join(' | ')} |`,
		`|---|${heads.map(() => '---:').join('|')}|`,
	];
	SPLIT.forEach((part, i) => {
		const cells = columns.map((c) => c[i].toFixed(3));
		if (two) cells.push((columns[0][i] - columns[1][i]).toFixed(3));
		lines.push(`| ${part.name} | ${cells.join(' | ')} |`);
	});
	return lines.join('\n');
}

/** Self time (µs) per profile node, of the samples inside `window` when one is given. */
function sampledSelfUs(profile: Profile, window?: Window): Map<number, number> {
	const selfUs = new Map<number, number>();
	let at = profile.startTime;
	profile.samples.forEach((id, i) => {
		at += profile.timeDeltas[i] ?? 0;
		if (window && (at < window.fromUs || at > window.toUs)) return;
		selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
	});
	return selfUs;
}

/** A frame's name across profiles: function, file below node_modules or dist, line. */
const key = (n: ProfileNode) =>
	`${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url
		.replace(/^file:\/\//, '')
		.replace(/.*node_modules\//, '')
		.replace(/.*\/dist\//, 'dist/')}:${n.callFrame.lineNumber + 1}`;
const cat = (n: ProfileNode) => categoryOf(n.callFrame.url, n.callFrame.functionName);

/** The profile in `file`, with its nodes by id. */
function readProfile(file: string): { profile: Profile; byId: Map<number, ProfileNode> } {
	const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
	return { profile, byId: new Map(profile.nodes.map((n) => [n.id, n])) };
}

export function summarise(file: string, top = 25, window?: Window): string {
	const { profile, byId } = readProfile(file);
	const parent = new Map<number, number>();
	for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
	const selfUs = sampledSelfUs(profile, window);
	const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

	const byCategory = new Map<string, number>();
	const bySelf = new Map<string, { us: number; cat: Category }>();
	/** inclusive time per function of this package, counted once per sample however often it is on the stack */
	const oursInclusive = new Map<string, number>();
	let underOurs = 0;
	for (const [id, us] of selfUs) {
		const n = byId.get(id)!;
		byCategory.set(cat(n), (byCategory.get(cat(n)) ?? 0) + us);
		const k = key(n);
		bySelf.set(k, { us: (bySelf.get(k)?.us ?? 0) + us, cat: cat(n) });
		const seen = new Set<string>();
		for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
			const frame = byId.get(cur)!;
			if (cat(frame) !== 'this package') continue;
			const fk = key(frame);
			if (seen.has(fk)) continue;
			seen.add(fk);
			oursInclusive.set(fk, (oursInclusive.get(fk) ?? 0) + us);
		}
		if (seen.size > 0) underOurs += us;
	}
	const busy = total - (byCategory.get('idle') ?? 0);
	const ms = (us: number) => (us / 1000).toFixed(0);
	const pct = (us: number, of: number) => `${((100 * us) / of).toFixed(1)}%`;
	const lines: string[] = [];
	const perDelivery = window?.deliveries
		? ` ${(busy / 1000 / window.deliveries).toFixed(1)} ms not idle per delivery accepted (${window.deliveries}).`
		: '';
	lines.push(
		`Profile ${file.replace(/.*\//, '')}${window ? ', measured phase only' : ''}: ${ms(total)} ms sampled, ${ms(busy)} ms not idle.${perDelivery}`,
	);
	lines.push('');
	lines.push('| where (self time) | ms | of not idle |');
	lines.push('|---|---:|---:|');
	for (const [c, us] of [...byCategory].sort((a, b) => b[1] - a[1]))
		if (c !== 'idle') lines.push(`| ${c} | ${ms(us)} | ${pct(us, busy)} |`);
	lines.push(`| (idle) | ${ms(byCategory.get('idle') ?? 0)} | |`);
	lines.push(
		`| anything under a frame of this package (inclusive, synchronous stacks) | ${ms(underOurs)} | ${pct(underOurs, busy)} |`,
	);
	lines.push('');
	lines.push(`Top ${top} frames by self time:`);
	lines.push('');
	lines.push('| frame | where | self ms | of not idle |');
	lines.push('|---|---|---:|---:|');
	for (const [k, v] of [...bySelf]
		.filter(([, v]) => v.cat !== 'idle')
		.sort((a, b) => b[1].us - a[1].us)
		.slice(0, top)) {
		lines.push(`| \`${k}\` | ${v.cat} | ${ms(v.us)} | ${pct(v.us, busy)} |`);
	}
	lines.push('');
	lines.push(`This package's functions by inclusive time (top ${top}):`);
	lines.push('');
	lines.push('| function | inclusive ms | of not idle |');
	lines.push('|---|---:|---:|');
	for (const [k, us] of [...oursInclusive].sort((a, b) => b[1] - a[1]).slice(0, top))
		lines.push(`| \`${k}\` | ${ms(us)} | ${pct(us, busy)} |`);
	return lines.join('\n');
}

/** Self time per delivery (ms) of each frame, not idle, in the window of `file`. */
function selfMsPerDelivery(
	file: string,
	window: Window,
): Map<string, { ms: number; cat: Category }> {
	const { profile, byId } = readProfile(file);
	const frames = new Map<string, { ms: number; cat: Category }>();
	for (const [id, us] of sampledSelfUs(profile, window)) {
		const n = byId.get(id)!;
		if (cat(n) === 'idle') continue;
		const k = key(n);
		frames.set(k, {
			ms: (frames.get(k)?.ms ?? 0) + us / 1000 / (window.deliveries ?? 1),
			cat: cat(n),
		});
	}
	return frames;
}

/**
 * Two profiles' measured phases side by side, per delivery: where the first spends more than the
 * second (and less), frame by frame and by where the code comes from.
 */
export function compare(
	a: { file: string; window: Window },
	b: { file: string; window: Window },
	top = 25,
): string {
	const fa = selfMsPerDelivery(a.file, a.window);
	const fb = selfMsPerDelivery(b.file, b.window);
	const rows = [...new Set([...fa.keys(), ...fb.keys()])].map((k) => {
		const x = fa.get(k)?.ms ?? 0;
		const y = fb.get(k)?.ms ?? 0;
		return { k, cat: fa.get(k)?.cat ?? fb.get(k)!.cat, x, y, d: x - y };
	});
	const sum = (f: Map<string, { ms: number }>) => [...f.values()].reduce((t, v) => t + v.ms, 0);
	const byCat = new Map<string, [number, number]>();
	for (const r of rows) {
		const c = byCat.get(r.cat) ?? [0, 0];
		byCat.set(r.cat, [c[0] + r.x, c[1] + r.y]);
	}
	const f3 = (n: number) => n.toFixed(3);
	const lines = [
		`Not idle per delivery: ${f3(sum(fa))} ms (first) against ${f3(sum(fb))} ms (second).`,
		'',
		'| where (self time) | first, ms per delivery | second | difference |',
		'|---|---:|---:|---:|',
		...[...byCat]
			.sort((p, q) => q[1][0] - q[1][1] - (p[1][0] - p[1][1]))
			.map(([c, [x, y]]) => `| ${c} | ${f3(x)} | ${f3(y)} | ${f3(x - y)} |`),
		'',
		`Frames where the first spends most more (top ${top}) and most less (top 5):`,
		'',
		'| frame | where | first, ms per delivery | second | difference |',
		'|---|---|---:|---:|---:|',
	];
	const sorted = rows.sort((p, q) => q.d - p.d);
	for (const r of [...sorted.slice(0, top), ...sorted.slice(-5)])
		lines.push(`| \`${r.k}\` | ${r.cat} | ${f3(r.x)} | ${f3(r.y)} | ${f3(r.d)} |`);
	return lines.join('\n');
}

if (require.main === module) {
	const file = process.argv[2];
	if (!file)
		throw new Error(
			'usage: cpuProfile.ts <file.cpuprofile> [--window measured-window.json] [--top 25]',
		);
	const opt = (name: string) =>
		process.argv.indexOf(`--${name}`) > 0
			? process.argv[process.argv.indexOf(`--${name}`) + 1]
			: undefined;
	const windowFile = opt('window');
	const against = opt('against');
	const level = opt('level') === undefined ? undefined : Number(opt('level'));
	const readWindow = (f: string | undefined) => {
		if (!f) throw new Error('--split and --against need --window (measured-window.json)');
		return windowOf(JSON.parse(readFileSync(f, 'utf8')) as Window, level);
	};
	if (process.argv.includes('--split')) {
		const profiles = [{ label: opt('label') ?? 'first', file, window: readWindow(windowFile) }];
		if (against)
			profiles.push({
				label: opt('against-label') ?? 'second',
				file: against,
				window: readWindow(opt('against-window')),
			});
		console.log(split(profiles));
		process.exit(0);
	}
	if (against) {
		console.log(
			compare(
				{ file, window: readWindow(windowFile) },
				{ file: against, window: readWindow(opt('against-window')) },
				Number(opt('top') ?? 25),
			),
		);
		process.exit(0);
	}
	console.log(
		summarise(file, Number(opt('top') ?? 25), windowFile ? readWindow(windowFile) : undefined),
	);
}

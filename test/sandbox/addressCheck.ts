import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** Private, reserved and special-purpose ranges a webhook may never target. */
/** Separate lists: a BlockList applies IPv6 rules such as ::ffff:0:0/96 to IPv4 addresses too. */
const blocked4 = new BlockList();
const blocked6 = new BlockList();
for (const [net, prefix] of [
	['0.0.0.0', 8],
	['10.0.0.0', 8],
	['100.64.0.0', 10],
	['169.254.0.0', 16],
	['172.16.0.0', 12],
	['192.0.0.0', 24],
	['192.0.2.0', 24],
	['192.88.99.0', 24],
	['192.168.0.0', 16],
	['198.18.0.0', 15],
	['198.51.100.0', 24],
	['203.0.113.0', 24],
	['224.0.0.0', 4],
	['240.0.0.0', 4],
] as const)
	blocked4.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
	['::', 128],
	['::ffff:0:0', 96],
	['64:ff9b::', 96],
	['100::', 64],
	['2001::', 23],
	['2001:db8::', 32],
	['fc00::', 7],
	['fe80::', 10],
	['ff00::', 8],
] as const)
	blocked6.addSubnet(net, prefix, 'ipv6');

const loopback4 = new BlockList();
loopback4.addSubnet('127.0.0.0', 8, 'ipv4');
const loopback6 = new BlockList();
loopback6.addAddress('::1', 'ipv6');

export type AddressClass = 'public' | 'loopback' | 'private';

export function classifyAddress(address: string): AddressClass {
	const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
	const mapped = family === 'ipv6' && /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
	if (mapped) return classifyAddress(mapped[1]);
	const [loop, block] = family === 'ipv4' ? [loopback4, blocked4] : [loopback6, blocked6];
	if (loop.check(address, family)) return 'loopback';
	return block.check(address, family) ? 'private' : 'public';
}

export type TargetCheck =
	| { ok: true; address: string; family: number }
	| { ok: false; reason: string };

/**
 * Resolves the URL's host and accepts it only when every address is public (or loopback, when
 * the sandbox runs with allowHttpLoopback). Plain http is accepted only for loopback then.
 */
export async function checkTarget(raw: string, allowLoopback: boolean): Promise<TargetCheck> {
	let url: URL;
	try {
		url = new URL(raw);
	} catch {
		return { ok: false, reason: 'url is not an absolute URL' };
	}
	if (url.protocol !== 'https:' && url.protocol !== 'http:')
		return { ok: false, reason: 'url must use https' };
	const host = url.hostname.replace(/^\[|\]$/g, '');
	let addresses: { address: string; family: number }[];
	try {
		addresses = isIP(host)
			? [{ address: host, family: isIP(host) }]
			: await lookup(host, { all: true });
	} catch {
		return { ok: false, reason: `host ${host} does not resolve` };
	}
	if (addresses.length === 0) return { ok: false, reason: `host ${host} does not resolve` };
	const classes = addresses.map((a) => classifyAddress(a.address));
	const allLoopback = classes.every((c) => c === 'loopback');
	if (allLoopback && allowLoopback) return { ok: true, ...addresses[0] };
	if (url.protocol !== 'https:') return { ok: false, reason: 'url must use https' };
	if (classes.some((c) => c !== 'public'))
		return { ok: false, reason: `host ${host} resolves to a private or reserved address` };
	return { ok: true, ...addresses[0] };
}

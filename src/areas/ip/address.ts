import { isIPv4, isIPv6 } from 'node:net';
import { ipv4ToNumber, ipv6ToBigInt } from './data/asn.js';

export interface ParsedIp {
  /** Canonical text: dotted quad, or RFC 5952 IPv6 (lower case, `::` compressed). */
  ip: string;
  version: 4 | 6;
  /** Why the address has no owner on the internet, when it has none. */
  special: SpecialRange | null;
}

export type SpecialRange =
  | 'private'
  | 'loopback'
  | 'link_local'
  | 'documentation'
  | 'shared'
  | 'multicast'
  | 'unspecified'
  | 'reserved';

const V4_SPECIAL: [string, number, SpecialRange][] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link_local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

const V6_SPECIAL: [string, number, SpecialRange][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['fc00::', 7, 'private'],
  ['fe80::', 10, 'link_local'],
  ['2001:db8::', 32, 'documentation'],
  ['ff00::', 8, 'multicast'],
];

function inV4(n: number, base: string, bits: number) {
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return (n & mask) >>> 0 === (ipv4ToNumber(base) & mask) >>> 0;
}

function inV6(n: bigint, base: string, bits: number) {
  const shift = BigInt(128 - bits);
  return n >> shift === ipv6ToBigInt(base) >> shift;
}

/**
 * An address as given in a path: IPv4 in dotted-quad form only (no octal, no short forms such as
 * `1.2.3`), or IPv6 (without a zone). An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) is judged
 * as its IPv4 address. Null when it is not an address.
 */
export function parseIp(text: string): ParsedIp | null {
  if (text.length > 45) return null;
  if (isIPv4(text)) return withSpecial(text, 4);
  // A zone (`fe80::1%eth0`) names a link of the asking host, not an address on the internet.
  if (!isIPv6(text) || text.includes('%')) return null;
  const canonical = new URL(`http://[${text}]/`).hostname.slice(1, -1);
  const n = ipv6ToBigInt(canonical);
  if (n >> 32n === 0xffffn) {
    const v4 = Number(n & 0xffffffffn);
    return withSpecial([v4 >>> 24, (v4 >>> 16) & 255, (v4 >>> 8) & 255, v4 & 255].join('.'), 4);
  }
  return withSpecial(canonical, 6);
}

function withSpecial(ip: string, version: 4 | 6): ParsedIp {
  let special: SpecialRange | null = null;
  if (version === 4) {
    const n = ipv4ToNumber(ip);
    special = V4_SPECIAL.find(([base, bits]) => inV4(n, base, bits))?.[2] ?? null;
  } else {
    const n = ipv6ToBigInt(ip);
    special = V6_SPECIAL.find(([base, bits]) => inV6(n, base, bits))?.[2] ?? null;
  }
  return { ip, version, special };
}

/** Whether `ip` lies in `cidr` (`a.b.c.d/n`, `x::/n`, or a single address). */
export function inCidr(ip: ParsedIp, cidr: string): boolean {
  const [base, bitsText] = cidr.split('/') as [string, string | undefined];
  const parsed = parseIp(base.trim());
  if (!parsed || parsed.version !== ip.version) return false;
  const bits = bitsText === undefined ? (ip.version === 4 ? 32 : 128) : Number(bitsText);
  if (!Number.isInteger(bits) || bits < 0 || bits > (ip.version === 4 ? 32 : 128)) return false;
  return ip.version === 4
    ? inV4(ipv4ToNumber(ip.ip), parsed.ip, bits)
    : inV6(ipv6ToBigInt(ip.ip), parsed.ip, bits);
}

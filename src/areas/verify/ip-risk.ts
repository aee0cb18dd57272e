import { BlockList, isIP } from 'node:net';

/**
 * `ip_risk` of start and check: from the IP-intelligence area when the build has it
 * (ip-intelligence.ts), else from the special-purpose ranges alone (`BuiltinIpReputation`).
 */
export interface IpRisk {
  ip: string;
  /** 0 (no known risk) to 100. */
  score: number;
  level: 'low' | 'medium' | 'high';
  /** True for addresses that cannot be an end user's public address. */
  is_private: boolean;
  /** The special-purpose range the address is in (`private`, `loopback`, …), or null. */
  range: string | null;
  /** ISO 3166-1 alpha-2 country, when the reputation source knows it. */
  country: string | null;
  /** Why the score is what it is. */
  reasons: string[];
  /** Which reputation service answered. */
  source: string;
}

export interface IpReputation {
  assess(ip: string): Promise<IpRisk>;
}

export const levelOf = (score: number): IpRisk['level'] =>
  score >= 70 ? 'high' : score >= 30 ? 'medium' : 'low';

/** IANA special-purpose ranges (RFC 6890 and successors), by the name `range` reports. */
const RANGES: [string, string, number, 'ipv4' | 'ipv6'][] = [
  ['unspecified', '0.0.0.0', 8, 'ipv4'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['shared', '100.64.0.0', 10, 'ipv4'],
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['link_local', '169.254.0.0', 16, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['reserved', '192.0.0.0', 24, 'ipv4'],
  ['documentation', '192.0.2.0', 24, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['benchmarking', '198.18.0.0', 15, 'ipv4'],
  ['documentation', '198.51.100.0', 24, 'ipv4'],
  ['documentation', '203.0.113.0', 24, 'ipv4'],
  ['multicast', '224.0.0.0', 4, 'ipv4'],
  ['reserved', '240.0.0.0', 4, 'ipv4'],
  ['unspecified', '::', 128, 'ipv6'],
  ['loopback', '::1', 128, 'ipv6'],
  ['documentation', '2001:db8::', 32, 'ipv6'],
  ['private', 'fc00::', 7, 'ipv6'],
  ['link_local', 'fe80::', 10, 'ipv6'],
  ['multicast', 'ff00::', 8, 'ipv6'],
];

// One list per range and family: a BlockList answers IPv4 addresses from its IPv6 rules too (as
// IPv4-mapped addresses), so the families are kept apart.
const LISTS = { ipv4: new Map<string, BlockList>(), ipv6: new Map<string, BlockList>() };
for (const [name, net, prefix, family] of RANGES) {
  const list = LISTS[family].get(name) ?? new BlockList();
  LISTS[family].set(name, list);
  list.addSubnet(net, prefix, family);
}

export function specialRangeOf(ip: string): string | null {
  const family = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
  // An IPv4-mapped IPv6 address is judged as the IPv4 address it carries.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return specialRangeOf(mapped[1]!);
  const mappedHex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(ip);
  if (mappedHex) {
    const [hi, lo] = [Number.parseInt(mappedHex[1]!, 16), Number.parseInt(mappedHex[2]!, 16)];
    return specialRangeOf(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`);
  }
  for (const [name, list] of LISTS[family]) if (list.check(ip, family)) return name;
  return null;
}

/**
 * What can be said without reputation data: whether the address could be an end user's public
 * address at all. A private or reserved address as `client_ip` means the caller passed its own
 * proxy's address or a made-up one, which is worth a medium score; country stays unknown.
 */
export class BuiltinIpReputation implements IpReputation {
  async assess(ip: string): Promise<IpRisk> {
    const range = specialRangeOf(ip);
    const score = range ? 50 : 0;
    return {
      ip,
      score,
      level: levelOf(score),
      is_private: range !== null,
      range,
      country: null,
      reasons: range ? [`address is in a ${range.replace('_', '-')} range, not a public one`] : [],
      source: 'builtin',
    };
  }
}

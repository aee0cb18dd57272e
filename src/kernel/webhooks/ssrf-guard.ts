import { type LookupAddress, lookup as lookupCallback } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import type { Agent } from 'undici';
import { lazyPackage } from '../lazy.js';

const undici = lazyPackage<typeof import('undici')>('undici');

/** Ranges a webhook must not reach unless the operator allows it: private, loopback, link-local, reserved. */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible ::a.b.c.d
  ['::ffff:0:0:0', 96], // IPv4-translated (SIIT)
  ['64:ff9b::', 96], // NAT64
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2002::', 16], // 6to4, which can reach any IPv4 address through a relay
  ['fec0::', 10], // deprecated site-local
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

// No `::ffff:0:0/96` rule: BlockList matches IPv4 addresses against IPv6 rules in their mapped
// form, so that rule refused every IPv4 address. Mapped addresses are judged as IPv4 instead.

/** `::ffff:a.b.c.d`, however spelled, is the IPv4 address a.b.c.d; null for any other address. */
function mappedIpv4(address: string): string | null {
  let host: string;
  try {
    host = new URL(`http://[${address}]/`).hostname; // canonical: [::ffff:7f00:1]
  } catch {
    return null;
  }
  const m = /^\[::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/.exec(host);
  if (!m) return null;
  const hi = Number.parseInt(m[1]!, 16);
  const lo = Number.parseInt(m[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  const v4 = family === 6 ? mappedIpv4(address) : null;
  if (v4) return blocked.check(v4, 'ipv4');
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export class UnsafeTargetError extends Error {}
/** The target is refused only for where it points (a private, loopback or link-local address). */
export class PrivateTargetError extends UnsafeTargetError {}

/**
 * Checks a webhook target before each attempt: http(s) only, and — unless private targets are
 * allowed — every address the host resolves to must be public. This early check gives a clear
 * error; `publicOnlyDispatcher` then checks the address actually connected to, which is what
 * defeats DNS rebinding (a second lookup answering differently).
 */
export async function assertSafeTarget(url: string, allowPrivate: boolean): Promise<URL> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UnsafeTargetError('not an absolute URL');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new UnsafeTargetError('scheme must be http(s)');
  if (parsed.username || parsed.password)
    throw new UnsafeTargetError('credentials in the URL are not allowed');
  if (allowPrivate) return parsed;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  if (addresses.length === 0 || addresses.some(isPrivateAddress)) {
    throw new PrivateTargetError(`${host} resolves to a private, loopback or link-local address`);
  }
  return parsed;
}

/**
 * An HTTP agent that resolves names itself and refuses to connect to any non-public address,
 * at the moment of connecting. Literal IP targets are checked by `assertSafeTarget`.
 */
export function publicOnlyDispatcher(): Agent {
  return new (undici().Agent)({
    connect: {
      lookup: (hostname, options, callback) => {
        lookupCallback(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
          if (err) return callback(err, []);
          const bad = addresses.find((a) => isPrivateAddress(a.address));
          if (bad || addresses.length === 0) {
            return callback(
              new PrivateTargetError(`${hostname} resolves to a private, loopback or link-local address`),
              [],
            );
          }
          callback(null, addresses);
        });
      },
    },
  });
}

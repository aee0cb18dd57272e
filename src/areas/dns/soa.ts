import type { SoaFields } from './server-contract.js';

/**
 * The SOA Fjord keeps for every zone. Timers follow RIPE-203's recommendations for small zones;
 * the negative-caching TTL (RFC 2308) is short so that a name created just after someone asked
 * for it shows up soon.
 */
export const SOA_TIMERS = { refresh: 10800, retry: 3600, expire: 1209600, minimum: 300, ttl: 3600 } as const;

/** TTL of the apex NS records Fjord serves. */
export const NS_TTL = 3600;

/**
 * The next serial: date-based `YYYYMMDDnn` (RFC 1912 §2.2) from the clock, or the previous serial
 * plus one when that is not larger (more than 99 changes in a day, or a clock behind) — always
 * strictly increasing, and kept within 32 bits by RFC 1982 arithmetic being unnecessary before
 * the year 4294.
 */
export function nextSerial(previous: number, nowMs: number): number {
  const d = new Date(nowMs);
  const dated = (d.getUTCFullYear() * 10000 + (d.getUTCMonth() + 1) * 100 + d.getUTCDate()) * 100;
  return Math.max(previous + 1, dated);
}

export function soaFor(apex: string, nameservers: string[], serial: number): SoaFields {
  return { mname: nameservers[0]!, rname: `hostmaster.${apex}`, serial, ...SOA_TIMERS };
}

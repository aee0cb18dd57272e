import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { DEFAULT_LIMITS, isPlan, type LimitOverrides, PLANS } from '../kernel/limits/quotas.js';
import type { Config, DynPlanLimits } from './config.js';
import type { VariableSpec } from './variables.js';

/** Parsers for FJORD_* values: each turns one raw string into a typed value or throws why not. */
export const withoutPassword = (raw: string) =>
  raw.replace(/^([a-z][\w+.-]*:\/\/[^/@:]*):[^/@]*@/i, '$1:<hidden>@');

export function sqlitePath(url: string | undefined, dataDir: string): string {
  if (!url) return resolve(dataDir, 'fjord.sqlite');
  const rest = url.slice('sqlite:'.length);
  return rest === ':memory:' ? ':memory:' : resolve(rest);
}

export const asString = (raw: string) => raw;

export function asInteger(raw: string, spec: VariableSpec): number {
  if (!/^-?\d+$/.test(raw)) throw new Error('expected an integer');
  const n = Number(raw);
  if (spec.min !== undefined && n < spec.min) throw new Error(`must be at least ${spec.min}`);
  if (spec.max !== undefined && n > spec.max) throw new Error(`must be at most ${spec.max}`);
  return n;
}

export function asPort(raw: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n > 65535) throw new Error('expected a port number 0-65535');
  return n;
}

export function asBoolean(raw: string): boolean {
  const v = raw.toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new Error('expected a boolean (1/0, true/false, yes/no, on/off)');
}

export const urlOf = (...schemes: string[]) =>
  function asUrl(raw: string): string {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new Error('expected an absolute URL');
    }
    if (!schemes.includes(url.protocol.slice(0, -1))) {
      throw new Error(
        `unsupported scheme ${url.protocol} (expected ${schemes.map((s) => `${s}:`).join(' or ')})`,
      );
    }
    return raw;
  };
export const asHttpUrl = urlOf('http', 'https');
export const asRedisUrl = urlOf('redis', 'rediss');
export const asSmtpUrl = urlOf('smtp', 'smtps');
export const asSmppUrl = urlOf('smpp', 'ssmpp');
export const asRtmpUrl = urlOf('rtmp', 'rtmps');

/** `host:port` (an IPv6 address in brackets), as devices and encoders are handed it. */
export function asHostPort(raw: string): { host: string; port: number } {
  const m = raw.match(/^(\[[0-9a-f:.]+\]|[^:[\]]+):(\d+)$/i);
  if (!m) throw new Error('expected host:port');
  const host = m[1]!.startsWith('[') ? m[1]!.slice(1, -1) : m[1]!;
  const port = asPort(m[2]!);
  if (port === 0) throw new Error('the port must not be 0');
  return { host: asHost(host), port };
}

export function asE164(raw: string): string {
  if (!/^\+[1-9]\d{6,14}$/.test(raw)) throw new Error('expected an E.164 number such as +4721000000');
  return raw;
}

export const asE164List = (raw: string): string[] =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(asE164);

export function asHost(raw: string): string {
  if (isIP(raw) || /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(raw)) return raw;
  throw new Error('expected an IP address or host name');
}

export function asEnum(raw: string, spec: VariableSpec): string {
  if (!spec.values?.includes(raw)) throw new Error(`expected one of ${spec.values?.join(', ')}`);
  return raw;
}

export function asList(raw: string, spec: VariableSpec): string[] {
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = items.filter((i) => !spec.values?.includes(i));
  if (bad.length > 0)
    throw new Error(`unknown ${bad.join(', ')}; expected some of ${spec.values?.join(', ')}`);
  if (items.length === 0) throw new Error(`expected at least one of ${spec.values?.join(', ')}`);
  return [...new Set(items)];
}

export function asHostNames(raw: string): string[] {
  const names = raw
    .split(',')
    .map((s) => s.trim().toLowerCase().replace(/\.$/, ''))
    .filter(Boolean);
  const label = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
  const bad = names.filter(
    (n) => n.length > 253 || !n.includes('.') || !n.split('.').every((l) => label.test(l)),
  );
  if (bad.length > 0) throw new Error(`not fully qualified host names: ${bad.join(', ')}`);
  if (names.length === 0) throw new Error('expected at least one host name');
  return [...new Set(names)];
}

/** Registries for container images: `host[:port][/path prefix]` entries, or `none`. */
export function asImageRegistries(raw: string): string[] {
  const entries = raw
    .split(',')
    .map((s) => s.trim().toLowerCase().replace(/\/+$/, ''))
    .filter(Boolean);
  if (entries.length === 1 && entries[0] === 'none') return [];
  const host = /^(?:\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?)(?::\d{1,5})?$/;
  const path = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
  const bad = entries.filter((e) => {
    const [h = '', ...rest] = e.split('/');
    return !host.test(h) || !rest.every((p) => path.test(p));
  });
  if (bad.length > 0) throw new Error(`not registry[:port][/path] entries: ${bad.join(', ')}`);
  return [...new Set(entries)];
}

/** `ip`, `ip:port` or `[ipv6]:port`, as node:dns `setServers` takes them (port 53 when none is given). */
export function asResolverAddress(raw: string): string {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(raw) ?? /^([^:]+)(?::(\d+))?$/.exec(raw);
  const host = m ? m[1]! : raw;
  const port = m?.[2] ?? '53';
  if (!isIP(host) || Number(port) < 1 || Number(port) > 65535) {
    throw new Error('expected an IP address with an optional port (ip, ip:port or [ipv6]:port)');
  }
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

export function splitList(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** `a.b.c.d/n` or `v6::/n` entries; a bare address means that one host. */
export function asCidrList(raw: string): string[] {
  const items = splitList(raw);
  const bad = items.filter((item) => {
    const [address, prefix, extra] = item.split('/');
    const family = isIP(address ?? '');
    if (!family || extra !== undefined) return true;
    return prefix !== undefined && (!/^\d+$/.test(prefix) || Number(prefix) > (family === 6 ? 128 : 32));
  });
  if (bad.length > 0) throw new Error(`not CIDR networks: ${bad.join(', ')}`);
  return items;
}

/** `ip`, `ip:port` or `[ipv6]:port` entries (port 53 when none is given). */
export function asHostPortList(raw: string): string[] {
  return splitList(raw).map(asResolverAddress);
}

export function asStoreUrl(raw: string): string {
  if (/^postgres(ql)?:\/\//.test(raw) || raw.startsWith('sqlite:')) return raw;
  throw new Error('expected postgres://… or sqlite:<path>');
}

export function asDataKey(raw: string): string {
  if (Buffer.from(raw, 'base64').length !== 32) throw new Error('expected base64 of exactly 32 bytes');
  return raw;
}

/** A JSON object, or a clear error (for the variables whose value is one). */
function jsonObject(raw: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error('expected a JSON object');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error('expected a JSON object');
  return parsed as Record<string, unknown>;
}

export function asRateLimitOverrides(raw: string): Config['rateLimitOverrides'] {
  const parsed = jsonObject(raw);
  for (const [key, row] of Object.entries(parsed)) {
    if (!row || typeof row !== 'object') throw new Error(`${key}: expected {points, duration, burst}`);
    for (const [field, v] of Object.entries(row)) {
      if (!['points', 'duration', 'burst'].includes(field) || !Number.isInteger(v) || (v as number) < 0) {
        throw new Error(`${key}.${field}: expected a non-negative integer points, duration or burst`);
      }
    }
  }
  return parsed as Config['rateLimitOverrides'];
}

export function asLimitOverrides(raw: string): LimitOverrides {
  const parsed = jsonObject(raw);
  const limitValue = (v: unknown) => v === null || (Number.isInteger(v) && (v as number) >= 0);
  for (const [name, v] of Object.entries(parsed)) {
    if (!(name in DEFAULT_LIMITS)) throw new Error(`${name}: no limit has this name (see docs/limits.md)`);
    if (limitValue(v)) continue;
    if (!v || typeof v !== 'object' || Array.isArray(v))
      throw new Error(`${name}: expected a non-negative integer, null (unlimited) or {plan: value}`);
    for (const [plan, pv] of Object.entries(v)) {
      if (!isPlan(plan)) throw new Error(`${name}.${plan}: plans are ${PLANS.join(', ')}`);
      if (!limitValue(pv)) throw new Error(`${name}.${plan}: expected a non-negative integer or null`);
    }
  }
  return parsed as LimitOverrides;
}

/** A domain name in lowercase without the trailing dot. */
export function asDnsName(raw: string): string {
  const name = raw.toLowerCase().replace(/\.$/, '');
  if (!/^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?)*$/.test(name)) {
    throw new Error('expected a domain name');
  }
  return name;
}

/** `hostnames=5,updates_per_hour=60,sources=2`: every key required, positive integers. */
export function asDynLimits(raw: string): DynPlanLimits {
  const entries = new Map(
    raw.split(',').map((part) => {
      const [k, v] = part.split('=').map((x) => x.trim());
      return [k ?? '', Number(v)] as const;
    }),
  );
  const out = {} as DynPlanLimits;
  for (const key of ['hostnames', 'updates_per_hour', 'sources'] as const) {
    const n = entries.get(key);
    if (n === undefined || !Number.isInteger(n) || n < 1)
      throw new Error(`${key} must be a positive integer`);
    out[key] = n;
  }
  return out;
}

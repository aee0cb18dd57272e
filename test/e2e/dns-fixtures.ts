/**
 * Fixtures for the DNS server tests: an in-memory ZoneSource, a zone exercising every rule of
 * the answer engine, a P-256 signing key with its DS, and a minimal kernel to start the server.
 */

import { execFile } from 'node:child_process';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { canonicalName, splitName } from '../../src/areas/dns/server/names.js';
import { keyTag } from '../../src/areas/dns/server/rdata.js';
import type {
  QueryStatsSink,
  RecordData,
  ServedRecord,
  ServedTsigKey,
  ZoneSigningKey,
  ZoneSnapshot,
  ZoneSource,
} from '../../src/areas/dns/server-contract.js';
import { loadConfig } from '../../src/config/config.js';
import type { Kernel } from '../../src/kernel/kernel.js';
import { Registry } from '../../src/kernel/registry.js';

export const run = promisify(execFile);

export class MemoryZoneSource implements ZoneSource {
  readonly zones = new Map<string, ZoneSnapshot>();
  tsigKeys: ServedTsigKey[] = [];
  private listeners = new Set<(apex: string) => void>();

  put(zone: ZoneSnapshot): void {
    this.zones.set(zone.apex, zone);
    for (const l of this.listeners) l(zone.apex);
  }
  remove(apex: string): void {
    this.zones.delete(apex);
    for (const l of this.listeners) l(apex);
  }
  async loadTsigKeys() {
    return this.tsigKeys;
  }
  async loadAll() {
    return [...this.zones.values()].filter((z) => z.status !== 'disabled');
  }
  async loadZone(apex: string) {
    return this.zones.get(apex) ?? null;
  }
  onZoneChanged(listener: (apex: string) => void) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

export class MemoryStatsSink implements QueryStatsSink {
  readonly batches: Parameters<QueryStatsSink['recordQueries']>[0][] = [];
  async recordQueries(batch: Parameters<QueryStatsSink['recordQueries']>[0]) {
    this.batches.push(batch);
  }
}

export function signingKey(apex: string): { key: ZoneSigningKey; ds: string; dnskeyRdata: Buffer } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const jwk = publicKey.export({ format: 'jwk' });
  const raw = Buffer.concat([Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
  const dnskeyRdata = Buffer.concat([Buffer.from([1, 1, 3, 13]), raw]);
  const tag = keyTag(dnskeyRdata);
  const digest = createHash('sha256')
    .update(Buffer.concat([canonicalName(splitName(apex)), dnskeyRdata]))
    .digest('hex')
    .toUpperCase();
  return {
    key: {
      algorithm: 13,
      flags: 257,
      keyTag: tag,
      publicKey: raw,
      privateKeyPkcs8: privateKey.export({ format: 'der', type: 'pkcs8' }),
    },
    ds: `${tag} 13 2 ${digest}`,
    dnskeyRdata,
  };
}

const rec = (name: string, data: RecordData, ttl = 300): ServedRecord => ({ name, ttl, data });

/** A zone touching every rule: see the tests for what each name is for. */
export function exampleZone(apex = 'example.test', key: ZoneSigningKey | null = null): ZoneSnapshot {
  const n = (h: string) => (h === '@' ? apex : `${h}.${apex}`);
  const records: ServedRecord[] = [
    rec(n('@'), { type: 'A', address: '192.0.2.1' }),
    rec(n('@'), { type: 'AAAA', address: '2001:db8::1' }),
    rec(n('@'), { type: 'MX', preference: 10, exchange: n('mail') }),
    rec(n('@'), { type: 'TXT', strings: ['v=spf1 -all'] }),
    rec(n('@'), { type: 'CAA', flags: 0, tag: 'issue', value: 'letsencrypt.org' }),
    rec(n('mail'), { type: 'A', address: '192.0.2.25' }),
    rec(n('web'), { type: 'A', address: '192.0.2.80' }),
    rec(n('web'), { type: 'AAAA', address: '2001:db8::80' }),
    rec(n('www'), { type: 'CNAME', target: n('web') }),
    rec(n('c1'), { type: 'CNAME', target: n('c2') }),
    rec(n('c2'), { type: 'CNAME', target: n('web') }),
    rec(n('ext'), { type: 'CNAME', target: 'example.org' }),
    rec(n('dangling'), { type: 'CNAME', target: n('nothere') }),
    rec(n('*.wild'), { type: 'A', address: '192.0.2.50' }),
    rec(n('*.wild'), { type: 'TXT', strings: ['wildcard'] }),
    rec(n('sub.wild'), { type: 'TXT', strings: ['explicit'] }),
    rec(n('a.b.ent'), { type: 'TXT', strings: ['deep'] }),
    rec(n('*.ent'), { type: 'A', address: '192.0.2.60' }),
    rec(n('deleg'), { type: 'NS', target: n('ns1.deleg') }),
    rec(n('deleg'), { type: 'NS', target: 'ns.elsewhere.example' }),
    rec(n('ns1.deleg'), { type: 'A', address: '192.0.2.53' }),
    rec(n('_sip._tcp'), { type: 'SRV', priority: 10, weight: 5, port: 5060, target: n('web') }),
    rec(n('ptr'), { type: 'PTR', target: 'host.example.org' }),
    rec(n('ns1'), { type: 'A', address: '192.0.2.2' }),
    rec(n('ns2'), { type: 'A', address: '192.0.2.3' }),
    rec(n('long'), { type: 'TXT', strings: ['a'.repeat(255), 'b'.repeat(100)] }),
  ];
  for (let i = 1; i <= 60; i++) records.push(rec(n('many'), { type: 'A', address: `198.51.100.${i}` }));
  return {
    zoneId: `zone_${apex}`,
    customerId: 'cus_test',
    apex,
    status: 'active',
    nameservers: [n('ns1'), n('ns2')],
    soa: {
      mname: n('ns1'),
      rname: `hostmaster.${apex}`,
      serial: 2026112201,
      refresh: 7200,
      retry: 3600,
      expire: 1209600,
      minimum: 60,
      ttl: 3600,
    },
    records,
    signingKey: key,
  };
}

export function testKernel(env: Record<string, string> = {}): Kernel {
  const config = loadConfig({ FJORD_DNS_PORT: '0', FJORD_DNS_RRL_RATE: '0', ...env });
  return {
    config,
    log: pino({ level: 'silent' }),
    clock: { now: () => new Date() },
    registry: new Registry(),
  } as unknown as Kernel;
}

/** dig's short answer lines, without comments. */
export async function dig(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('dig', ['@127.0.0.1', '-p', String(port), '+tries=1', '+time=3', ...args]);
  return stdout;
}

import { execFileSync } from 'node:child_process';
import { createPublicKey, createSign, createVerify } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  canonicalWireName,
  dnskeyRdata,
  dnskeyRecord,
  dsRecord,
  keyTag,
} from '../../src/areas/dns/dnssec.js';
import type { DnsService } from '../../src/areas/dns/service.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

let t: TestFjord;
let a: TestCustomer;
const Z = 'signed.example';
const dns = () => t.fjord.areas.get('dns')!.service as DnsService;

beforeAll(async () => {
  t = await TestFjord.create();
  a = await t.customer();
  await t.request('POST', '/v1/dns/zones', { key: a.pat, body: { domain: Z } });
});
afterAll(() => t.close());

const hasKey2ds = (() => {
  try {
    execFileSync('which', ['ldns-key2ds']);
    return true;
  } catch {
    return false;
  }
})();

/** What ldns computes for a DNSKEY: the reference for our DS. */
function ldnsDs(dnskey: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-ds-'));
  const file = join(dir, 'key');
  writeFileSync(file, `${dnskey}\n`);
  return execFileSync('ldns-key2ds', ['-n', '-2', file], { encoding: 'utf8' }).trim();
}

describe('DNSSEC arithmetic', () => {
  it('computes the RFC 4034 Appendix B key tag and the wire form of names', () => {
    expect(canonicalWireName('Example.COM.').toString('hex')).toBe('076578616d706c6503636f6d00');
    // RFC 6605 §6.1 example: the P-256 KSK of example.net has key tag 55648.
    const pub = Buffer.from(
      'GojIhhXUN/u4v54ZQqGSnyhWJwaubCvTmeexv7bR6edbkrSqQpF64cYbcB7wNcP+e+MAnLr+Wi9xMWyQLc8NAA==',
      'base64',
    );
    expect(keyTag(dnskeyRdata(pub, 257))).toBe(55648);
    // …and its SHA-256 DS digest (RFC 6605 §6.1).
    expect(dsRecord('example.net', pub)).toBe(
      'example.net. IN DS 55648 13 2 B4C8C1FE2E7477127B27115656AD6256F424625BF5C1E2770CE6D6E37DF61D17',
    );
  });
});

describe('DNSSEC activation', () => {
  it('makes one P-256 key and returns its DS, which ldns-key2ds agrees with', async () => {
    const r = await t.request('POST', `/v1/dns/zones/${Z}/dnssec/activate`, { key: a.pat });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({ enabled: true, ds_records: [expect.any(String)], algorithm: 'ECDSAP256SHA256' });
    const ds = r.body.ds_records[0] as string;
    expect(ds).toMatch(new RegExp(`^${Z}\\. IN DS \\d+ 13 2 [0-9A-F]{64}$`));
    const zone = await t.request('GET', `/v1/dns/zones/${Z}`, { key: a.pat });
    expect(zone.body.dnssec_enabled).toBe(true);

    const snap = (await dns().source.loadZone(Z))!;
    const key = snap.signingKey!;
    expect(key.algorithm).toBe(13);
    expect(key.flags).toBe(257);
    expect(key.publicKey).toHaveLength(64);
    expect(ds.split(' ')[3]).toBe(String(key.keyTag));
    if (hasKey2ds) {
      const reference = ldnsDs(dnskeyRecord(Z, key.publicKey)).split(/\s+/);
      // ldns: owner TTL class DS tag alg digest-type digest
      expect(reference.slice(-4).join(' ').toUpperCase()).toBe(ds.split(' ').slice(-4).join(' '));
    }
    // The private key signs, and the published public key verifies it.
    const signature = createSign('sha256')
      .update('probe')
      .sign({ key: key.privateKeyPkcs8, format: 'der', type: 'pkcs8' });
    const jwk = {
      kty: 'EC',
      crv: 'P-256',
      x: key.publicKey.subarray(0, 32).toString('base64url'),
      y: key.publicKey.subarray(32).toString('base64url'),
    };
    expect(
      createVerify('sha256')
        .update('probe')
        .verify(createPublicKey({ key: jwk, format: 'jwk' }), signature),
    ).toBe(true);
  });

  it('keeps the private key encrypted at rest', async () => {
    const row = await t.kernel.store.db.selectFrom('dns_keys').selectAll().executeTakeFirstOrThrow();
    expect(row.private_key_sealed).toMatch(/^v1\./);
    const snap = (await dns().source.loadZone(Z))!;
    expect(row.private_key_sealed).not.toContain(
      snap.signingKey!.privateKeyPkcs8.toString('base64').slice(0, 40),
    );
  });

  it('is idempotent, turns off with DELETE, and on again with the same DS', async () => {
    const first = (await t.request('POST', `/v1/dns/zones/${Z}/dnssec/activate`, { key: a.pat })).body;
    const again = (await t.request('POST', `/v1/dns/zones/${Z}/dnssec/activate`, { key: a.pat })).body;
    expect(again).toEqual(first);
    const s0 = (await dns().source.loadZone(Z))!.soa.serial;
    const off = await t.request('DELETE', `/v1/dns/zones/${Z}/dnssec`, { key: a.pat });
    expect(off.status).toBe(200);
    expect(off.body).toEqual({ success: true, message: expect.any(String) });
    const snap = (await dns().source.loadZone(Z))!;
    expect(snap.signingKey).toBeNull();
    expect(snap.soa.serial).toBeGreaterThan(s0);
    expect((await t.request('GET', `/v1/dns/zones/${Z}`, { key: a.pat })).body.dnssec_enabled).toBe(false);
    const on = await t.request('POST', `/v1/dns/zones/${Z}/dnssec/activate`, { key: a.pat });
    expect(on.body.ds_records).toEqual(first.ds_records);
    expect(
      (await t.request('GET', `/v1/dns/zones/nope.example/dnssec/activate`, { key: a.pat })).status,
    ).toBe(404);
    expect(
      (await t.request('POST', `/v1/dns/zones/nope.example/dnssec/activate`, { key: a.pat })).status,
    ).toBe(404);
  });

  it('gives every zone its own key', async () => {
    await t.request('POST', '/v1/dns/zones', { key: a.pat, body: { domain: 'other-signed.example' } });
    const r = await t.request('POST', '/v1/dns/zones/other-signed.example/dnssec/activate', { key: a.pat });
    const mine = (await t.request('POST', `/v1/dns/zones/${Z}/dnssec/activate`, { key: a.pat })).body
      .ds_records[0];
    expect(r.body.ds_records[0].split(' ').at(-1)).not.toBe(mine.split(' ').at(-1));
  });
});

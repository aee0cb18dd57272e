import { createPublicKey, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { exampleZone, signingKey } from '../../../../test/e2e/dns-fixtures.js';
import { splitName } from './names.js';
import { makeRr } from './rdata.js';
import { signedData } from './signer.js';
import { T } from './types.js';
import { Zone } from './zone-view.js';

const key = signingKey('signed.test');
const jwkOf = (raw: Buffer) => ({
  kty: 'EC',
  crv: 'P-256',
  x: raw.subarray(0, 32).toString('base64url'),
  y: raw.subarray(32).toString('base64url'),
});

describe('Signer', () => {
  const now = Date.UTC(2026, 10, 22, 6, 30);
  const zone = new Zone(exampleZone('signed.test', key.key), () => now);
  const many = zone.nodes.get('many.signed.test')!.rrsets.get(T.A)!;

  it('signs RRsets in canonical order with r‖s signatures that verify with the public key', () => {
    const rr = zone.signer!.rrsig(many);
    const rdata = rr.canonical;
    expect(rdata.readUInt16BE(0)).toBe(T.A);
    expect(rdata[2]).toBe(13);
    expect(rdata[3]).toBe(3); // labels of many.signed.test
    expect(rdata.readUInt32BE(4)).toBe(300);
    const expiration = rdata.readUInt32BE(8);
    const inception = rdata.readUInt32BE(12);
    expect(inception).toBe(Date.UTC(2026, 10, 22, 5) / 1000); // the hour before the hour
    expect(expiration - inception).toBe(3600 + 7 * 86400);
    expect(rdata.readUInt16BE(16)).toBe(key.key.keyTag);
    const signature = rdata.subarray(rdata.length - 64);
    const head = rdata.subarray(0, rdata.length - 64);
    // The RRs, shuffled: the signed data must not depend on their order.
    const shuffled = { ...many, rrs: [...many.rrs].reverse() };
    const ok = verify(
      'sha256',
      signedData(head, shuffled),
      { key: createPublicKey({ key: jwkOf(key.key.publicKey), format: 'jwk' }), dsaEncoding: 'ieee-p1363' },
      signature,
    );
    expect(ok).toBe(true);
  });

  it('caches the signature until it is due for renewal', () => {
    let t = now;
    const z = new Zone(exampleZone('signed.test', key.key), () => t);
    const set = z.nodes.get('web.signed.test')!.rrsets.get(T.A)!;
    const first = z.signer!.rrsig(set);
    t += 86400_000;
    expect(z.signer!.rrsig(set)).toBe(first);
    t += 3 * 86400_000;
    expect(z.signer!.rrsig(set)).not.toBe(first);
  });

  it('does not count a leading wildcard label', () => {
    const star = zone.nodes.get('*.wild.signed.test')!.rrsets.get(T.A)!;
    expect(zone.signer!.rrsig(star).canonical[3]).toBe(3);
  });

  it('removes duplicate RRs and lowercases owner names in the signed data', () => {
    const rr = makeRr([Buffer.from([192, 0, 2, 1])]);
    const data = signedData(Buffer.alloc(0), {
      labels: splitName('WWW.Signed.Test'),
      key: 'www.signed.test',
      type: T.A,
      ttl: 60,
      rrs: [rr, rr],
    });
    expect(data.toString('latin1')).toContain('\x03www\x06signed\x04test\x00');
    expect(data.length).toBe(17 + 10 + 4);
  });
});

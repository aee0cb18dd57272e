import { createHash, createPrivateKey, generateKeyPairSync } from 'node:crypto';

/** DNSSEC algorithm 13 (RFC 6605): ECDSA on P-256 with SHA-256. */
export const ALGORITHM = 13;
export const ALGORITHM_NAME = 'ECDSAP256SHA256';
/** One combined signing key per zone, with the SEP bit: it signs everything and its DS goes to the parent. */
export const KEY_FLAGS = 257;
/** DS digest type 2: SHA-256 (RFC 4509). */
export const DIGEST_SHA256 = 2;

export interface GeneratedKey {
  publicKey: Buffer;
  privateKeyPkcs8: Buffer;
}

export function generateZoneKey(): GeneratedKey {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  // RFC 6605 §4: the public key is X‖Y, 32 bytes each, without the 0x04 point prefix.
  const raw = Buffer.concat([Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
  return { publicKey: raw, privateKeyPkcs8: privateKey.export({ format: 'der', type: 'pkcs8' }) };
}

/** Checks that a stored private key is a P-256 key (a corrupt or foreign key must not be served). */
export function assertP256(pkcs8: Buffer): void {
  const key = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
  if (key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') throw new Error('zone key is not a P-256 key');
}

/** DNSKEY RDATA (RFC 4034 §2.1): flags, protocol 3, algorithm, public key. */
export function dnskeyRdata(publicKey: Buffer, flags = KEY_FLAGS): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt16BE(flags, 0);
  head.writeUInt8(3, 2);
  head.writeUInt8(ALGORITHM, 3);
  return Buffer.concat([head, publicKey]);
}

/** Key tag (RFC 4034 Appendix B): the ones'-complement-like sum over the DNSKEY RDATA. */
export function keyTag(rdata: Buffer): number {
  let ac = 0;
  for (let i = 0; i < rdata.length; i++) ac += i & 1 ? rdata[i]! : rdata[i]! << 8;
  ac += (ac >> 16) & 0xffff;
  return ac & 0xffff;
}

/** A name in canonical wire form (RFC 4034 §6.2): lowercase labels, length-prefixed, root last. */
export function canonicalWireName(name: string): Buffer {
  const labels = name.toLowerCase().replace(/\.$/, '').split('.').filter(Boolean);
  const parts: Buffer[] = [];
  for (const l of labels) {
    const b = Buffer.from(l, 'ascii');
    if (b.length > 63) throw new Error(`label too long: ${l}`);
    parts.push(Buffer.from([b.length]), b);
  }
  parts.push(Buffer.from([0]));
  return Buffer.concat(parts);
}

/** DS digest (RFC 4034 §5.1.4): SHA-256 over the owner's canonical wire name and the DNSKEY RDATA. */
export function dsDigest(apex: string, rdata: Buffer): Buffer {
  return createHash('sha256').update(canonicalWireName(apex)).update(rdata).digest();
}

/** The DS record to place at the registrar, in presentation form. */
export function dsRecord(apex: string, publicKey: Buffer): string {
  const rdata = dnskeyRdata(publicKey);
  const digest = dsDigest(apex, rdata).toString('hex').toUpperCase();
  return `${apex}. IN DS ${keyTag(rdata)} ${ALGORITHM} ${DIGEST_SHA256} ${digest}`;
}

/** The DNSKEY in presentation form (for `ldns-key2ds` and trust anchors). */
export function dnskeyRecord(apex: string, publicKey: Buffer): string {
  return `${apex}. IN DNSKEY ${KEY_FLAGS} 3 ${ALGORITHM} ${publicKey.toString('base64')}`;
}

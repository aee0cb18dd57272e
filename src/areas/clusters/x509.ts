import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign,
} from 'node:crypto';

/**
 * Just enough X.509 (RFC 5280) to issue what a kubeconfig carries: a self-signed cluster CA and
 * client certificates it signs, ECDSA P-256 with SHA-256. Node can parse certificates but not make
 * them, and kubeadm's own certificates are no more than this: a name, a validity, a key and the
 * usage extensions.
 */

const tlv = (tag: number, content: Buffer): Buffer => {
  const n = content.length;
  let len: Buffer;
  if (n < 0x80) len = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
    len = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), len, content]);
};
const seq = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));
const explicit = (n: number, inner: Buffer) => tlv(0xa0 + n, inner);
const octets = (b: Buffer) => tlv(0x04, b);
const bits = (b: Buffer, unused = 0) => tlv(0x03, Buffer.concat([Buffer.from([unused]), b]));
const bool = (v: boolean) => tlv(0x01, Buffer.from([v ? 0xff : 0]));
const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));

/** A positive INTEGER from big-endian bytes (a leading zero keeps it positive). */
function integer(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  const v = b.subarray(i);
  return tlv(0x02, (v[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), v]) : v);
}

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const out = [40 * parts[0]! + parts[1]!];
  for (const p of parts.slice(2)) {
    const enc = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) enc.unshift((v & 0x7f) | 0x80);
    out.push(...enc);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime through 2049, GeneralizedTime after, as RFC 5280 §4.1.2.5 requires. */
function time(ms: number): Buffer {
  const iso = new Date(ms).toISOString(); // 2026-11-26T10:58:23.000Z
  const digits = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  const year = Number(iso.slice(0, 4));
  return year < 2050 ? tlv(0x17, Buffer.from(digits.slice(2))) : tlv(0x18, Buffer.from(digits));
}

export interface Subject {
  commonName: string;
  organization?: string;
}
const name = (s: Subject) =>
  seq(
    ...(s.organization ? [set(seq(oid('2.5.4.10'), utf8(s.organization)))] : []),
    set(seq(oid('2.5.4.3'), utf8(s.commonName))),
  );

const ECDSA_SHA256 = seq(oid('1.2.840.10045.4.3.2'));
const extension = (id: string, critical: boolean, value: Buffer) =>
  seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));

/** SHA-1 of the subjectPublicKey bits: the key identifier of RFC 5280 §4.2.1.2 (method 1). */
function keyId(spkiDer: Buffer): Buffer {
  // SPKI = SEQUENCE { algorithm, BIT STRING }; for P-256 the point is the last 65 bytes.
  return createHash('sha1')
    .update(spkiDer.subarray(spkiDer.length - 65))
    .digest();
}

export interface IssuedCertificate {
  certPem: string;
  keyPem: string;
  serialHex: string;
  notAfter: number;
}

interface Issue {
  subject: Subject;
  notBefore: number;
  notAfter: number;
  ca: boolean;
  /** Signs with this issuer; absent: self-signed. */
  issuer?: { subject: Subject; key: KeyObject; spkiDer: Buffer };
}

function issue(p: Issue): IssuedCertificate {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f;
  const issuerName = name(p.issuer?.subject ?? p.subject);
  const issuerSpki = p.issuer?.spkiDer ?? spki;
  const extensions = [
    extension('2.5.29.19', true, p.ca ? seq(bool(true)) : seq()),
    // keyUsage: CA = digitalSignature, keyCertSign, cRLSign; client = digitalSignature.
    extension('2.5.29.15', true, p.ca ? bits(Buffer.from([0x86]), 1) : bits(Buffer.from([0x80]), 7)),
    ...(p.ca ? [] : [extension('2.5.29.37', false, seq(oid('1.3.6.1.5.5.7.3.2')))]),
    extension('2.5.29.14', false, octets(keyId(spki))),
    extension('2.5.29.35', false, seq(tlv(0x80, keyId(issuerSpki)))),
  ];
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))),
    integer(serial),
    ECDSA_SHA256,
    issuerName,
    seq(time(p.notBefore), time(p.notAfter)),
    name(p.subject),
    spki,
    explicit(3, seq(...extensions)),
  );
  const signature = sign('sha256', tbs, p.issuer?.key ?? privateKey);
  const der = seq(tbs, ECDSA_SHA256, bits(signature));
  const b64 = der.toString('base64').replace(/(.{64})/g, '$1\n');
  return {
    certPem: `-----BEGIN CERTIFICATE-----\n${b64.replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`,
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    serialHex: serial.toString('hex'),
    notAfter: p.notAfter,
  };
}

/** A self-signed CA (`kubernetes` as kubeadm names it), valid from `notBefore` for `years`. */
export function createCa(commonName: string, notBefore: number, years: number): IssuedCertificate {
  const notAfter = new Date(notBefore);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + years);
  return issue({ subject: { commonName }, notBefore, notAfter: notAfter.getTime(), ca: true });
}

/** A client certificate (CN = user, O = group, as the API server reads them) signed by the CA. */
export function issueClientCert(
  ca: { certPem: string; keyPem: string; subject: Subject },
  subject: Subject,
  notBefore: number,
  notAfter: number,
): IssuedCertificate {
  const key = createPrivateKey(ca.keyPem);
  const spkiDer = createPublicKey(key).export({ type: 'spki', format: 'der' });
  return issue({ subject, notBefore, notAfter, ca: false, issuer: { subject: ca.subject, key, spkiDer } });
}

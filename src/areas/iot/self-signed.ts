import { generateKeyPairSync, randomBytes, sign, X509Certificate } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';

/** A PEM certificate and its private key. */
export interface PemPair {
  cert: string;
  key: string;
}

const VALID_DAYS = 5 * 365;
const DAY_MS = 86_400_000;

/**
 * The MQTT over TLS listener's self-signed pair, kept in `<dir>/cert.pem` and `key.pem`: made once
 * and reused at every start, so devices that trust `cert.pem` keep trusting it. It is made again
 * only when it has expired or does not name one of `names` (then devices must be given the new
 * one; `regenerated` says so).
 */
export function selfSignedPair(dir: string, names: string[]): PemPair & { regenerated: boolean } {
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  let existed = false;
  try {
    const pair = { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
    existed = true;
    const x509 = new X509Certificate(pair.cert);
    // Certificates are checked against the clients' wall clock, never the emulator clock.
    const fresh = Date.parse(x509.validTo) - Date.now() > DAY_MS;
    const covers = names.every((n) => (isIP(n) ? x509.checkIP(n) : x509.checkHost(n)) !== undefined);
    if (fresh && covers) return { ...pair, regenerated: false };
  } catch {
    // Missing or unreadable: make a new pair below.
  }
  const pair = makeSelfSigned(names);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Written beside and renamed, so a process starting at the same time never reads half a file.
  const suffix = `.${process.pid}.tmp`;
  writeFileSync(keyFile + suffix, pair.key, { mode: 0o600 });
  chmodSync(keyFile + suffix, 0o600);
  writeFileSync(certFile + suffix, pair.cert);
  renameSync(keyFile + suffix, keyFile);
  renameSync(certFile + suffix, certFile);
  return { ...pair, regenerated: existed };
}

/** The names a self-signed certificate is made for: the bound host (or this machine's name when
 * bound to every address), the API's host, and localhost. */
export function certificateNames(host: string, apiHost: string): string[] {
  const any = host === '0.0.0.0' || host === '::';
  const names = ['localhost', '127.0.0.1', any ? hostname() : host, apiHost.replace(/^\[(.*)\]$/, '$1')];
  return [...new Set(names)];
}

/** A self-signed ECDSA P-256 certificate naming `names` (DNS names and IP addresses). */
export function makeSelfSigned(names: string[], now = new Date()): PemPair {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const ecdsaWithSha256 = seq(oid('1.2.840.10045.4.3.2'));
  const subject = seq(set(seq(oid('2.5.4.3'), utf8('Fjord MQTT broker (self-signed)'))));
  const serial = randomBytes(16);
  serial[0]! &= 0x7f;
  const altNames = names.map((n) => {
    const ip = isIP(n);
    if (ip === 4) return der(0x87, Buffer.from(n.split('.').map(Number)));
    if (ip === 6) return der(0x87, ipv6Bytes(n));
    return der(0x82, Buffer.from(n, 'ascii'));
  });
  const extensions = der(
    0xa3,
    seq(
      // basicConstraints CA:TRUE: clients are given this very certificate as the one to trust.
      seq(oid('2.5.29.19'), der(0x01, Buffer.from([0xff])), octets(seq(der(0x01, Buffer.from([0xff]))))),
      seq(oid('2.5.29.17'), octets(seq(...altNames))),
    ),
  );
  const tbs = seq(
    der(0xa0, int(Buffer.from([2]))),
    int(serial),
    ecdsaWithSha256,
    subject,
    seq(time(new Date(now.getTime() - DAY_MS)), time(new Date(now.getTime() + VALID_DAYS * DAY_MS))),
    subject,
    publicKey.export({ type: 'spki', format: 'der' }),
    extensions,
  );
  const signature = sign('sha256', tbs, privateKey);
  const cert = seq(tbs, ecdsaWithSha256, der(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const b64 = cert.toString('base64').replace(/.{1,64}/g, '$&\n');
  return {
    cert: `-----BEGIN CERTIFICATE-----\n${b64}-----END CERTIFICATE-----\n`,
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

// A few DER encoders, enough for one X.509 certificate.
function der(tag: number, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  const n = body.length;
  const length =
    n < 0x80
      ? [n]
      : n < 0x100
        ? [0x81, n]
        : n < 0x10000
          ? [0x82, n >> 8, n & 0xff]
          : [0x83, n >> 16, (n >> 8) & 0xff, n & 0xff];
  return Buffer.concat([Buffer.from([tag, ...length]), body]);
}
const seq = (...parts: Buffer[]) => der(0x30, ...parts);
const set = (...parts: Buffer[]) => der(0x31, ...parts);
const octets = (body: Buffer) => der(0x04, body);
const utf8 = (s: string) => der(0x0c, Buffer.from(s, 'utf8'));
const int = (bytes: Buffer) => der(0x02, bytes[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);

function oid(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split('.').map(Number);
  const bytes = [40 * first! + second!];
  for (const v of rest) {
    const chunk = [v & 0x7f];
    for (let x = v >> 7; x > 0; x >>= 7) chunk.unshift((x & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return der(0x06, Buffer.from(bytes));
}

/** UTCTime up to 2049, GeneralizedTime after (RFC 5280 §4.1.2.5). */
function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return d.getUTCFullYear() < 2050
    ? der(0x17, Buffer.from(`${iso.slice(2)}Z`))
    : der(0x18, Buffer.from(`${iso}Z`));
}

function ipv6Bytes(address: string): Buffer {
  const [head, tail] = address.split('::') as [string, string | undefined];
  const words = (s: string | undefined) => (s ? s.split(':').map((w) => Number.parseInt(w, 16)) : []);
  const h = words(head);
  const t = words(tail);
  const all = tail === undefined ? h : [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  const out = Buffer.alloc(16);
  for (const [i, w] of all.entries()) out.writeUInt16BE(w, i * 2);
  return out;
}

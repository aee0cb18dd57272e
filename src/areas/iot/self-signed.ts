import { X509Certificate } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ECDSA_P256, loadX509, newEcdsaKeys, privateKeyPem, randomSerialHex } from '../../kernel/x509.js';

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
export async function selfSignedPair(
  dir: string,
  names: string[],
): Promise<PemPair & { regenerated: boolean }> {
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
  const pair = await makeSelfSigned(names);
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
export async function makeSelfSigned(names: string[], now = new Date()): Promise<PemPair> {
  const x509 = await loadX509();
  const keys = await newEcdsaKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerialHex(),
    name: [{ CN: ['Fjord MQTT broker (self-signed)'] }],
    notBefore: new Date(now.getTime() - DAY_MS),
    notAfter: new Date(now.getTime() + VALID_DAYS * DAY_MS),
    signingAlgorithm: ECDSA_P256,
    keys,
    extensions: [
      // CA:TRUE: clients are given this very certificate as the one to trust.
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.SubjectAlternativeNameExtension(
        names.map((n) => (isIP(n) ? { type: 'ip', value: n } : { type: 'dns', value: n })),
      ),
    ],
  });
  return { cert: cert.toString('pem'), key: await privateKeyPem(keys.privateKey) };
}

import { randomBytes, webcrypto } from 'node:crypto';

/**
 * X.509 for the certificates Fjord makes itself (the apps' local CA, the MQTT listener's
 * self-signed pair, the clusters' CAs and kubeconfig clients): @peculiar/x509 does the DER, so no
 * area writes its own encoder. Loaded with the first certificate, not at every start.
 */
type X509 = typeof import('@peculiar/x509');
let x509Module: Promise<X509> | undefined;
export const loadX509 = (): Promise<X509> =>
  (x509Module ??= import('@peculiar/x509').then((x509) => {
    x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
    return x509;
  }));

export type KeyPair = webcrypto.CryptoKeyPair;
/** ECDSA P-256 with SHA-256: what browsers, kubectl, mosquitto and Go's TLS all accept. */
export const ECDSA_P256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

export const newEcdsaKeys = async (): Promise<KeyPair> =>
  (await webcrypto.subtle.generateKey(ECDSA_P256, true, ['sign', 'verify'])) as KeyPair;

/** A PEM private key (PKCS #8), as Node, OpenSSL and kubectl read it. */
export const privateKeyPem = async (key: webcrypto.CryptoKey): Promise<string> =>
  pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', key));

/** A signing key from its PEM (PKCS #8). */
export const importSigningKey = (keyPem: string): Promise<webcrypto.CryptoKey> =>
  webcrypto.subtle.importKey('pkcs8', pemBody(keyPem), ECDSA_P256, false, ['sign']);

export const pem = (label: string, der: ArrayBuffer): string =>
  `-----BEGIN ${label}-----\n${Buffer.from(der)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '')}\n-----END ${label}-----\n`;

const pemBody = (text: string) =>
  new Uint8Array(Buffer.from(text.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64'));

/** 128 random bits, the top one clear so the DER INTEGER stays positive and 16 bytes long. */
export const randomSerialHex = (): string => {
  const b = randomBytes(16);
  b[0] = b[0]! & 0x7f;
  return b.toString('hex');
};

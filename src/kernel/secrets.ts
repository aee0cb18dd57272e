import * as crypto from 'node:crypto';
import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * SHA-256 hex of a token: how keys are stored and looked up (every authenticated request).
 * Tokens carry ≥ 238 bits of entropy, so a plain SHA-256 is a safe lookup hash (as GitHub does for PATs).
 */
export const hashToken: (token: string) => string =
  // crypto.hash (Node 20.12+) is the one-shot form: a third of createHash's cost.
  typeof (crypto as { hash?: unknown }).hash === 'function'
    ? (token) =>
        (crypto as unknown as { hash(a: string, d: string, e: 'hex'): string }).hash('sha256', token, 'hex')
    : (token) => createHash('sha256').update(token).digest('hex');

export function constantTimeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

/**
 * Encrypts secrets that must be recovered later (S3 secret keys for SigV4, signing keys, webhook
 * secrets) with AES-256-GCM under the data key. Format: `v1.<iv>.<tag>.<ciphertext>` in base64url.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the data key must be 32 bytes');
  }
  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), body]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
  }
  open(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString(
      'utf8',
    );
  }
}

import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

/** A code of `length` decimal digits, uniformly drawn from the CSPRNG (leading zeros allowed). */
export function generateCode(length: number): string {
  let code = '';
  for (let i = 0; i < length; i++) code += String(randomInt(0, 10));
  return code;
}

export interface HashedCode {
  salt: string;
  hash: string;
}

const digest = (salt: string, code: string) =>
  createHash('sha256').update(Buffer.from(salt, 'hex')).update(code, 'utf8').digest();

/** SHA-256 over a fresh per-session salt and the code: equal codes of two sessions never share a hash. */
export function hashCode(code: string): HashedCode {
  const salt = randomBytes(16).toString('hex');
  return { salt, hash: digest(salt, code).toString('hex') };
}

/** Compares in constant time: both sides are 32-byte digests, whatever the candidate's length. */
export function codeMatches(candidate: string, stored: HashedCode): boolean {
  const expected = Buffer.from(stored.hash, 'hex');
  const actual = digest(stored.salt, candidate);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

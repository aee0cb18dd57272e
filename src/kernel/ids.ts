import { randomBytes, randomUUID } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BASE36 = '0123456789abcdefghijklmnopqrstuvwxyz';

export const newId = (): string => randomUUID();

/** Random string from `alphabet` with no modulo bias (rejection sampling). */
export function randomString(length: number, alphabet = BASE62): string {
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < limit) out += alphabet[byte % alphabet.length];
      if (out.length === length) break;
    }
  }
  return out;
}

/** Short lowercase id for technical names (database prefixes, hostnames): 8 chars, starts with a letter. */
export const newShortId = (): string => randomString(1, BASE36.slice(10)) + randomString(7, BASE36);

import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BASE36 = '0123456789abcdefghijklmnopqrstuvwxyz';

let lastMs = 0;
let counter = 0;

// Random bytes for ids come from a pool refilled 4 KiB at a time: a call into the system's random
// source per id cost more than the rest of making it (S3 PUTs make several ids each). The pool is
// the same cryptographic source, consumed once; Node's own randomUUID() caches likewise.
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolAt = 0;

/** `n` (≤ 4096) fresh random bytes from the pool; the caller owns them (they are never handed out again). */
export function pooledRandomBytes(n: number): Buffer {
  if (poolAt + n > pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolAt = 0;
  }
  const out = pool.subarray(poolAt, poolAt + n);
  poolAt += n;
  return out;
}

/**
 * UUIDv7 (RFC 9562): a millisecond timestamp, a 12-bit counter for ids made in the same
 * millisecond, then random bits. Ids therefore sort in creation order, which gives lists a
 * stable, meaningful tiebreak and keeps B-tree inserts at the right-hand edge.
 */
export function newId(): string {
  let ms = Date.now();
  if (ms > lastMs) {
    lastMs = ms;
    counter = 0;
  } else if (++counter > 0xfff) {
    lastMs += 1;
    counter = 0;
  }
  ms = lastMs;
  const b = pooledRandomBytes(16);
  b.writeUIntBE(ms, 0, 6);
  b[6] = 0x70 | (counter >> 8);
  b[7] = counter & 0xff;
  b[8] = 0x80 | (b[8]! & 0x3f);
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

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

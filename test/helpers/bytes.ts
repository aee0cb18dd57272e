import { createHash } from 'node:crypto';
import { expect } from 'vitest';

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/**
 * Asserts two byte strings are equal with one memcmp. `toEqual` on a Buffer walks it element by
 * element and, when it fails, prints every byte: an 8 MiB body cost 80 s (mostly garbage
 * collection). On a mismatch this names the lengths, the first differing offset and both hashes.
 */
export function expectSameBytes(actual: Uint8Array, expected: Uint8Array, what = 'bytes'): void {
  const a = Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength);
  const b = Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength);
  if (a.equals(b)) return;
  let at = 0;
  while (at < a.length && at < b.length && a[at] === b[at]) at++;
  expect.fail(
    `${what} differ: ${a.length} bytes, expected ${b.length}; first difference at offset ${at}; ` +
      `sha256 ${sha256(a)}, expected ${sha256(b)}`,
  );
}

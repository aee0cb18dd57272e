import { expect } from 'vitest';

/** Above this, a deep comparison of bytes is refused (see expectSameBytes). */
export const LARGE_BINARY = 64 * 1024;

/**
 * Every test file's setup: `toEqual`/`toStrictEqual` between byte arrays of more than 64 KiB
 * fails at once, naming the helper to use instead. The deep comparison walks every byte and a
 * failure prints them all; one 8 MiB `toEqual` once cost 80 s of a run.
 */
expect.addEqualityTesters([
  function refuseLargeBinaries(a: unknown, b: unknown) {
    const big = (v: unknown) => ArrayBuffer.isView(v) && v.byteLength > LARGE_BINARY;
    if (big(a) || big(b))
      throw new Error(
        `deep comparison of a byte array over ${LARGE_BINARY} bytes: use expectSameBytes() from test/helpers/bytes.ts`,
      );
    return undefined;
  },
]);

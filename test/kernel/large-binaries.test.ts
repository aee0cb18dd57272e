import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectSameBytes } from '../helpers/bytes.js';
import { LARGE_BINARY } from '../setup/large-binaries.js';

// The suite's setup refuses deep comparisons of large byte arrays; expectSameBytes replaces them.
describe('large binaries in assertions', () => {
  const big = randomBytes(LARGE_BINARY + 1);

  it('refuses toEqual on a byte array over the threshold, alone or nested', () => {
    expect(() => expect(big).toEqual(Buffer.from(big))).toThrow(/expectSameBytes/);
    expect(() => expect({ body: big }).toStrictEqual({ body: Buffer.from(big) })).toThrow(/expectSameBytes/);
  });

  it('still deep-compares small byte arrays', () => {
    expect(Buffer.from('abc')).toEqual(Buffer.from('abc'));
    expect(() => expect(Buffer.from('abc')).toEqual(Buffer.from('abd'))).toThrow();
  });

  it('expectSameBytes passes on equal bytes and names the first difference', () => {
    expectSameBytes(new Uint8Array(big), Buffer.from(big));
    const other = Buffer.from(big);
    other[1000] = (other[1000]! + 1) % 256;
    expect(() => expectSameBytes(other, big, 'body')).toThrow(
      /body differ: .* first difference at offset 1000/,
    );
    expect(() => expectSameBytes(big.subarray(0, 10), big)).toThrow(/10 bytes, expected 65537/);
  });
});

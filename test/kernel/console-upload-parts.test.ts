import { describe, expect, it } from 'vitest';
import {
  MAX_OBJECT_BYTES,
  MAX_PART_BYTES,
  MAX_PARTS,
  MIN_PART_BYTES,
  needsMultipart,
  partSize,
  partsOf,
  SINGLE_PUT_LIMIT,
} from '../../console/src/pages/upload-parts.js';

/** The object browser's choice of part size for a multipart upload, against S3's limits. */
const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

describe('the console’s multipart part size', () => {
  it('sends a file of up to 5 GiB in one PUT, and a larger one in parts', () => {
    expect(needsMultipart(SINGLE_PUT_LIMIT)).toBe(false);
    expect(needsMultipart(SINGLE_PUT_LIMIT + 1)).toBe(true);
  });

  it('keeps every size from just over 5 GiB to 5 TiB within 10,000 parts of 5 MiB to 5 GiB', () => {
    const sizes = [
      SINGLE_PUT_LIMIT + 1,
      6 * GiB,
      100 * GiB,
      156.25 * GiB,
      157 * GiB,
      1024 * GiB,
      MAX_OBJECT_BYTES,
    ];
    for (const size of sizes) {
      const part = partSize(size);
      expect(part % MiB, `${size}`).toBe(0);
      expect(part).toBeGreaterThanOrEqual(MIN_PART_BYTES);
      expect(part).toBeLessThanOrEqual(MAX_PART_BYTES);
      expect(Math.ceil(size / part), `${size}`).toBeLessThanOrEqual(MAX_PARTS);
    }
  });

  it('prefers 16 MiB parts, growing them only as far as 10,000 parts need', () => {
    expect(partSize(6 * GiB)).toBe(16 * MiB); // 384 parts
    expect(partSize(156.25 * GiB)).toBe(16 * MiB); // exactly 10,000 parts
    expect(partSize(156.25 * GiB + 1)).toBe(17 * MiB);
    expect(partSize(MAX_OBJECT_BYTES)).toBe(525 * MiB); // 5 TiB: 9,987 parts
  });

  it('refuses a file larger than an object may be', () => {
    expect(() => partSize(MAX_OBJECT_BYTES + 1)).toThrow(RangeError);
  });

  it('cuts a file into consecutive ranges, the last one short', () => {
    const size = 6 * GiB + 5;
    const parts = partsOf(size);
    expect(parts).toHaveLength(385);
    expect(parts[0]).toEqual({ number: 1, start: 0, end: 16 * MiB });
    expect(parts.at(-1)).toEqual({ number: 385, start: 384 * 16 * MiB, end: size });
    for (let i = 1; i < parts.length; i++) expect(parts[i]!.start).toBe(parts[i - 1]!.end);
  });
});

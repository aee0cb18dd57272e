// How the object browser cuts a large file into the parts of a multipart upload. Pure: the unit
// test (test/kernel/console-upload-parts.test.ts) imports it without a browser.

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

/** The largest object one PUT may carry (S3's PutObject limit, as Fjord's object route). */
export const SINGLE_PUT_LIMIT = 5 * GiB;
/** S3's rules for parts: at least 5 MiB (all but the last), at most 5 GiB, at most 10,000 of them. */
export const MIN_PART_BYTES = 5 * MiB;
export const MAX_PART_BYTES = 5 * GiB;
export const MAX_PARTS = 10_000;
/** The largest object S3 stores (and so the largest file the page offers to upload). */
export const MAX_OBJECT_BYTES = 5 * 1024 * GiB;
/**
 * Parts are at least this big: few enough requests for a fast line, small enough that the
 * progress bar moves and a failed part costs little to send again.
 */
const PREFERRED_PART_BYTES = 16 * MiB;

/** Whether a file of this size goes up in parts rather than in one PUT. */
export const needsMultipart = (size: number): boolean => size > SINGLE_PUT_LIMIT;

/**
 * The part size for a file: 16 MiB, or the smallest whole number of MiB that keeps the file within
 * 10,000 parts. Throws a RangeError for a file larger than an object may be.
 */
export function partSize(size: number): number {
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`not a file size: ${size}`);
  if (size > MAX_OBJECT_BYTES)
    throw new RangeError('The file is larger than 5 TiB, the most an object may hold.');
  const fitting = Math.ceil(size / MAX_PARTS / MiB) * MiB;
  return Math.min(MAX_PART_BYTES, Math.max(PREFERRED_PART_BYTES, fitting));
}

/** The byte ranges of a file's parts, numbered from 1 as S3 numbers them. */
export function partsOf(size: number): { number: number; start: number; end: number }[] {
  const each = partSize(size);
  const parts = [];
  for (let start = 0, number = 1; start < size || number === 1; start += each, number++)
    parts.push({ number, start, end: Math.min(size, start + each) });
  return parts;
}

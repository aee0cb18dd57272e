import { CHECKSUM_ALGORITHMS, type ChecksumAlgorithm, createChecksum } from './checksums.js';
import { s3Errors } from './errors.js';

/**
 * A multipart object's checksum, made from its parts' checksums without reading a byte again, in
 * either of the two forms S3 offers:
 *
 * - `COMPOSITE` (any algorithm but CRC64NVME): the checksum of the parts' binary checksums laid
 *   end to end, then `-N` for the number of parts. It checks the parts, not the object as a whole.
 * - `FULL_OBJECT` (the CRCs only): the CRC of the whole object, the value a single PUT of the same
 *   bytes would have had, from each part's CRC and length.
 */
export type ChecksumType = 'COMPOSITE' | 'FULL_OBJECT';

export const isCrc = (algorithm: ChecksumAlgorithm): boolean =>
  algorithm === 'CRC32' || algorithm === 'CRC32C' || algorithm === 'CRC64NVME';

/**
 * The reflected polynomials of the CRCs S3 uses. All three start from all ones and end with an
 * xor of all ones; for such CRCs the conditioning cancels out when two CRCs are combined, so the
 * combination works on the CRC values as S3 sends them (zlib's `crc32_combine`, generalised).
 */
const CRC_SHAPE: Record<'CRC32' | 'CRC32C' | 'CRC64NVME', { width: number; poly: bigint }> = {
  CRC32: { width: 32, poly: 0xedb88320n },
  CRC32C: { width: 32, poly: 0x82f63b78n },
  CRC64NVME: { width: 64, poly: 0x9a6c9329ac4bc9b5n },
};

/**
 * a(x)·b(x) mod p(x), in the reflected bit order (the top bit is x⁰). BigInt is fine here: it runs
 * a few dozen times per part, never per byte.
 */
function multiplyModP(a: bigint, b: bigint, width: number, poly: bigint): bigint {
  let product = 0n;
  for (let bit = BigInt(width - 1); bit >= 0n; bit--) {
    if ((a >> bit) & 1n) product ^= b;
    b = b & 1n ? (b >> 1n) ^ poly : b >> 1n;
  }
  return product;
}

/** x^(8·bytes) mod p(x): what shifting a CRC past `bytes` zero bytes multiplies it by. */
function shiftPast(bytes: number, width: number, poly: bigint): bigint {
  let result = 1n << BigInt(width - 1); // x⁰
  let square = 1n << BigInt(width - 9); // x⁸, one byte
  for (let n = bytes; n > 0; n = Math.floor(n / 2)) {
    if (n % 2 === 1) result = multiplyModP(result, square, width, poly);
    square = multiplyModP(square, square, width, poly);
  }
  return result;
}

/**
 * CRC(A‖B) from CRC(A), CRC(B) and B's length in bytes. `shifts` keeps x^(8·length) by length:
 * all parts but the last have one size, and working it out takes ~0.1 ms (10,000 parts would
 * otherwise hold the event loop for seconds).
 */
export function combineCrc(
  algorithm: 'CRC32' | 'CRC32C' | 'CRC64NVME',
  first: bigint,
  second: bigint,
  secondLength: number,
  shifts = new Map<number, bigint>(),
): bigint {
  const { width, poly } = CRC_SHAPE[algorithm];
  let shift = shifts.get(secondLength);
  if (shift === undefined) {
    shift = shiftPast(secondLength, width, poly);
    shifts.set(secondLength, shift);
  }
  return multiplyModP(shift, first, width, poly) ^ second;
}

const toBigInt = (b64: string): bigint => BigInt(`0x${Buffer.from(b64, 'base64').toString('hex') || '0'}`);
const toBase64 = (value: bigint, width: number): string =>
  Buffer.from(value.toString(16).padStart(width / 4, '0'), 'hex').toString('base64');

/** The object's checksum (base64, with `-N` when composite) from its parts', in part order. */
export function joinPartChecksums(
  algorithm: ChecksumAlgorithm,
  type: ChecksumType,
  parts: readonly { value: string; size: number }[],
): string {
  if (type === 'COMPOSITE') {
    const c = createChecksum(algorithm);
    for (const p of parts) c.update(Buffer.from(p.value, 'base64'));
    return `${c.digest()}-${parts.length}`;
  }
  if (!isCrc(algorithm)) throw new Error(`${algorithm} has no full-object form`);
  const crc = algorithm as 'CRC32' | 'CRC32C' | 'CRC64NVME';
  let value = toBigInt(createChecksum(crc).digest()); // the CRC of nothing
  const shifts = new Map<number, bigint>();
  for (const p of parts) value = combineCrc(crc, value, toBigInt(p.value), p.size, shifts);
  return toBase64(value, CRC_SHAPE[crc].width);
}

/**
 * The checksum type an upload gets: what the client asked for, else S3's default for the
 * algorithm (CRC64NVME exists only in full-object form, the others default to composite).
 * Returns an error message for a combination S3 refuses.
 */
export function uploadChecksumType(
  algorithm: ChecksumAlgorithm,
  asked: string | undefined,
): ChecksumType | { refused: string } {
  const type = asked === undefined ? (algorithm === 'CRC64NVME' ? 'FULL_OBJECT' : 'COMPOSITE') : asked;
  if (type !== 'COMPOSITE' && type !== 'FULL_OBJECT')
    return { refused: 'Value for x-amz-checksum-type header is invalid.' };
  if (type === 'FULL_OBJECT' && !isCrc(algorithm))
    return {
      refused: `The FULL_OBJECT checksum type cannot be used with the ${algorithm.toLowerCase()} checksum algorithm.`,
    };
  if (type === 'COMPOSITE' && algorithm === 'CRC64NVME')
    return {
      refused: 'The COMPOSITE checksum type cannot be used with the crc64nvme checksum algorithm.',
    };
  return type;
}

/** An object's checksum as its row keeps it (JSON): what GET, HEAD and GetObjectAttributes show. */
export interface ObjectChecksum {
  algorithm: ChecksumAlgorithm;
  /** Base64; a composite one ends in `-N`. */
  value: string;
  /** Absent on a single PUT's, which is FULL_OBJECT. */
  type?: ChecksumType;
  /** A multipart object's part checksums in part order, for `partNumber` reads and ObjectParts. */
  parts?: string[];
}

export const parseObjectChecksum = (text: string | null): ObjectChecksum | null =>
  text ? (JSON.parse(text) as ObjectChecksum) : null;

/** The checksum headers of a GET or HEAD: the object's, or with `partNumber` the part's. */
export function checksumHeaders(text: string | null, partNumber: number | null): Record<string, string> {
  const c = parseObjectChecksum(text);
  if (!c) return {};
  const value = partNumber === null ? c.value : c.parts ? c.parts[partNumber - 1] : c.value;
  if (value === undefined) return {};
  return {
    [`x-amz-checksum-${c.algorithm.toLowerCase()}`]: value,
    'x-amz-checksum-type': c.type ?? 'FULL_OBJECT',
  };
}

const mismatch = (expected: ChecksumAlgorithm, actual: string) =>
  s3Errors.invalidRequest(
    `Checksum Type mismatch occurred, expected checksum Type: ${expected.toLowerCase()}, actual checksum Type: ${actual.toLowerCase()}`,
  );

/**
 * Refuses a part sent with a checksum of another algorithm than its upload's, or, when `required`
 * (a COMPOSITE upload: its checksum is made of what the client vouched for), sent without one.
 */
export function checkPartAlgorithm(
  expected: ChecksumAlgorithm,
  actual: ChecksumAlgorithm | null,
  required: boolean,
): void {
  if (actual === null ? required : actual !== expected) throw mismatch(expected, actual ?? 'null');
}

/** A part of a Complete: its stored size and checksum, and the checksum the client listed for it. */
export interface PartToJoin {
  partNumber: number;
  size: number;
  /** The part's checksum as stored (JSON `{ algorithm, value }`), null if it was sent without one. */
  stored: string | null;
  /** The `Checksum<ALGORITHM>` values listed for it in the Complete request. */
  listed: Readonly<Record<string, string>>;
}

/**
 * The checksum a multipart upload gives its object, checked the way S3 checks it, in this order:
 * - a part checksum listed in the request must be the part's (InvalidPart);
 * - the parts are numbered 1, 2, 3… with none left out (InvalidPartOrder, AWS's rule for parts
 *   with checksums);
 * - a checksum of the whole object sent in an `x-amz-checksum-*` header must be the object's
 *   (BadDigest);
 * - for COMPOSITE, every part's checksum is listed (InvalidRequest).
 * Null for an upload started without a checksum algorithm, which may list part checksums (each
 * still checked) but not claim a checksum or checksum type for the object.
 */
export function completedChecksum(
  upload: { algorithm: ChecksumAlgorithm; type: ChecksumType } | null,
  parts: readonly PartToJoin[],
  asserted: CompleteAssertions,
): ObjectChecksum | null {
  for (const p of parts) {
    const stored = p.stored ? (JSON.parse(p.stored) as { algorithm: string; value: string }) : null;
    for (const [algorithm, value] of Object.entries(p.listed))
      if (stored?.algorithm === algorithm ? stored.value !== value : upload?.algorithm === algorithm)
        throw s3Errors.invalidPart();
  }
  const claimed = asserted.checksum;
  if (!upload) {
    if (claimed || asserted.type !== undefined)
      throw s3Errors.invalidRequest(
        'The upload was created without a checksum algorithm, so its object has no checksum to compare.',
      );
    return null;
  }
  if (claimed && claimed.algorithm !== upload.algorithm) throw mismatch(upload.algorithm, claimed.algorithm);
  if (asserted.type !== undefined && asserted.type !== upload.type)
    throw s3Errors.invalidRequest(
      `The upload was created using the ${upload.type} checksum mode. The complete request must use the same checksum mode.`,
    );
  if (parts.some((p, i) => p.partNumber !== i + 1)) throw s3Errors.invalidPartOrder();
  const values = parts.map((p) => {
    const stored = p.stored ? (JSON.parse(p.stored) as { algorithm: string; value: string }) : null;
    if (stored?.algorithm !== upload.algorithm) throw s3Errors.invalidPart();
    return { value: stored.value, size: p.size };
  });
  const value = joinPartChecksums(upload.algorithm, upload.type, values);
  if (claimed && claimed.value !== value)
    throw s3Errors.checksumMismatch(`x-amz-checksum-${upload.algorithm.toLowerCase()}`);
  // A composite checksum is made of the part checksums the client lists; a full-object one is
  // the object's own, so listing them is optional (each listed one is still checked above).
  const missing = upload.type === 'COMPOSITE' && parts.find((p) => p.listed[upload.algorithm] === undefined);
  if (missing)
    throw s3Errors.invalidRequest(
      `The upload was created using a ${upload.algorithm.toLowerCase()} checksum. The complete request must include the checksum for each part. It was missing for part ${missing.partNumber} in the request.`,
    );
  return { algorithm: upload.algorithm, value, type: upload.type, parts: values.map((v) => v.value) };
}

/** What a Complete request says of the object it makes, in its headers. */
export interface CompleteAssertions {
  /** `x-amz-checksum-<algorithm>`: the object's checksum (with `-N` when composite). */
  checksum?: { algorithm: ChecksumAlgorithm; value: string };
  /** `x-amz-checksum-type`: must be the upload's. */
  type?: string;
  /** `x-amz-mp-object-size`: the object's size in bytes. */
  size?: number;
}

/** The checksum an upload row was started with, null when none. */
export function checksumOfUpload(upload: {
  checksum_algorithm: string | null;
  checksum_type: string | null;
}): { algorithm: ChecksumAlgorithm; type: ChecksumType } | null {
  const algorithm = upload.checksum_algorithm as ChecksumAlgorithm | null;
  // Uploads started before algorithms were checked may name one S3 does not offer: none, then.
  if (!algorithm || !CHECKSUM_ALGORITHMS.includes(algorithm)) return null;
  // Uploads started before checksum types were kept are S3's default for their algorithm.
  const type =
    (upload.checksum_type as ChecksumType | null) ??
    (algorithm === 'CRC64NVME' ? 'FULL_OBJECT' : 'COMPOSITE');
  return { algorithm, type };
}

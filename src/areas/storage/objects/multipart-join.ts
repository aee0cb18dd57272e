import { createHash } from 'node:crypto';
import { checksumReady } from '../s3/checksums.js';
import { s3Errors } from '../s3/errors.js';
import { type CompleteAssertions, checksumOfUpload, completedChecksum } from '../s3/multipart-checksums.js';
import type { ListedPart } from './object-types.js';
import type { BlobPart, PartRow, UploadRow } from './tables.js';

/** Every part but the last must be at least this big (S3's rule). */
export const MIN_PART_SIZE = 5 * 1024 * 1024;

/** What a Complete makes of an upload's parts: the object's ETag, size, blobs and checksum. */
export interface JoinedParts {
  chosen: PartRow[];
  etag: string;
  size: number;
  /** The object's blob parts (JSON `BlobPart[]`): the parts' own blobs, no byte copied. */
  blob: string;
  /** The object's checksum as stored (JSON), null when the upload has none. */
  checksum: string | null;
}

/**
 * Checks the parts a Complete lists against the stored ones, as S3 does (order, ETags, minimum
 * size, the object's size limit and `x-amz-mp-object-size`), and joins them: the ETag is the MD5
 * of the parts' binary MD5s, then `-N`; the checksum is joined from the parts' checksums
 * (multipart-checksums.ts) and checked against what the client asserted.
 */
export async function joinParts(
  upload: UploadRow,
  stored: PartRow[],
  listed: ListedPart[],
  asserted: CompleteAssertions,
  maxBytes: number,
): Promise<JoinedParts> {
  if (listed.length === 0) throw s3Errors.malformedXml();
  for (let i = 1; i < listed.length; i++) {
    if (listed[i]!.partNumber <= listed[i - 1]!.partNumber) throw s3Errors.invalidPartOrder();
  }
  const byNumber = new Map<number, PartRow>(stored.map((p) => [p.part_number, p]));
  const chosen: PartRow[] = [];
  for (const [i, l] of listed.entries()) {
    const part = byNumber.get(l.partNumber);
    if (!part || part.etag !== l.etag.replace(/"/g, '').toLowerCase()) throw s3Errors.invalidPart();
    if (i < listed.length - 1 && part.size < MIN_PART_SIZE) throw s3Errors.entityTooSmall();
    chosen.push(part);
  }
  const md5 = createHash('md5');
  for (const p of chosen) md5.update(Buffer.from(p.etag, 'hex'));
  const etag = `${md5.digest('hex')}-${chosen.length}`;
  const size = chosen.reduce((n, p) => n + Number(p.size), 0);
  if (size > maxBytes) throw s3Errors.entityTooLarge();
  if (asserted.size !== undefined && asserted.size !== size)
    throw s3Errors.invalidRequest(
      `The x-amz-mp-object-size header (${asserted.size}) is not the size of the completed object (${size}).`,
    );
  const uploadChecksum = checksumOfUpload(upload);
  if (uploadChecksum) await checksumReady(uploadChecksum.algorithm);
  const checksum = completedChecksum(
    uploadChecksum,
    chosen.map((p, i) => ({
      partNumber: p.part_number,
      size: Number(p.size),
      stored: p.checksum,
      listed: listed[i]!.checksums,
    })),
    asserted,
  );
  return {
    chosen,
    etag,
    size,
    blob: JSON.stringify(chosen.flatMap((p) => JSON.parse(p.blob) as BlobPart[])),
    checksum: checksum ? JSON.stringify(checksum) : null,
  };
}

/** The parts a Complete listed, as one comparable string (a retried Complete must list the same). */
export const partsList = (listed: ListedPart[]) =>
  listed.map((p) => `${p.partNumber}:${p.etag.replace(/"/g, '').toLowerCase()}`).join(',');

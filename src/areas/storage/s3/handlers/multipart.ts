import { MAX_PARTS } from '../../objects/object-store.js';
import type { ListedPart } from '../../objects/object-types.js';
import { parseSse } from '../../objects/sse.js';
import { reportedClass, storageClassOf } from '../../objects/storage-class.js';
import type { UploadRow } from '../../objects/tables.js';
import {
  algorithmOfHeader,
  CHECKSUM_ALGORITHMS,
  type ChecksumAlgorithm,
  requestedAlgorithm,
} from '../checksums.js';
import type { S3Call } from '../context.js';
import {
  type CustomerKey,
  customerKeyOf,
  keyToOpen,
  kmsDataKey,
  sealingFor,
  sseHeaders,
} from '../encryption.js';
import { S3Error, s3Errors } from '../errors.js';
import {
  type ChecksumType,
  type CompleteAssertions,
  checksumOfUpload,
  parseObjectChecksum,
  uploadChecksumType,
} from '../multipart-checksums.js';
import { lockForWrite } from '../object-lock.js';
import { asText, el, parseXml } from '../xml.js';
import { aclForWrite } from './access.js';
import { initiatorXml, maxKeysOf, objectOwnerXml } from './listing.js';
import { attributesFromHeaders, parseRange, quoteEtag } from './object-headers.js';
import { checkKey, refOf } from './object-lookup.js';
import { bodyFromStream, conditionalWrite, copySource } from './objects.js';

export const MAX_PART_BYTES = 5 * 1024 * 1024 * 1024;

export async function createMultipartUpload(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const key = call.key!;
  checkKey(key);
  const attrs = attributesFromHeaders(call.req.headers);
  const checksum = uploadChecksumOf(call);
  // One sealing for the whole upload: every part is sealed with its data key (or the customer's).
  const { sealing, customer } = await sealingFor(call, bucket);
  const lock = lockForWrite(call, bucket);
  const acl = await aclForWrite(call, bucket, key);
  // The completed object gets the upload's class.
  const storageClass = storageClassOf(call.header('x-amz-storage-class'));
  const initiator = call.principal.kind === 'key' ? call.principal.key.customerId : null;
  const uploadId = await call.env.objects.createUpload(bucket.id, key, attrs, checksum, {
    sealing,
    lock,
    acl,
    storageClass,
    initiator: initiator === bucket.customerId ? null : initiator,
  });
  const headers: Record<string, string> = sseHeaders(sealing, customer);
  if (checksum) {
    headers['x-amz-checksum-algorithm'] = checksum.algorithm;
    headers['x-amz-checksum-type'] = checksum.type;
  }
  call.xml(
    200,
    'InitiateMultipartUploadResult',
    el('Bucket', bucket.name) + el('Key', key) + el('UploadId', uploadId),
    headers,
  );
}

/**
 * The checksum an upload's parts carry and how they join into the object's: `x-amz-checksum-algorithm`
 * and `x-amz-checksum-type`, checked as S3 checks them. Null when the upload asks for none.
 */
function uploadChecksumOf(call: S3Call): { algorithm: ChecksumAlgorithm; type: ChecksumType } | null {
  const asked = call.header('x-amz-checksum-algorithm');
  const typeAsked = call.header('x-amz-checksum-type')?.toUpperCase();
  if (asked === undefined) {
    if (typeAsked !== undefined)
      throw s3Errors.invalidRequest(
        'The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.',
      );
    return null;
  }
  const algorithm = requestedAlgorithm(asked);
  const type = uploadChecksumType(algorithm, typeAsked);
  if (typeof type !== 'string') throw s3Errors.invalidRequest(type.refused);
  return { algorithm, type };
}

function partNumberOf(call: S3Call): number {
  const raw = call.query.get('partNumber') ?? '';
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > MAX_PARTS) {
    throw s3Errors.invalidArgument(
      'Part number must be an integer between 1 and 10000, inclusive',
      'partNumber',
      raw,
    );
  }
  return n;
}

export async function uploadPart(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const partNumber = partNumberOf(call);
  const uploadId = call.query.get('uploadId')!;
  const objects = call.env.objects;
  const upload = await objects.requireUpload(bucket.id, call.key!, uploadId);
  const customer = partKey(call, upload);
  const record = parseSse(upload.sse);
  // An SSE-KMS upload's parts are sealed with its data key, unwrapped for each part.
  const supplied = record?.alg === 'aws:kms' ? await kmsDataKey(call, record) : (customer?.key ?? null);
  const sealKey = partSealKey(call, upload, supplied);
  if (call.header('x-amz-copy-source')) return uploadPartCopy(call, upload, partNumber, sealKey, customer);
  // A part of an upload with a checksum algorithm is checksummed with it: sent by the client for a
  // COMPOSITE upload, as S3 requires, else computed when not sent.
  const checksum = checksumOfUpload(upload);
  const body = call.bodyReader(MAX_PART_BYTES, {
    algorithm: checksum?.algorithm ?? null,
    mustBeSent: checksum?.type === 'COMPOSITE',
  });
  // A part does not count as stored until the upload completes, but one that cannot fit is refused now.
  await objects.checkQuota(bucket.customerId, body.expectedSize);
  const { parts, result } = await objects.writeBlob(body, sealKey);
  await objects.putPart(uploadId, partNumber, parts, result);
  const headers: Record<string, string> = {
    etag: quoteEtag(result.md5),
    ...sseHeaders(upload.sse, customer),
  };
  if (result.checksum)
    headers[`x-amz-checksum-${result.checksum.algorithm.toLowerCase()}`] = result.checksum.value;
  call.send(200, headers);
}

/**
 * The key a part is sealed with. A part sent with another SSE-C key than the upload's is a
 * request error (400, AWS's wording), not the 403 a read with a wrong key gets.
 */
function partSealKey(call: S3Call, upload: UploadRow, supplied: Buffer | null): Buffer | null {
  try {
    return call.env.objects.openingKey(upload.sse, supplied);
  } catch (err) {
    if (err instanceof S3Error && err.code === 'AccessDenied')
      throw s3Errors.invalidRequest(
        'The provided encryption parameters did not match the ones used originally.',
      );
    throw err;
  }
}

/** SSE-C uploads need the initiating key on every part; other uploads take no key. */
function partKey(call: S3Call, upload: UploadRow): CustomerKey | null {
  const customer = customerKeyOf(call);
  const sealedForCustomer = parseSse(upload.sse)?.alg === 'SSE-C';
  if (sealedForCustomer && !customer)
    throw s3Errors.invalidRequest(
      'The multipart upload initiate requested encryption. Subsequent part requests must include the appropriate encryption parameters.',
    );
  if (!sealedForCustomer && customer)
    throw s3Errors.invalidRequest(
      'The multipart upload initiate did not request encryption with a customer-provided key. Subsequent part requests must not include encryption parameters.',
    );
  return customer;
}

async function uploadPartCopy(
  call: S3Call,
  upload: UploadRow,
  partNumber: number,
  sealKey: Buffer | null,
  customer: CustomerKey | null,
): Promise<void> {
  const uploadId = upload.upload_id;
  const { row } = await copySource(call);
  const source = await keyToOpen(call, row.sse, 'copy-source-');
  const size = Number(row.size);
  const rangeHeader = call.header('x-amz-copy-source-range');
  let start = 0;
  let end = size - 1;
  if (rangeHeader) {
    const m = /^bytes=(\d+)-(\d+)$/.exec(rangeHeader);
    // Well formed but past the source's end: InvalidRange, as S3 answers it.
    if (m && Number(m[2]) >= Number(m[1]) && Number(m[2]) >= size) throw s3Errors.invalidRange(size);
    if (!m || Number(m[2]) < Number(m[1])) {
      throw s3Errors.invalidArgument(
        'The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy',
        'x-amz-copy-source-range',
        rangeHeader,
      );
    }
    ({ start, end } = parseRange(`bytes=${m[1]}-${m[2]}`, size) ?? { start, end });
  }
  const length = Math.max(0, end - start + 1);
  const objects = call.env.objects;
  const stream = await objects.read(row, start, end, source?.key ?? null);
  const algorithm = checksumOfUpload(upload)?.algorithm ?? null;
  const { parts, result } = await objects.writeBlob(bodyFromStream(stream, length, algorithm), sealKey);
  await objects.putPart(uploadId, partNumber, parts, result);
  const headers: Record<string, string> = sseHeaders(upload.sse, customer);
  if (row.version_id !== 'null') headers['x-amz-copy-source-version-id'] = row.version_id;
  let xml =
    el('LastModified', new Date(call.env.clock.nowMs()).toISOString()) + el('ETag', quoteEtag(result.md5));
  if (result.checksum) xml += el(`Checksum${result.checksum.algorithm}`, result.checksum.value);
  call.xml(200, 'CopyPartResult', xml, headers);
}

export async function completeMultipartUpload(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const uploadId = call.query.get('uploadId')!;
  const objects = call.env.objects;
  const upload = await objects.repo.upload(bucket.id, uploadId);
  // Up to 10,000 parts, each with an ETag and a checksum (an escaped SHA-512 is the longest).
  const request = await call.readSmallBody(MAX_PARTS * 512, { headersDescribeObject: true });
  const doc = parseXml(request.toString('utf8'), 'CompleteMultipartUpload');
  const listed = (Array.isArray(doc.Part) ? doc.Part : []).map((p: Record<string, unknown>): ListedPart => {
    const n = Number(asText(p['PartNumber']));
    const etag = asText(p['ETag']);
    if (!Number.isInteger(n) || !etag) throw s3Errors.malformedXml();
    const checksums: Record<string, string> = {};
    for (const algorithm of CHECKSUM_ALGORITHMS) {
      const value = asText(p[`Checksum${algorithm}`]);
      if (value) checksums[algorithm] = value;
    }
    return { partNumber: n, etag, checksums };
  });
  // Answer with a status line at once and keep the connection alive with whitespace, as S3
  // does, would need the error inside a 200; the join is a metadata commit, so it is fast.
  const live = upload && upload.key === call.key;
  // Conditional writes apply to the object Complete makes, as to a PUT's.
  if (live && (call.header('if-none-match') || call.header('if-match')))
    conditionalWrite(call, await objects.repo.latest(bucket.id, call.key!));
  // An SSE-KMS object appears only while its key can still unwrap it: not once deletion is scheduled.
  const record = live ? parseSse(upload.sse) : null;
  if (record?.alg === 'aws:kms') await kmsDataKey(call, record);
  // An SSE-C upload with a checksum algorithm needs its key to complete (its part checksums are
  // the customer's data, AWS's rule); one without a checksum algorithm completes without it. A
  // key that is sent is checked either way: another key than the upload's is refused (400).
  let customer: CustomerKey | null = null;
  if (live && (customerKeyOf(call) || (record?.alg === 'SSE-C' && checksumOfUpload(upload)))) {
    customer = partKey(call, upload);
    partSealKey(call, upload, customer?.key ?? null);
  }
  const done = live
    ? await objects.complete(refOf(bucket), upload, listed, completeAssertions(call))
    : await objects.completedBefore(bucket.id, call.key!, uploadId, listed);
  if (!done) throw s3Errors.noSuchUpload(uploadId);
  // The key's MD5 is echoed when the key was sent, as every other SSE-C answer does.
  const headers: Record<string, string> = live ? sseHeaders(upload.sse, customer) : {};
  if (done.versionId !== 'null') headers['x-amz-version-id'] = done.versionId;
  let xml =
    el('Location', call.objectUrl(bucket.name, call.key!)) +
    el('Bucket', bucket.name) +
    el('Key', call.key!) +
    el('ETag', quoteEtag(done.etag));
  const checksum = parseObjectChecksum(done.checksum);
  if (checksum)
    xml +=
      el(`Checksum${checksum.algorithm}`, checksum.value) +
      el('ChecksumType', checksum.type ?? 'FULL_OBJECT');
  call.xml(200, 'CompleteMultipartUploadResult', xml, headers);
}

/** The headers of a Complete that describe the object it makes: checked against it, not stored. */
function completeAssertions(call: S3Call): CompleteAssertions {
  const out: CompleteAssertions = {};
  for (const name in call.req.headers) {
    const algorithm = algorithmOfHeader(name);
    const value = call.header(name);
    if (!algorithm || value === undefined) continue;
    if (out.checksum)
      throw s3Errors.invalidRequest(
        'Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.',
      );
    // Not checked for form: any value that is not the object's is BadDigest here (Ceph's suite).
    out.checksum = { algorithm, value };
  }
  const type = call.header('x-amz-checksum-type');
  if (type !== undefined) out.type = type.toUpperCase();
  const size = call.header('x-amz-mp-object-size');
  if (size !== undefined) {
    if (!/^\d{1,16}$/.test(size))
      throw s3Errors.invalidArgument(
        'x-amz-mp-object-size must be a whole number of bytes',
        'x-amz-mp-object-size',
        size,
      );
    out.size = Number(size);
  }
  return out;
}

export async function abortMultipartUpload(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const uploadId = call.query.get('uploadId')!;
  await call.env.objects.requireUpload(bucket.id, call.key!, uploadId);
  await call.env.objects.abort(uploadId);
  call.send(204);
}

export async function listParts(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const uploadId = call.query.get('uploadId')!;
  const upload = await call.env.objects.requireUpload(bucket.id, call.key!, uploadId);
  const maxParts = maxKeysOf(call, 'max-parts');
  const markerRaw = call.query.get('part-number-marker') ?? '0';
  if (!/^\d+$/.test(markerRaw))
    throw s3Errors.invalidArgument('Invalid part number marker', 'part-number-marker', markerRaw);
  const marker = Number(markerRaw);
  const rows = await call.env.objects.repo.parts(uploadId, marker, maxParts + 1);
  const truncated = rows.length > maxParts;
  const page = rows.slice(0, maxParts);
  const owner = objectOwnerXml(call, bucket)(upload);
  let xml = el('Bucket', bucket.name) + el('Key', upload.key) + el('UploadId', uploadId);
  xml += initiatorXml(call, bucket, upload) + owner + el('StorageClass', reportedClass(upload.storage_class));
  xml += el('PartNumberMarker', marker);
  if (page.length > 0) xml += el('NextPartNumberMarker', page[page.length - 1]!.part_number);
  xml += el('MaxParts', maxParts) + el('IsTruncated', truncated);
  const checksum = checksumOfUpload(upload);
  if (checksum) xml += el('ChecksumAlgorithm', checksum.algorithm) + el('ChecksumType', checksum.type);
  for (const p of page) {
    let part =
      el('PartNumber', p.part_number) +
      el('LastModified', new Date(Number(p.last_modified)).toISOString()) +
      el('ETag', quoteEtag(p.etag)) +
      el('Size', Number(p.size));
    if (p.checksum) {
      const c = JSON.parse(p.checksum) as { algorithm: string; value: string };
      part += el(`Checksum${c.algorithm}`, c.value);
    }
    xml += `<Part>${part}</Part>`;
  }
  call.xml(200, 'ListPartsResult', xml);
}

export { S3Error };

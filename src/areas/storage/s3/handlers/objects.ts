import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BucketRecord } from '../../data-plane-contract.js';
import { expirationHeader } from '../../objects/lifecycle-expiration.js';
import { blobsOf } from '../../objects/multipart-repo.js';
import type { ObjectAttributes } from '../../objects/object-store.js';
import { storageClassOf } from '../../objects/storage-class.js';
import type { ObjectRow } from '../../objects/tables.js';
import {
  type Checksum,
  type ChecksumAlgorithm,
  checksumReady,
  createChecksum,
  requestedAlgorithm,
} from '../checksums.js';
import { objectOpenedByAcl, type S3Call } from '../context.js';
import { keyToOpen, sealingFor, sseHeaders } from '../encryption.js';
import { s3Errors } from '../errors.js';
import { checksumHeaders, parseObjectChecksum } from '../multipart-checksums.js';
import { guardVersionDelete, lockForWrite, lockHeaders } from '../object-lock.js';
import { el } from '../xml.js';
import { aclForWrite } from './access.js';
import {
  attributesFromHeaders,
  checkConditions,
  objectHeaders,
  parseRange,
  parseTagQuery,
  quoteEtag,
} from './object-headers.js';
import { checkKey, findObject, refOf } from './object-lookup.js';

export async function getObject(call: S3Call): Promise<void> {
  const versionId = call.query.get('versionId');
  const key = call.key!;
  let bucket: BucketRecord;
  let row: ObjectRow;
  try {
    bucket = await call.requireBucket({
      objectAcl: true,
    });
    // A private bucket's object may still be readable through its own ACL (public-read …).
    row = await call.checkObjectAcl(() => findObject(call, bucket, key, versionId));
  } catch (err) {
    throw await call.notFoundIfListable(err, call.bucket, key);
  }
  // S3 keeps SSE-S3 and SSE-KMS to itself on reads: their request headers are a client's mistake.
  for (const name of ['x-amz-server-side-encryption', 'x-amz-server-side-encryption-aws-kms-key-id'])
    if (call.header(name) !== undefined)
      throw s3Errors.invalidArgument(
        `${name} header is not supported for this operation.`,
        name,
        call.header(name),
      );
  const over = call.req.method === 'GET' ? call.env.bandwidth?.overLimit(bucket.customerId) : null;
  if (over !== null && over !== undefined) throw s3Errors.bandwidthExceeded(over);
  // An SSE-C object is refused without its key before anything about it is answered.
  const customer = await keyToOpen(call, row.sse, '', call.req.method !== 'HEAD');
  checkConditions(row, (n) => call.header(n));
  const size = Number(row.size);
  const part = partOf(call, row);
  const range = part?.range ?? parseRange(call.header('range'), size);
  const headers = {
    ...objectHeaders(row, call.query),
    ...sseHeaders(row.sse, customer),
    ...lockHeaders(call, bucket, row),
  };
  // Only the current version expires by an Expiration rule (noncurrent ones by their own action).
  const expiration = row.is_latest
    ? expirationHeader(bucket.lifecycle, { ...row, lastModified: Number(row.last_modified) })
    : null;
  if (expiration) headers['x-amz-expiration'] = expiration;
  // A checksum describes the whole object or one of its parts, never an arbitrary range.
  if (call.header('x-amz-checksum-mode')?.toUpperCase() === 'ENABLED' && (part || !range))
    Object.assign(headers, checksumHeaders(row.checksum, part?.number ?? null));
  if (part?.count) headers['x-amz-mp-parts-count'] = part.count;
  if (call.req.method === 'HEAD') {
    if (range) {
      headers['content-range'] = `bytes ${range.start}-${range.end}/${size}`;
      headers['content-length'] = range.end - range.start + 1;
      return call.send(206, headers);
    }
    headers['content-length'] = size;
    return call.send(200, headers);
  }
  const start = range?.start ?? 0;
  const end = range?.end ?? size - 1;
  const small = size > 0 ? await call.env.objects.readSmall(row, start, end) : null;
  const res = call.res;
  if (small) {
    if (range) headers['content-range'] = `bytes ${start}-${end}/${size}`;
    return call.send(range ? 206 : 200, headers, small);
  }
  const stream: Readable = await call.env.objects.read(row, start, end, customer?.key ?? null);
  res.statusCode = range ? 206 : 200;
  for (const [k, v] of Object.entries(call.corsHeaders)) res.setHeader(k, v);
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  if (range) res.setHeader('content-range', `bytes ${start}-${end}/${size}`);
  res.setHeader('content-length', Math.max(0, end - start + 1));
  await pipeline(stream, res);
}

/**
 * `?partNumber=N` on GET and HEAD: the bytes of part N of a multipart object, as a ranged read
 * (206, `Content-Range`, `x-amz-mp-parts-count`). An object written in one piece has one part.
 * Null when the request names no part.
 */
function partOf(
  call: S3Call,
  row: ObjectRow,
): { number: number; range: { start: number; end: number }; count: number | null } | null {
  const raw = call.query.get('partNumber');
  if (raw === null) return null;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > 10_000)
    throw s3Errors.invalidArgument(
      'Part number must be an integer between 1 and 10000, inclusive',
      'partNumber',
      raw,
    );
  if (call.header('range') !== undefined)
    throw s3Errors.invalidRequest('Cannot specify both Range header and partNumber query parameter');
  // A multipart object keeps one blob per part, in order; its ETag ends in -N. Only the last part
  // may be empty, and an empty part has no blob.
  const count = Number(/-(\d+)$/.exec(row.etag)?.[1] ?? 0);
  const sizes = count ? blobsOf(row).map((b) => b.size) : [Number(row.size)];
  while (sizes.length < count) sizes.push(0);
  if (n > sizes.length || sizes[n - 1] === 0) throw s3Errors.invalidPartNumber();
  const multipart = count > 0;
  const start = sizes.slice(0, n - 1).reduce((a, b) => a + b, 0);
  return {
    number: n,
    range: { start, end: start + sizes[n - 1]! - 1 },
    count: multipart ? sizes.length : null,
  };
}

/** `If-None-Match: *` and `If-Match` on a write (PutObject, CompleteMultipartUpload), as S3 checks them. */
export function conditionalWrite(call: S3Call, current: ObjectRow | undefined): void {
  const ifNoneMatch = call.header('if-none-match');
  const ifMatch = call.header('if-match');
  const live = current && !current.is_delete_marker ? current : undefined;
  if (ifNoneMatch === '*' && live) throw s3Errors.preconditionFailed('If-None-Match');
  if (ifMatch !== undefined) {
    if (!live) throw s3Errors.noSuchKey(call.key!);
    const list = ifMatch.split(',').map((s) => s.trim().replace(/"/g, ''));
    if (!list.includes('*') && !list.includes(live.etag)) throw s3Errors.preconditionFailed('If-Match');
  }
}

export async function putObject(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const key = call.key!;
  checkKey(key);
  const attrs = attributesFromHeaders(call.req.headers);
  const { sealing, customer } = await sealingFor(call, bucket);
  const lock = lockForWrite(call, bucket);
  const acl = await aclForWrite(call, bucket, key);
  const storageClass = storageClassOf(call.header('x-amz-storage-class'));
  if (call.header('if-none-match') !== undefined || call.header('if-match') !== undefined) {
    conditionalWrite(call, await call.env.objects.repo.latest(bucket.id, key));
  }
  const body = call.bodyReader(call.env.settings.maxObjectBytes);
  const { versionId, etag, lastModified, result } = await call.env.objects.putObject(
    refOf(bucket),
    key,
    body,
    attrs,
    {
      sealing,
      lock,
      acl,
      storageClass,
    },
  );
  const headers: Record<string, string> = sseHeaders(sealing, customer);
  headers['etag'] = quoteEtag(etag);
  if (versionId !== 'null') headers['x-amz-version-id'] = versionId;
  if (result.checksum) {
    headers[`x-amz-checksum-${result.checksum.algorithm.toLowerCase()}`] = result.checksum.value;
    headers['x-amz-checksum-type'] = 'FULL_OBJECT';
  }
  const expiration = expirationHeader(bucket.lifecycle, {
    key,
    size: result.size,
    tags: JSON.stringify(attrs.tags),
    lastModified: Number(lastModified),
  });
  if (expiration) headers['x-amz-expiration'] = expiration;
  call.send(200, headers);
}

export async function deleteObject(call: S3Call): Promise<void> {
  const versionId = call.query.get('versionId');
  const bucket = await call.requireBucket();
  const key = call.key!;
  const headers: Record<string, string> = {};
  if (versionId !== null) {
    const gone = await call.env.objects.deleteVersion(refOf(bucket), key, versionId, (row) =>
      guardVersionDelete(call, bucket, row),
    );
    headers['x-amz-version-id'] = versionId;
    if (gone?.deleteMarker) headers['x-amz-delete-marker'] = 'true';
  } else {
    const r = await call.env.objects.deleteCurrent(refOf(bucket), key);
    if (r.deleteMarker) headers['x-amz-delete-marker'] = 'true';
    if (r.versionId) headers['x-amz-version-id'] = r.versionId;
  }
  call.send(204, headers);
}

/** `x-amz-copy-source`: `[/]bucket/key[?versionId=…]`, URL-encoded. */
export function parseCopySource(value: string): { bucket: string; key: string; versionId: string | null } {
  const q = value.indexOf('?');
  const pathPart = q >= 0 ? value.slice(0, q) : value;
  const versionId = q >= 0 ? new URLSearchParams(value.slice(q + 1)).get('versionId') : null;
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathPart).replace(/^\//, '');
  } catch {
    throw s3Errors.invalidArgument('Invalid copy source encoding', 'x-amz-copy-source', value);
  }
  const slash = decoded.indexOf('/');
  if (slash <= 0 || slash === decoded.length - 1) {
    throw s3Errors.invalidArgument('Invalid copy source object key', 'x-amz-copy-source', value);
  }
  return { bucket: decoded.slice(0, slash), key: decoded.slice(slash + 1), versionId };
}

/** The source object of a copy, with read access checked and copy conditions applied. */
export async function copySource(call: S3Call): Promise<{ row: ObjectRow; bucket: BucketRecord }> {
  const src = parseCopySource(call.header('x-amz-copy-source')!);
  const bucket = await call.env.cache.findBucket(src.bucket);
  if (!bucket) throw s3Errors.noSuchBucket(src.bucket);
  call.checkExpectedOwner(bucket, 'x-amz-source-expected-bucket-owner');
  const action = src.versionId !== null ? 's3:GetObjectVersion' : 's3:GetObject';
  const d = await call.decideObject(bucket, action, src.key, src.versionId);
  const row = await objectOpenedByAcl(
    d,
    () => findObject(call, bucket, src.key, src.versionId),
    call.objectJudge(bucket, action),
  );
  checkConditions(row, (n) => call.header(n), 'x-amz-copy-source-', 412);
  return { row, bucket };
}

/**
 * A stored object's bytes as a body for a new blob, hashed again on the way, and checksummed
 * with `algorithm` when the copy is to have a checksum.
 */
export function bodyFromStream(stream: Readable, size: number, algorithm: ChecksumAlgorithm | null = null) {
  const md5 = createHash('md5');
  let checksum: Checksum | null = null;
  let seen = 0;
  return {
    expectedSize: size,
    async *chunks() {
      if (algorithm) {
        await checksumReady(algorithm);
        checksum = createChecksum(algorithm);
      }
      for await (const c of stream as AsyncIterable<Buffer>) {
        seen += c.length;
        md5.update(c);
        checksum?.update(c);
        yield c;
      }
    },
    verify() {
      if (seen !== size) throw s3Errors.internal();
      return {
        size,
        md5: md5.digest('hex'),
        checksum: algorithm && checksum ? { algorithm, value: (checksum as Checksum).digest() } : null,
      };
    },
  };
}

export async function copyObject(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const key = call.key!;
  checkKey(key);
  const { row, bucket: srcBucket } = await copySource(call);
  const source = await keyToOpen(call, row.sse, 'copy-source-');
  const { sealing, customer } = await sealingFor(call, bucket);
  const lock = lockForWrite(call, bucket);
  // A copy gets the ACL it asks for, else private (S3 does not copy ACLs).
  const acl = await aclForWrite(call, bucket, key);
  // The copy's class is the one asked for, else STANDARD (S3 does not carry the source's over).
  const storageClass = storageClassOf(call.header('x-amz-storage-class'));
  const directive = (call.header('x-amz-metadata-directive') ?? 'COPY').toUpperCase();
  const tagging = (call.header('x-amz-tagging-directive') ?? 'COPY').toUpperCase();
  if (!['COPY', 'REPLACE'].includes(directive))
    throw s3Errors.invalidArgument('Unknown metadata directive.', 'x-amz-metadata-directive', directive);
  if (
    srcBucket.id === bucket.id &&
    row.key === key &&
    directive === 'COPY' &&
    bucket.versioning === 'Unversioned' &&
    !call.header('x-amz-storage-class') &&
    !sealing
  ) {
    throw s3Errors.invalidRequest(
      "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.",
    );
  }
  const given = attributesFromHeaders(call.req.headers);
  const sourceAttrs: ObjectAttributes = {
    contentType: row.content_type,
    headers: JSON.parse(row.headers) as Record<string, string>,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    tags: JSON.parse(row.tags) as Record<string, string>,
  };
  const attrs: ObjectAttributes =
    directive === 'REPLACE' ? { ...given, tags: sourceAttrs.tags } : { ...sourceAttrs };
  attrs.tags =
    tagging === 'REPLACE'
      ? call.header('x-amz-tagging')
        ? parseTagQuery(call.header('x-amz-tagging')!)
        : {}
      : sourceAttrs.tags;
  // The copy is checksummed whole, with the algorithm asked for, else the source's.
  const asked = call.header('x-amz-checksum-algorithm');
  const algorithm = asked
    ? requestedAlgorithm(asked)
    : (parseObjectChecksum(row.checksum)?.algorithm ?? null);
  const size = Number(row.size);
  const stream = await call.env.objects.read(row, 0, size - 1, source?.key ?? null);
  const committed = await call.env.objects.putObject(
    refOf(bucket),
    key,
    bodyFromStream(stream, size, algorithm),
    attrs,
    { sealing, lock, acl, storageClass },
  );
  const headers: Record<string, string> = sseHeaders(sealing, customer);
  if (committed.versionId !== 'null') headers['x-amz-version-id'] = committed.versionId;
  if (row.version_id !== 'null') headers['x-amz-copy-source-version-id'] = row.version_id;
  let xml =
    el('LastModified', new Date(committed.lastModified).toISOString()) +
    el('ETag', quoteEtag(committed.etag));
  const checksum = committed.result.checksum;
  if (checksum)
    xml += el(`Checksum${checksum.algorithm}`, checksum.value) + el('ChecksumType', 'FULL_OBJECT');
  call.xml(200, 'CopyObjectResult', xml, headers);
}

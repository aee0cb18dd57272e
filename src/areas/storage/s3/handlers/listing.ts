import type { BucketRecord } from '../../data-plane-contract.js';
import { listPage, type Seek } from '../../objects/listing.js';
import { reportedClass } from '../../objects/storage-class.js';
import type { UploadRow } from '../../objects/tables.js';
import type { S3Call } from '../context.js';
import { s3Errors } from '../errors.js';
import { checksumOfUpload } from '../multipart-checksums.js';
import { decodeObjectAcl } from '../object-acl.js';
import { el } from '../xml.js';
import { quoteEtag } from './object-headers.js';

export function maxKeysOf(call: S3Call, name = 'max-keys'): number {
  const raw = call.query.get(name);
  if (raw === null || raw === '') return 1000;
  if (!/^\d+$/.test(raw))
    throw s3Errors.invalidArgument(`Provided ${name} not an integer or within integer range`, name, raw);
  return Math.min(1000, Number(raw));
}

/** `encoding-type=url`: names go out percent-encoded (slashes kept), for keys XML cannot carry. */
function encoder(call: S3Call): (s: string) => string {
  const type = call.query.get('encoding-type');
  if (type !== null && type !== 'url')
    throw s3Errors.invalidArgument('Invalid Encoding Method specified in Request', 'encoding-type', type);
  return type === 'url' ? (s) => encodeURIComponent(s).replace(/%2F/g, '/') : (s) => s;
}

/**
 * The `Owner` of each listed object version (or of the object an upload will make, as AWS's
 * ListMultipartUploads and ListParts show it): the account that owns it, which in a bucket with
 * ACLs on (ObjectWriter) is its writer, not the bucket's owner. Rows without an ACL of their own (the
 * common case) belong to the bucket's owner, so the ACL is decoded only when there is one.
 */
export function objectOwnerXml(call: S3Call, bucket: BucketRecord): (row: { acl: string | null }) => string {
  const byAccount = new Map<string, string>();
  const forAccount = (id: string) => {
    let xml = byAccount.get(id);
    if (xml === undefined) {
      xml = `<Owner>${accountXml(call, id)}</Owner>`;
      byAccount.set(id, xml);
    }
    return xml;
  };
  return (row) => forAccount(row.acl ? decodeObjectAcl(row.acl, bucket.customerId).owner : bucket.customerId);
}

/** An account's `ID` and `DisplayName`: its name to its own keys, its id to anyone else. */
function accountXml(call: S3Call, accountId: string): string {
  const p = call.principal;
  const name = p.kind === 'key' && p.key.customerId === accountId ? p.key.customerDisplayName : accountId;
  return el('ID', accountId) + el('DisplayName', name);
}

/** A multipart upload's `Initiator`: the account whose key started it (the bucket's owner when null). */
export function initiatorXml(
  call: S3Call,
  bucket: BucketRecord,
  upload: { initiator: string | null },
): string {
  return `<Initiator>${accountXml(call, upload.initiator ?? bucket.customerId)}</Initiator>`;
}

const iso = (ms: number) => new Date(Number(ms)).toISOString();

export async function listObjects(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const v2 = call.query.get('list-type') === '2';
  const enc = encoder(call);
  const prefix = call.query.get('prefix') ?? '';
  const delimiter = call.query.get('delimiter') ?? '';
  const maxKeys = maxKeysOf(call);
  let start: Seek | null = null;
  const token = call.query.get('continuation-token');
  const startAfter = call.query.get('start-after');
  const marker = call.query.get('marker');
  // An empty token is no position (as on AWS, it is echoed and the listing starts at the top).
  if (v2 && token) {
    const key = Buffer.from(token, 'base64url').toString('utf8');
    if (Buffer.from(key).toString('base64url') !== token) {
      throw s3Errors.invalidArgument(
        'The continuation token provided is incorrect',
        'continuation-token',
        token,
      );
    }
    start = { key, inclusive: false };
  } else if (v2 && startAfter) start = { key: startAfter, inclusive: false };
  else if (!v2 && marker) start = { key: marker, inclusive: false };
  const repo = call.env.objects.repo;
  const page = await listPage({
    prefix,
    delimiter,
    maxKeys,
    start,
    fetch: (from, limit) => repo.listCurrent(bucket.id, prefix, from, limit),
    hidden: (r) => r.is_delete_marker === 1,
  });
  const owner = !v2 || call.query.get('fetch-owner') === 'true' ? objectOwnerXml(call, bucket) : () => '';
  let xml = el('Name', bucket.name) + el('Prefix', enc(prefix));
  if (v2) {
    if (token !== null) xml += el('ContinuationToken', token);
    if (startAfter) xml += el('StartAfter', enc(startAfter));
    xml += el('KeyCount', page.entries.length + page.prefixes.length);
  } else {
    xml += el('Marker', enc(marker ?? ''));
  }
  xml += el('MaxKeys', maxKeys);
  if (delimiter) xml += el('Delimiter', enc(delimiter));
  if (call.query.get('encoding-type')) xml += el('EncodingType', 'url');
  xml += el('IsTruncated', page.truncated);
  if (page.truncated && page.lastKey !== null) {
    if (v2) xml += el('NextContinuationToken', Buffer.from(page.lastKey).toString('base64url'));
    else xml += el('NextMarker', enc(page.lastKey));
  }
  for (const r of page.entries) {
    xml += `<Contents>${el('Key', enc(r.key))}${el('LastModified', iso(r.last_modified))}${el('ETag', quoteEtag(r.etag))}${el('Size', Number(r.size))}${owner(r)}${el('StorageClass', reportedClass(r.storage_class))}</Contents>`;
  }
  for (const p of page.prefixes) xml += `<CommonPrefixes>${el('Prefix', enc(p))}</CommonPrefixes>`;
  call.xml(200, 'ListBucketResult', xml);
}

export async function listObjectVersions(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const enc = encoder(call);
  const prefix = call.query.get('prefix') ?? '';
  const delimiter = call.query.get('delimiter') ?? '';
  const maxKeys = maxKeysOf(call);
  const keyMarker = call.query.get('key-marker') ?? '';
  const versionMarker = call.query.get('version-id-marker') ?? '';
  const repo = call.env.objects.repo;
  let start: Seek | null = null;
  if (keyMarker) {
    start = { key: keyMarker, inclusive: false };
    if (versionMarker) {
      // A marker is a position, not a reference that must still exist (a client emptying a
      // bucket deletes the very version its next page starts after).
      const row = await repo.version(bucket.id, keyMarker, versionMarker);
      if (row) start = { key: keyMarker, inclusive: false, tie: row.id };
      else if (/^[0-9a-f]{32}$/.test(versionMarker)) {
        // Version ids and row ids come from one time-ordered generator, the version id first:
        // the versions listed after a gone one are those made before its id.
        const v = versionMarker;
        start = {
          key: keyMarker,
          inclusive: false,
          tie: `${v.slice(0, 8)}-${v.slice(8, 12)}-${v.slice(12, 16)}-${v.slice(16, 20)}-${v.slice(20)}`,
        };
      } else if (versionMarker !== 'null')
        throw s3Errors.invalidArgument('Invalid version id specified', 'version-id-marker', versionMarker);
    }
  }
  const page = await listPage({
    prefix,
    delimiter,
    maxKeys,
    start,
    fetch: (from, limit) =>
      repo.listVersions(
        bucket.id,
        prefix,
        from ? { key: from.key, inclusive: from.inclusive, ...(from.tie ? { id: from.tie } : {}) } : null,
        limit,
      ),
  });
  const owner = objectOwnerXml(call, bucket);
  let xml =
    el('Name', bucket.name) +
    el('Prefix', enc(prefix)) +
    el('KeyMarker', enc(keyMarker)) +
    el('VersionIdMarker', versionMarker);
  if (page.truncated) {
    xml += el('NextKeyMarker', enc(page.lastKey ?? ''));
    if (page.last) xml += el('NextVersionIdMarker', page.last.version_id);
  }
  xml += el('MaxKeys', maxKeys);
  if (delimiter) xml += el('Delimiter', enc(delimiter));
  if (call.query.get('encoding-type')) xml += el('EncodingType', 'url');
  xml += el('IsTruncated', page.truncated);
  for (const r of page.entries) {
    const common =
      el('Key', enc(r.key)) +
      el('VersionId', r.version_id) +
      el('IsLatest', r.is_latest === 1) +
      el('LastModified', iso(r.last_modified));
    if (r.is_delete_marker) xml += `<DeleteMarker>${common}${owner(r)}</DeleteMarker>`;
    else
      xml += `<Version>${common}${el('ETag', quoteEtag(r.etag))}${el('Size', Number(r.size))}${el('StorageClass', reportedClass(r.storage_class))}${owner(r)}</Version>`;
  }
  for (const p of page.prefixes) xml += `<CommonPrefixes>${el('Prefix', enc(p))}</CommonPrefixes>`;
  call.xml(200, 'ListVersionsResult', xml);
}

/** An upload's checksum algorithm and type, as ListMultipartUploads shows them. */
function uploadChecksumXml(upload: UploadRow): string {
  const checksum = checksumOfUpload(upload);
  return checksum ? el('ChecksumAlgorithm', checksum.algorithm) + el('ChecksumType', checksum.type) : '';
}

export async function listMultipartUploads(call: S3Call): Promise<void> {
  const bucket = await call.requireBucket();
  const enc = encoder(call);
  const prefix = call.query.get('prefix') ?? '';
  const delimiter = call.query.get('delimiter') ?? '';
  const maxUploads = maxKeysOf(call, 'max-uploads');
  const keyMarker = call.query.get('key-marker') ?? '';
  const uploadMarker = call.query.get('upload-id-marker') ?? '';
  const start: Seek | null = keyMarker
    ? { key: keyMarker, inclusive: false, ...(uploadMarker ? { tie: uploadMarker } : {}) }
    : null;
  const repo = call.env.objects.repo;
  const page = await listPage({
    prefix,
    delimiter,
    maxKeys: maxUploads,
    start,
    fetch: (from, limit) =>
      repo.listUploads(
        bucket.id,
        prefix,
        from
          ? { key: from.key, inclusive: from.inclusive, ...(from.tie ? { uploadId: from.tie } : {}) }
          : null,
        limit,
      ),
  });
  const owner = objectOwnerXml(call, bucket);
  let xml = el('Bucket', bucket.name) + el('KeyMarker', enc(keyMarker)) + el('UploadIdMarker', uploadMarker);
  if (page.truncated) {
    xml += el('NextKeyMarker', enc(page.lastKey ?? ''));
    if (page.last) xml += el('NextUploadIdMarker', page.last.upload_id);
  }
  xml += el('Prefix', enc(prefix));
  if (delimiter) xml += el('Delimiter', enc(delimiter));
  xml += el('MaxUploads', maxUploads) + el('IsTruncated', page.truncated);
  if (call.query.get('encoding-type')) xml += el('EncodingType', 'url');
  for (const u of page.entries) {
    const initiator = initiatorXml(call, bucket, u);
    xml += `<Upload>${el('Key', enc(u.key))}${el('UploadId', u.upload_id)}${initiator}${owner(u)}${el('StorageClass', reportedClass(u.storage_class))}${el('Initiated', iso(u.initiated_at))}${uploadChecksumXml(u)}</Upload>`;
  }
  for (const p of page.prefixes) xml += `<CommonPrefixes>${el('Prefix', enc(p))}</CommonPrefixes>`;
  call.xml(200, 'ListMultipartUploadsResult', xml);
}

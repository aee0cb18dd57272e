import { blobsOf } from '../../objects/multipart-repo.js';
import { reportedClass } from '../../objects/storage-class.js';
import type { S3Call } from '../context.js';
import { keyToOpen } from '../encryption.js';
import { s3Errors } from '../errors.js';
import { parseObjectChecksum } from '../multipart-checksums.js';
import { el } from '../xml.js';
import { findObject } from './object-lookup.js';

const ATTRIBUTES = ['ETag', 'Checksum', 'ObjectParts', 'StorageClass', 'ObjectSize'] as const;

/**
 * GetObjectAttributes (`GET ?attributes`, `x-amz-object-attributes: ETag,ObjectSize,…`): the
 * object's metadata without its bytes. `ObjectParts` lists a multipart object's parts (number and
 * size, and checksum when the upload had one; paged with `x-amz-max-parts` and
 * `x-amz-part-number-marker`).
 */
export async function getObjectAttributes(call: S3Call): Promise<void> {
  const versionId = call.query.get('versionId');
  // Judged as a read of the object: with ACLs on, its own ACL decides for an object another
  // account owns (the bucket's owner reads it only if granted), and READ opens it to others.
  const bucket = await call.requireBucket({ objectAcl: true });
  const wanted = (call.header('x-amz-object-attributes') ?? '')
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  if (wanted.length === 0 || wanted.some((a) => !(ATTRIBUTES as readonly string[]).includes(a)))
    throw s3Errors.invalidArgument(
      `x-amz-object-attributes names one or more of ${ATTRIBUTES.join(', ')}`,
      'x-amz-object-attributes',
      wanted.join(','),
    );
  const row = await call.checkObjectAcl(() => findObject(call, bucket, call.key!, versionId));
  // An SSE-C object's attributes need its key, as its bytes do.
  await keyToOpen(call, row.sse, '', false);
  let xml = '';
  if (wanted.includes('ETag')) xml += el('ETag', row.etag);
  const checksum = parseObjectChecksum(row.checksum);
  if (wanted.includes('Checksum') && checksum)
    xml += `<Checksum>${el(`Checksum${checksum.algorithm}`, checksum.value)}${el(
      'ChecksumType',
      checksum.type ?? 'FULL_OBJECT',
    )}</Checksum>`;
  const count = Number(/-(\d+)$/.exec(row.etag)?.[1] ?? 0);
  if (wanted.includes('ObjectParts') && count > 0) {
    const sizes = blobsOf(row).map((b) => b.size);
    while (sizes.length < count) sizes.push(0);
    const marker = Number(call.header('x-amz-part-number-marker') ?? 0) || 0;
    const max = Math.min(1000, Number(call.header('x-amz-max-parts') ?? 1000) || 1000);
    const page = sizes
      .map((size, i) => ({ n: i + 1, size }))
      .filter((p) => p.n > marker)
      .slice(0, max);
    const truncated = marker + page.length < count;
    const partChecksum = (n: number) => {
      const value = checksum?.parts?.[n - 1];
      return value ? el(`Checksum${checksum!.algorithm}`, value) : '';
    };
    xml += `<ObjectParts>${el('PartsCount', count)}${el('PartNumberMarker', marker)}${el(
      'NextPartNumberMarker',
      page.at(-1)?.n ?? marker,
    )}${el('MaxParts', max)}${el('IsTruncated', truncated)}${page
      .map((p) => `<Part>${el('PartNumber', p.n)}${el('Size', p.size)}${partChecksum(p.n)}</Part>`)
      .join('')}</ObjectParts>`;
  }
  if (wanted.includes('StorageClass')) xml += el('StorageClass', reportedClass(row.storage_class));
  if (wanted.includes('ObjectSize')) xml += el('ObjectSize', Number(row.size));
  const headers: Record<string, string> = {
    'last-modified': new Date(Number(row.last_modified)).toUTCString(),
  };
  if (row.version_id !== 'null') headers['x-amz-version-id'] = row.version_id;
  call.xml(200, 'GetObjectAttributesResponse', xml, headers);
}

import type { BucketRecord } from '../../data-plane-contract.js';
import type { BucketRef } from '../../objects/repo.js';
import type { ObjectRow } from '../../objects/tables.js';
import type { S3Call } from '../context.js';
import { S3Error, s3Errors } from '../errors.js';

/** Naming an object: the key's bound, the bucket as the object store knows it, and the lookup
 * every object and sub-resource handler starts with. */
export const MAX_KEY_BYTES = 1024;

export const refOf = (b: BucketRecord): BucketRef => ({
  id: b.id,
  customerId: b.customerId,
  versioning: b.versioning,
});

export function checkKey(key: string): void {
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) throw s3Errors.keyTooLong();
}

/** The object a GET/HEAD/copy names: the current version, or the one `versionId` asks for. */
export async function findObject(
  call: S3Call,
  bucket: BucketRecord,
  key: string,
  versionId: string | null,
): Promise<ObjectRow> {
  const repo = call.env.objects.repo;
  if (versionId !== null) {
    const row = await repo.version(bucket.id, key, versionId);
    if (!row) {
      if (!/^[0-9a-f]{32}$|^null$/.test(versionId))
        throw s3Errors.invalidArgument('Invalid version id specified', 'versionId', versionId);
      throw s3Errors.noSuchVersion(key, versionId);
    }
    if (row.is_delete_marker) {
      throw new S3Error(
        'MethodNotAllowed',
        405,
        'The specified method is not allowed against this resource.',
        {},
        {
          'x-amz-delete-marker': 'true',
          'x-amz-version-id': row.version_id,
          'last-modified': new Date(Number(row.last_modified)).toUTCString(),
        },
      );
    }
    return row;
  }
  const row = await repo.latest(bucket.id, key);
  if (!row) throw s3Errors.noSuchKey(key);
  if (row.is_delete_marker) {
    throw new S3Error(
      'NoSuchKey',
      404,
      'The specified key does not exist.',
      { Key: key },
      {
        'x-amz-delete-marker': 'true',
        'x-amz-version-id': row.version_id,
      },
    );
  }
  return row;
}

/**
 * A backup's archive in the object store: written with its size and SHA-256 counted on the way
 * in, and read back whole and checked against them before a restore touches the disk. Apart from
 * the backup service so that its rules (locks, states, limits) read without the stream plumbing.
 */
import { createHash } from 'node:crypto';
import { PassThrough, type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { InternalObjects } from '../../storage/service.js';
import { vpsErrors } from '../errors.js';
import type { VpsBackupsTable } from '../migrations.js';

/** Stores the driver's archive under `key`; answers its size and SHA-256 (hex). */
export async function putArchive(
  files: InternalObjects,
  key: string,
  archive: Readable,
): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  const hashing = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  const body = new PassThrough();
  pipeline(archive, hashing, body).catch((err) => body.destroy(err as Error));
  const put = await files.put(key, body, 'application/gzip');
  return { size: put.size, sha256: hash.digest('hex') };
}

/** Reads the whole archive back: a missing, short or altered one fails before the disk is touched. */
export async function verifyArchive(files: InternalObjects, b: VpsBackupsTable) {
  const hash = createHash('sha256');
  let size = 0;
  try {
    for await (const chunk of (await files.get(b.storage_key)) as AsyncIterable<Buffer>) {
      hash.update(chunk);
      size += chunk.length;
    }
  } catch (err) {
    throw vpsErrors.backupUnreadable(err);
  }
  if (size !== Number(b.size_bytes) || hash.digest('hex') !== b.sha256)
    throw vpsErrors.backupUnreadable(new Error('size or SHA-256 differs from when it was taken'));
}

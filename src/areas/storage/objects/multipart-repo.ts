import { AppError } from '../../../kernel/errors.js';
import { onPostgres, runCompiled } from '../../../kernel/store/compiled.js';
import type { UnitDb } from '../../../kernel/store/unit-of-work.js';
import type { BlobPart, CompletedUploadRow, ObjectRow, ObjectTables, PartRow, UploadRow } from './tables.js';

/** Blobs no longer named by any row: the caller deletes them after the commit. */
export type Released = BlobPart[];

/** How long a completed upload is remembered for a retried Complete. */
const DAY_MS = 86_400_000;

export const blobsOf = (row: Pick<ObjectRow, 'blob'>): BlobPart[] => JSON.parse(row.blob) as BlobPart[];

/**
 * Multipart uploads and their parts, and the bucket lock every data-plane write takes first.
 * `ObjectRepo` extends it with versions and stats. Bound to the store for reads, or to a unit's
 * transaction (`ObjectRepo.over`, through `unitsOf` in object-writes.ts): the methods that write
 * under a check expect to run inside a unit, and never open one.
 */
export class MultipartRepo {
  constructor(readonly db: UnitDb<ObjectTables>) {}

  /**
   * The first statement of every transaction that makes data: takes the bucket row's lock and
   * checks the bucket is still live. Bucket deletion takes the same lock and checks emptiness
   * inside its transaction, so a write either lands before it (and the delete answers 409) or
   * fails with NoSuchBucket — never acknowledged and then purged. Resolves with the bucket's
   * versioning state as locked (null when the bucket has no row: a test's in-memory bucket).
   */
  async lockLiveBucket(bucketId: string): Promise<string | null> {
    // A retired bucket keeps its row (its name is never reused), so "gone" is a set deleted_at.
    // On SQLite every unit of work begins holding the one write lock, so reading
    // the row is enough, and writes no page; on PostgreSQL the no-op update takes the row's lock,
    // and a versioning change committed meanwhile is what it returns.
    const row = await runCompiled<{ deleted_at: number | null; versioning: string | null }>(
      this.db,
      onPostgres(this.db)
        ? 'UPDATE storage_buckets SET updated_at = updated_at WHERE id = ? RETURNING deleted_at, versioning'
        : 'SELECT deleted_at, versioning FROM storage_buckets WHERE id = ?',
      [bucketId],
    );
    if (row.rows[0] && row.rows[0].deleted_at !== null) throw bucketGone();
    return row.rows[0]?.versioning ?? null;
  }

  /** In a unit: records a new upload in a live bucket. */
  async createUpload(row: UploadRow): Promise<void> {
    await this.lockLiveBucket(row.bucket_id);
    await this.db.insertInto('storage_uploads').values(row).execute();
  }

  upload(bucketId: string, uploadId: string): Promise<UploadRow | undefined> {
    return this.db
      .selectFrom('storage_uploads')
      .selectAll()
      .where('upload_id', '=', uploadId)
      .where('bucket_id', '=', bucketId)
      .executeTakeFirst();
  }

  /** Remembers a completed upload for a day (older ones are dropped as new ones come). */
  async rememberCompleted(row: CompletedUploadRow): Promise<void> {
    await this.db
      .deleteFrom('storage_completed_uploads')
      .where('completed_at', '<', row.completed_at - DAY_MS)
      .execute();
    await this.db
      .insertInto('storage_completed_uploads')
      .values(row)
      .onConflict((oc) => oc.column('upload_id').doNothing())
      .execute();
  }

  completed(bucketId: string, uploadId: string, since: number): Promise<CompletedUploadRow | undefined> {
    return this.db
      .selectFrom('storage_completed_uploads')
      .selectAll()
      .where('upload_id', '=', uploadId)
      .where('bucket_id', '=', bucketId)
      .where('completed_at', '>=', since)
      .executeTakeFirst();
  }

  /** In a unit: records a part; the blob of a part it replaces is returned for deletion. */
  async putPart(part: PartRow): Promise<Released> {
    const up = await this.db
      .selectFrom('storage_uploads')
      .select('bucket_id')
      .where('upload_id', '=', part.upload_id)
      .executeTakeFirst();
    if (up) await this.lockLiveBucket(up.bucket_id);
    const old = await this.db
      .selectFrom('storage_upload_parts')
      .select('blob')
      .where('upload_id', '=', part.upload_id)
      .where('part_number', '=', part.part_number)
      .executeTakeFirst();
    if (old) {
      await this.db
        .deleteFrom('storage_upload_parts')
        .where('upload_id', '=', part.upload_id)
        .where('part_number', '=', part.part_number)
        .execute();
    }
    const live = await this.db
      .selectFrom('storage_uploads')
      .select('upload_id')
      .where('upload_id', '=', part.upload_id)
      .executeTakeFirst();
    if (!live) return [...(old ? blobsOf(old) : []), ...blobsOf(part)]; // aborted meanwhile
    await this.db.insertInto('storage_upload_parts').values(part).execute();
    return old ? blobsOf(old) : [];
  }

  parts(uploadId: string, afterPart = 0, limit = 10_001): Promise<PartRow[]> {
    return this.db
      .selectFrom('storage_upload_parts')
      .selectAll()
      .where('upload_id', '=', uploadId)
      .where('part_number', '>', afterPart)
      .orderBy('part_number')
      .limit(limit)
      .execute();
  }

  /**
   * In a unit: removes the upload and its parts (an abort, or a Complete), returning the blobs of parts not kept, or null
   * when the upload is gone. `keep` maps part numbers to the blob they must still name (a part
   * replaced meanwhile fails the whole call, so a Complete never names a released blob).
   */
  async dropUpload(
    uploadId: string,
    keep: Map<number, string> = new Map(),
    mismatch?: () => Error,
  ): Promise<Released | null> {
    const parts = await this.db
      .selectFrom('storage_upload_parts')
      .selectAll()
      .where('upload_id', '=', uploadId)
      .execute();
    for (const [n, blob] of keep) {
      if (parts.find((p) => p.part_number === n)?.blob !== blob)
        throw mismatch ? mismatch() : new Error('part changed');
    }
    await this.db.deleteFrom('storage_upload_parts').where('upload_id', '=', uploadId).execute();
    const gone = await this.db
      .deleteFrom('storage_uploads')
      .where('upload_id', '=', uploadId)
      .executeTakeFirst();
    if (Number(gone.numDeletedRows) === 0) return null;
    return parts.filter((p) => !keep.has(p.part_number)).flatMap(blobsOf);
  }

  listUploads(
    bucketId: string,
    prefix: string,
    from: { key: string; inclusive: boolean; uploadId?: string } | null,
    limit: number,
  ) {
    let q = this.db.selectFrom('storage_uploads').selectAll().where('bucket_id', '=', bucketId);
    q = withPrefix(q, prefix);
    if (from) {
      const f = from;
      if (f.uploadId !== undefined) {
        const id = f.uploadId;
        q = q.where((eb) =>
          eb.or([eb('key', '>', f.key), eb.and([eb('key', '=', f.key), eb('upload_id', '>', id)])]),
        );
      } else q = q.where('key', f.inclusive ? '>=' : '>', f.key);
    }
    return q.orderBy('key').orderBy('upload_id').limit(limit).execute();
  }
}

/** The smallest string greater than every string that starts with `prefix` (byte order). */
export function afterPrefix(prefix: string): string {
  const cps = Array.from(prefix);
  while (cps.length > 0) {
    const last = cps.pop()!.codePointAt(0)!;
    if (last < 0x10ffff) {
      let next = last + 1;
      if (next >= 0xd800 && next <= 0xdfff) next = 0xe000;
      return cps.join('') + String.fromCodePoint(next);
    }
  }
  return '\u{10ffff}\u{10ffff}';
}

// biome-ignore lint/suspicious/noExplicitAny: shared by the object and upload selects
export function withPrefix<Q extends { where: (...args: any[]) => Q }>(q: Q, prefix: string): Q {
  if (!prefix) return q;
  return q.where('key', '>=', prefix).where('key', '<', afterPrefix(prefix));
}

const bucketGone = () => new AppError('not_found', 'no_such_bucket', 'The bucket no longer exists.');

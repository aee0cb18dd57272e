import { type Kysely, sql } from 'kysely';
import { runCompiled } from '../../../kernel/store/compiled.js';
import type { AnyDb } from '../../../kernel/store/unit-of-work.js';
import type { VersioningState } from '../data-plane-contract.js';
import { blobsOf, MultipartRepo, type Released, withPrefix } from './multipart-repo.js';
import { PackRefsRepo } from './pack-refs-repo.js';
import type { CompletedUploadRow, ObjectRow, ObjectTables } from './tables.js';
import {
  applyUsage,
  type PendingVersion,
  removeRow,
  type UsageDeltas,
  writeVersionsIn,
} from './version-writes.js';

export type NewVersion = Omit<
  ObjectRow,
  'id' | 'bucket_id' | 'key' | 'version_id' | 'is_latest' | 'noncurrent_since'
>;

export interface BucketRef {
  id: string;
  customerId: string;
  versioning: VersioningState;
}

export type { Released } from './multipart-repo.js';

export { afterPrefix } from './multipart-repo.js';
export { newVersionId } from './version-writes.js';

/**
 * The data plane's queries (with its base, `MultipartRepo`, the only place with them): object
 * versions, their listing, usage counters and lifecycle. Bound to the store for reads, or to a
 * unit's transaction (`ObjectRepo.over`); the units themselves are opened in object-writes.ts.
 */
export class ObjectRepo extends MultipartRepo {
  static over(db: AnyDb): ObjectRepo {
    return new ObjectRepo(db);
  }

  /**
   * Every blob an object version or an uploaded part refers to, read in pages. Memory grows with
   * the number of blobs (about 60 bytes each): a daily sweep's price.
   */
  async referencedBlobs(): Promise<Set<string>> {
    const refs = new Set<string>();
    // Parts first (`PackRefsRepo.rows`): a completed upload's blobs move to an object version
    // that may be a row already paged past (an overwrite in place keeps its id).
    for await (const page of new PackRefsRepo(this.db).rows('every'))
      for (const row of page) for (const part of blobsOf(row)) refs.add(part.ref);
    return refs;
  }

  latest(bucketId: string, key: string): Promise<ObjectRow | undefined> {
    return this.db
      .selectFrom('storage_objects')
      .selectAll()
      .where('bucket_id', '=', bucketId)
      .where('key', '=', key)
      .where(sql<boolean>`is_latest = 1`)
      .executeTakeFirst();
  }

  version(bucketId: string, key: string, versionId: string): Promise<ObjectRow | undefined> {
    return this.db
      .selectFrom('storage_objects')
      .selectAll()
      .where('bucket_id', '=', bucketId)
      .where('key', '=', key)
      .where('version_id', '=', versionId)
      .executeTakeFirst();
  }

  /**
   * Completes a multipart upload in one transaction: the upload and its parts go, the version
   * naming the kept parts' blobs is written, and the completion is remembered for a retried
   * Complete. So no moment passes in which those blobs are named by no row (the orphan sweep could
   * take them), and a failed write leaves the upload as it was. Null when the upload is gone.
   * In a unit, as every method below that writes more than one statement.
   */
  async completeUpload(
    bucket: BucketRef,
    key: string,
    v: NewVersion,
    upload: { id: string; keep: Map<number, string>; mismatch: () => Error },
    completed: Omit<CompletedUploadRow, 'version_id'>,
  ): Promise<{ versionId: string; released: Released } | null> {
    const dropped = await this.dropUpload(upload.id, upload.keep, upload.mismatch);
    if (dropped === null) return null;
    const [out] = await this.writeVersions([{ bucket, key, row: v, now: v.last_modified }]);
    await this.rememberCompleted({ ...completed, version_id: out!.versionId });
    return { versionId: out!.versionId, released: [...dropped, ...out!.released] };
  }

  /**
   * Lifecycle expiry in a bucket with versioning on or suspended: the delete marker is written
   * only if the key's current version was last modified by `modifiedBy`, checked in the marker's
   * own unit under the bucket's lock. A version written since the rule matched stays current
   * (Suspended would otherwise replace it). Null when the check kept it.
   */
  async expireCurrent(
    bucket: BucketRef,
    key: string,
    marker: NewVersion,
    modifiedBy: number,
  ): Promise<{ versionId: string; released: Released } | null> {
    await this.lockLiveBucket(bucket.id);
    const current = await this.db
      .selectFrom('storage_objects')
      .select('last_modified')
      .where('bucket_id', '=', bucket.id)
      .where('key', '=', key)
      .where(sql<boolean>`is_latest = 1`)
      .executeTakeFirst();
    if (!current || Number(current.last_modified) > modifiedBy) return null;
    const [out] = await this.writeVersions([{ bucket, key, row: marker, now: marker.last_modified }]);
    return out!;
  }

  /** Many versions in one unit, in the order they came (two of one key: the later wins). */
  writeVersions(items: PendingVersion[]): Promise<{ versionId: string; released: Released }[]> {
    return writeVersionsIn(this.db, items, (id) => this.lockLiveBucket(id));
  }

  /**
   * Deletes one version for good; when it was current, the newest remaining one becomes current.
   * With `modifiedBy`, only while its last-modified time is no later (see `removeRow`).
   */
  async deleteVersion(bucket: BucketRef, row: ObjectRow, modifiedBy?: number): Promise<Released> {
    const deltas: UsageDeltas = new Map();
    const released = await removeRow(this.db, bucket, row, deltas, modifiedBy);
    await applyUsage(this.db, deltas);
    if (row.is_latest) {
      const next = await this.db
        .selectFrom('storage_objects')
        .select('id')
        .where('bucket_id', '=', bucket.id)
        .where('key', '=', row.key)
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
      if (next)
        await this.db
          .updateTable('storage_objects')
          .set({ is_latest: 1, noncurrent_since: null })
          .where('id', '=', next.id)
          .execute();
    }
    return released;
  }

  /**
   * Replaces a version's lock only if it is still `expected`: two retention changes at once cannot
   * both pass the check against the old one (the later is refused, as a conflict).
   */
  async updateLock(rowId: string, expected: string | null, next: string | null): Promise<boolean> {
    let q = this.db.updateTable('storage_objects').set({ object_lock: next }).where('id', '=', rowId);
    q = expected === null ? q.where('object_lock', 'is', null) : q.where('object_lock', '=', expected);
    return Number((await q.executeTakeFirst()).numUpdatedRows) > 0;
  }

  /**
   * A lifecycle transition: the version's class changes, its bytes and dates do not. Only while it
   * is the version read, dated as read: an overwrite in place since (a bucket without versioning)
   * keeps the row's id, and is not due. Resolves with whether it changed the row.
   */
  async updateStorageClass(
    row: Pick<ObjectRow, 'id' | 'last_modified'>,
    storageClass: string | null,
  ): Promise<boolean> {
    const r = await this.db
      .updateTable('storage_objects')
      .set({ storage_class: storageClass })
      .where('id', '=', row.id)
      .where('last_modified', '=', row.last_modified)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async updateAcl(rowId: string, acl: string | null): Promise<void> {
    await this.db.updateTable('storage_objects').set({ acl }).where('id', '=', rowId).execute();
  }

  async updateTags(rowId: string, tags: string): Promise<void> {
    await this.db.updateTable('storage_objects').set({ tags }).where('id', '=', rowId).execute();
  }

  // ---- listing -----------------------------------------------------------------------

  /** Current, non-deleted objects in key order from `from` (exclusive or inclusive), within `prefix`. */
  listCurrent(
    bucketId: string,
    prefix: string,
    from: { key: string; inclusive: boolean } | null,
    limit: number,
  ) {
    let q = this.db
      .selectFrom('storage_objects')
      .select([
        'key',
        'size',
        'etag',
        'last_modified',
        'is_delete_marker',
        'version_id',
        'checksum',
        'storage_class',
        'acl', // its owner, for ListObjects' Owner (an ObjectWriter bucket's objects are their writers')
      ])
      .where('bucket_id', '=', bucketId)
      .where(sql<boolean>`is_latest = 1`);
    q = withPrefix(q, prefix);
    if (from) q = q.where('key', from.inclusive ? '>=' : '>', from.key);
    return q.orderBy('key').limit(limit).execute();
  }

  /** Every version in (key asc, newest first) order, after the (key, id) position. */
  listVersions(
    bucketId: string,
    prefix: string,
    from: { key: string; inclusive: boolean; id?: string } | null,
    limit: number,
  ) {
    let q = this.db.selectFrom('storage_objects').selectAll().where('bucket_id', '=', bucketId);
    q = withPrefix(q, prefix);
    if (from) {
      const f = from;
      if (f.id !== undefined) {
        const id = f.id;
        q = q.where((eb) =>
          eb.or([eb('key', '>', f.key), eb.and([eb('key', '=', f.key), eb('id', '<', id)])]),
        );
      } else q = q.where('key', f.inclusive ? '>=' : '>', f.key);
    }
    return q.orderBy('key').orderBy('id', 'desc').limit(limit).execute();
  }

  // ---- stats and lifecycle -----------------------------------------------------------

  async usage(bucketId: string) {
    const row = await this.db
      .selectFrom('storage_usage')
      .select(['objects', 'bytes'])
      .where('bucket_id', '=', bucketId)
      .executeTakeFirst();
    return { objects: Number(row?.objects ?? 0), bytes: Number(row?.bytes ?? 0) };
  }

  /** Asked before every write that adds bytes (the plan's quota), so written as text. */
  async usageOfCustomer(customerId: string) {
    const { rows } = await runCompiled<{ objects: number; bytes: number }>(
      this.db,
      `SELECT COALESCE(SUM(objects), 0) AS objects, COALESCE(SUM(bytes), 0) AS bytes
        FROM storage_usage WHERE customer_id = ?`,
      [customerId],
    );
    return { objects: Number(rows[0]?.objects ?? 0), bytes: Number(rows[0]?.bytes ?? 0) };
  }

  async isEmpty(bucketId: string, db: Kysely<ObjectTables> = this.db): Promise<boolean> {
    const obj = await db
      .selectFrom('storage_objects')
      .select('id')
      .where('bucket_id', '=', bucketId)
      .limit(1)
      .executeTakeFirst();
    // Incomplete multipart uploads do not keep a bucket from being deleted (they go with it), as
    // on AWS: only objects, versions and delete markers do.
    return !obj;
  }

  /** In a unit: deletes every row of a bucket; returns the blobs to delete. */
  async purge(bucketId: string): Promise<Released> {
    const objects = await this.db
      .selectFrom('storage_objects')
      .select('blob')
      .where('bucket_id', '=', bucketId)
      .execute();
    const uploads = await this.db
      .selectFrom('storage_uploads')
      .select('upload_id')
      .where('bucket_id', '=', bucketId)
      .execute();
    const ids = uploads.map((u) => u.upload_id);
    const parts = ids.length
      ? await this.db
          .selectFrom('storage_upload_parts')
          .select('blob')
          .where('upload_id', 'in', ids)
          .execute()
      : [];
    if (ids.length) await this.db.deleteFrom('storage_upload_parts').where('upload_id', 'in', ids).execute();
    await this.db.deleteFrom('storage_uploads').where('bucket_id', '=', bucketId).execute();
    await this.db.deleteFrom('storage_objects').where('bucket_id', '=', bucketId).execute();
    await this.db.deleteFrom('storage_usage').where('bucket_id', '=', bucketId).execute();
    return [...objects, ...parts].flatMap(blobsOf);
  }

  /** Up to `limit` rows of a bucket matching a lifecycle rule's prefix, from the given id on. */
  /**
   * A page of a bucket's versions in key order (a key's versions oldest first), after `after`:
   * read along the (bucket, key, id) index, so each page costs its own rows however large the
   * bucket (in id order every page sorted the whole bucket).
   */
  lifecycleCandidates(
    bucketId: string,
    prefix: string,
    after: { key: string; id: string } | null,
    limit: number,
  ) {
    let q = this.db.selectFrom('storage_objects').selectAll().where('bucket_id', '=', bucketId);
    if (after)
      q = q.where((eb) =>
        eb.or([eb('key', '>', after.key), eb.and([eb('key', '=', after.key), eb('id', '>', after.id)])]),
      );
    q = withPrefix(q, prefix);
    return q.orderBy('key').orderBy('id').limit(limit).execute();
  }

  staleUploads(bucketId: string, prefix: string, initiatedBefore: number) {
    let q = this.db
      .selectFrom('storage_uploads')
      .select(['upload_id', 'key'])
      .where('bucket_id', '=', bucketId)
      .where('initiated_at', '<', initiatedBefore);
    q = withPrefix(q, prefix);
    return q.limit(1000).execute();
  }

  bucketsWithData(): Promise<{ bucket_id: string }[]> {
    return this.db
      .selectFrom('storage_objects')
      .select('bucket_id')
      .distinct()
      .union(this.db.selectFrom('storage_uploads').select('bucket_id').distinct())
      .execute();
  }
}

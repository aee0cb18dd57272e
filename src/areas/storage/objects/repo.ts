import { type Kysely, sql, type Transaction } from 'kysely';
import { newId } from '../../../kernel/ids.js';
import { GroupCommit } from '../../../kernel/store/group-commit.js';
import type { VersioningState } from '../data-plane-contract.js';
import { blobsOf, MultipartRepo, type Released, withPrefix } from './multipart-repo.js';
import type { ObjectRow, ObjectTables } from './tables.js';

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

/** A version waiting for its shared transaction; `out` is set once it is committed. */
interface PendingVersion {
  bucket: BucketRef;
  key: string;
  row: NewVersion;
  now: number;
  out?: { versionId: string; released: Released };
}

/** Usage changes of one transaction, applied once per bucket at its end. */
type UsageDeltas = Map<string, { bucket: BucketRef; objects: number; bytes: number }>;

/** Versions per shared transaction: enough for a burst of small PUTs, short enough to keep latency low. */
const VERSIONS_PER_COMMIT = 128;

export { afterPrefix } from './multipart-repo.js';
export const newVersionId = () => newId().replace(/-/g, '');

/**
 * The data plane's queries (with its base, `MultipartRepo`, the only place with them): object
 * versions, their listing, usage counters and lifecycle.
 */
export class ObjectRepo extends MultipartRepo {
  /**
   * New versions arriving together (concurrent PUTs, deletes that leave a marker) share one
   * transaction: on SQLite one commit writes the pages they share once, on PostgreSQL they pay
   * one commit round trip. Each still gets its own answer, and one that fails (its bucket was
   * deleted) is written again alone, so it cannot fail the others.
   */
  private readonly versionWrites = new GroupCommit<PendingVersion>(
    (items) => this.writeVersions(items),
    VERSIONS_PER_COMMIT,
  );

  /**
   * Every blob an object version or an uploaded part refers to, read in pages. Memory grows with
   * the number of blobs (about 60 bytes each): a daily sweep's price.
   */
  async referencedBlobs(): Promise<Set<string>> {
    const refs = new Set<string>();
    const add = (rows: { blob: string }[]) => {
      for (const row of rows) for (const part of blobsOf(row)) refs.add(part.ref);
    };
    let after = '';
    for (;;) {
      const page = await this.db
        .selectFrom('storage_objects')
        .select(['id', 'blob'])
        .where('id', '>', after)
        .orderBy('id')
        .limit(5000)
        .execute();
      add(page);
      if (page.length < 5000) break;
      after = page[page.length - 1]!.id;
    }
    add(await this.db.selectFrom('storage_upload_parts').select('blob').execute());
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

  private async adjustUsage(
    trx: Transaction<ObjectTables>,
    bucket: BucketRef,
    objects: number,
    bytes: number,
  ) {
    if (objects === 0 && bytes === 0) return;
    await trx
      .insertInto('storage_usage')
      .values({ bucket_id: bucket.id, customer_id: bucket.customerId, objects, bytes })
      .onConflict((oc) =>
        oc.column('bucket_id').doUpdateSet({
          objects: sql`storage_usage.objects + ${objects}`,
          bytes: sql`storage_usage.bytes + ${bytes}`,
        }),
      )
      .execute();
  }

  private static count(deltas: UsageDeltas, bucket: BucketRef, objects: number, bytes: number) {
    const d = deltas.get(bucket.id) ?? { bucket, objects: 0, bytes: 0 };
    d.objects += objects;
    d.bytes += bytes;
    deltas.set(bucket.id, d);
  }

  private async applyUsage(trx: Transaction<ObjectTables>, deltas: UsageDeltas) {
    for (const d of deltas.values()) await this.adjustUsage(trx, d.bucket, d.objects, d.bytes);
  }

  /** Removes one version row, counting it out; the blobs it named are returned for deletion. */
  private async removeRow(
    trx: Transaction<ObjectTables>,
    bucket: BucketRef,
    row: ObjectRow,
    deltas: UsageDeltas,
  ): Promise<Released> {
    // Only as read: a retention or legal hold placed since the caller checked the row keeps it.
    const lock = row.object_lock ?? null;
    const gone = await trx
      .deleteFrom('storage_objects')
      .where('id', '=', row.id)
      .where((eb) => (lock === null ? eb('object_lock', 'is', null) : eb('object_lock', '=', lock)))
      .executeTakeFirst();
    // A concurrent writer removed or locked it first (PostgreSQL, READ COMMITTED): nothing to count out.
    if (Number(gone.numDeletedRows) === 0 || row.is_delete_marker) return [];
    ObjectRepo.count(deltas, bucket, -1, -row.size);
    return blobsOf(row);
  }

  /**
   * Makes `v` the current version of `key` under the bucket's versioning state: Enabled keeps
   * the previous version as noncurrent; Unversioned and Suspended replace the `null` version.
   * Resolves once committed, in a transaction shared with the versions written at the same time.
   */
  async commitVersion(
    bucket: BucketRef,
    key: string,
    v: NewVersion,
    now: number,
  ): Promise<{ versionId: string; released: Released }> {
    const item: PendingVersion = { bucket, key, row: v, now };
    await this.versionWrites.submit([item]);
    return item.out!;
  }

  /** One transaction for many versions, in the order they came (two of one key: the later wins). */
  private async writeVersions(items: PendingVersion[]): Promise<void> {
    const outs = await this.tx((trx) => this.writeVersionsIn(trx, items));
    items.forEach((item, i) => {
      item.out = outs[i];
    });
  }

  /**
   * The versions of a batch as a handful of statements per bucket, whatever the batch's size (on
   * PostgreSQL each statement is a round trip): the `null` versions they replace are read at once,
   * removed at once, the keys' current versions made noncurrent at once, and the new rows inserted
   * in one statement. Within the batch, writes apply in order: of two writes of one key, the later
   * is current, and in a bucket without versioning it replaces the earlier before it is stored.
   */
  private async writeVersionsIn(
    trx: Transaction<ObjectTables>,
    items: PendingVersion[],
  ): Promise<{ versionId: string; released: Released }[]> {
    const byBucket = new Map<string, { bucket: BucketRef; keys: Set<string>; now: number }>();
    for (const it of items) {
      const b = byBucket.get(it.bucket.id) ?? { bucket: it.bucket, keys: new Set<string>(), now: it.now };
      b.keys.add(it.key);
      b.now = Math.min(b.now, it.now);
      byBucket.set(it.bucket.id, b);
    }
    // Every bucket's lock first, in one order, so two writers never wait on each other.
    const bucketIds = [...byBucket.keys()].sort();
    for (const id of bucketIds) await this.lockLiveBucket(trx, id);

    const slot = (bucketId: string, key: string) => `${bucketId}\n${key}`;
    // The stored `null` versions that writes to unversioned and suspended buckets replace.
    const stored = new Map<string, ObjectRow>();
    for (const id of bucketIds) {
      const b = byBucket.get(id)!;
      if (b.bucket.versioning === 'Enabled') continue;
      const found = await sql<ObjectRow>`SELECT * FROM storage_objects WHERE bucket_id = ${id}
        AND "key" IN (${sql.join([...b.keys])}) AND version_id = 'null'`.execute(trx);
      for (const row of found.rows) stored.set(slot(id, row.key), row);
    }

    const deltas: UsageDeltas = new Map();
    const out = items.map(() => ({ versionId: '', released: [] as Released }));
    const rows: (ObjectRow | null)[] = [];
    const last = new Map<string, number>();
    for (const [i, it] of items.entries()) last.set(slot(it.bucket.id, it.key), i);
    const nullWrittenBy = new Map<string, number>();
    const replaces: { row: ObjectRow; by: number }[] = [];
    for (const [i, it] of items.entries()) {
      const at = slot(it.bucket.id, it.key);
      const current = last.get(at) === i;
      let versionId = newVersionId();
      if (it.bucket.versioning !== 'Enabled') {
        versionId = 'null';
        const earlier = nullWrittenBy.get(at);
        if (earlier !== undefined) {
          // Written a moment ago in this batch: replaced before it is stored.
          const gone = rows[earlier]!;
          rows[earlier] = null;
          if (!gone.is_delete_marker) ObjectRepo.count(deltas, it.bucket, -1, -gone.size);
          out[i]!.released.push(...blobsOf(gone));
        } else {
          const old = stored.get(at);
          if (old) replaces.push({ row: old, by: i });
        }
        nullWrittenBy.set(at, i);
      }
      rows.push({
        ...it.row,
        id: newId(),
        bucket_id: it.bucket.id,
        key: it.key,
        version_id: versionId,
        is_latest: current ? 1 : 0,
        noncurrent_since: current ? null : it.now,
      });
      if (!it.row.is_delete_marker) ObjectRepo.count(deltas, it.bucket, 1, it.row.size);
      out[i]!.versionId = versionId;
    }

    // The replaced versions go (a lock placed on one since it was read keeps it: see removeRow).
    const unlocked = replaces.filter((r) => r.row.object_lock === null);
    if (unlocked.length > 0) {
      const gone = new Set(
        (
          await sql<{ id: string }>`DELETE FROM storage_objects
            WHERE id IN (${sql.join(unlocked.map((r) => r.row.id))}) AND object_lock IS NULL
            RETURNING id`.execute(trx)
        ).rows.map((r) => r.id),
      );
      for (const r of unlocked) {
        if (!gone.has(r.row.id) || r.row.is_delete_marker) continue;
        const bucket = items[r.by]!.bucket;
        ObjectRepo.count(deltas, bucket, -1, -r.row.size);
        out[r.by]!.released.push(...blobsOf(r.row));
      }
    }
    for (const r of replaces) {
      if (r.row.object_lock === null) continue;
      out[r.by]!.released.push(...(await this.removeRow(trx, items[r.by]!.bucket, r.row, deltas)));
    }

    for (const id of bucketIds) {
      const b = byBucket.get(id)!;
      await sql`UPDATE storage_objects SET is_latest = 0, noncurrent_since = ${b.now}
        WHERE bucket_id = ${id} AND "key" IN (${sql.join([...b.keys])}) AND is_latest = 1`.execute(trx);
    }
    const kept = rows.filter((r): r is ObjectRow => r !== null);
    await trx.insertInto('storage_objects').values(kept).execute();
    await this.applyUsage(trx, deltas);
    return out;
  }

  /** Deletes one version for good; when it was current, the newest remaining one becomes current. */
  async deleteVersion(bucket: BucketRef, row: ObjectRow): Promise<Released> {
    return this.tx(async (trx) => {
      const deltas: UsageDeltas = new Map();
      const released = await this.removeRow(trx, bucket, row, deltas);
      await this.applyUsage(trx, deltas);
      if (row.is_latest) {
        const next = await trx
          .selectFrom('storage_objects')
          .select('id')
          .where('bucket_id', '=', bucket.id)
          .where('key', '=', row.key)
          .orderBy('id', 'desc')
          .limit(1)
          .executeTakeFirst();
        if (next)
          await trx
            .updateTable('storage_objects')
            .set({ is_latest: 1, noncurrent_since: null })
            .where('id', '=', next.id)
            .execute();
      }
      return released;
    });
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
      .select(['key', 'size', 'etag', 'last_modified', 'is_delete_marker', 'version_id', 'checksum'])
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

  async usageOfCustomer(customerId: string) {
    const row = await this.db
      .selectFrom('storage_usage')
      .select([
        sql<number>`COALESCE(SUM(objects), 0)`.as('objects'),
        sql<number>`COALESCE(SUM(bytes), 0)`.as('bytes'),
      ])
      .where('customer_id', '=', customerId)
      .executeTakeFirst();
    return { objects: Number(row?.objects ?? 0), bytes: Number(row?.bytes ?? 0) };
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

  /** Deletes every row of a bucket in one transaction; returns the blobs to delete. */
  async purge(bucketId: string): Promise<Released> {
    return this.tx(async (trx) => {
      const objects = await trx
        .selectFrom('storage_objects')
        .select('blob')
        .where('bucket_id', '=', bucketId)
        .execute();
      const uploads = await trx
        .selectFrom('storage_uploads')
        .select('upload_id')
        .where('bucket_id', '=', bucketId)
        .execute();
      const ids = uploads.map((u) => u.upload_id);
      const parts = ids.length
        ? await trx.selectFrom('storage_upload_parts').select('blob').where('upload_id', 'in', ids).execute()
        : [];
      if (ids.length) await trx.deleteFrom('storage_upload_parts').where('upload_id', 'in', ids).execute();
      await trx.deleteFrom('storage_uploads').where('bucket_id', '=', bucketId).execute();
      await trx.deleteFrom('storage_objects').where('bucket_id', '=', bucketId).execute();
      await trx.deleteFrom('storage_usage').where('bucket_id', '=', bucketId).execute();
      return [...objects, ...parts].flatMap(blobsOf);
    });
  }

  /** Up to `limit` rows of a bucket matching a lifecycle rule's prefix, from the given id on. */
  lifecycleCandidates(bucketId: string, prefix: string, afterId: string, limit: number) {
    let q = this.db
      .selectFrom('storage_objects')
      .selectAll()
      .where('bucket_id', '=', bucketId)
      .where('id', '>', afterId);
    q = withPrefix(q, prefix);
    return q.orderBy('id').limit(limit).execute();
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

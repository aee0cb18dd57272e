// How object versions are written and counted inside a transaction: the batch write that
// concurrent PUTs share (ObjectWrites' group commit), removing one version, and the usage counters
// each changes, applied once per bucket. Split from repo.ts, which keeps the queries around them.

import { newId } from '../../../kernel/ids.js';
import {
  insertRows,
  type OnConflictUpdate,
  onPostgres,
  placeholders,
  runCompiled,
} from '../../../kernel/store/compiled.js';
import type { UnitDb } from '../../../kernel/store/unit-of-work.js';
import { blobsOf, type Released } from './multipart-repo.js';
import type { BucketRef, NewVersion } from './repo.js';
import { OBJECT_COLUMNS, type ObjectRow, type ObjectTables } from './tables.js';

export const newVersionId = () => newId().replace(/-/g, '');

/** A version waiting for its shared transaction; `out` is set once it is committed. */
export interface PendingVersion {
  bucket: BucketRef;
  key: string;
  row: NewVersion;
  now: number;
  out?: { versionId: string; released: Released };
}

/** Usage changes of one transaction, applied once per bucket at its end. */
export type UsageDeltas = Map<string, { bucket: BucketRef; objects: number; bytes: number }>;

async function adjustUsage(trx: UnitDb<ObjectTables>, bucket: BucketRef, objects: number, bytes: number) {
  if (objects === 0 && bytes === 0) return;
  await runCompiled(
    trx,
    `INSERT INTO storage_usage (bucket_id, customer_id, objects, bytes) VALUES (?, ?, ?, ?)
      ON CONFLICT (bucket_id) DO UPDATE SET objects = storage_usage.objects + excluded.objects,
        bytes = storage_usage.bytes + excluded.bytes`,
    [bucket.id, bucket.customerId, objects, bytes],
  );
}

export function countUsage(deltas: UsageDeltas, bucket: BucketRef, objects: number, bytes: number) {
  const d = deltas.get(bucket.id) ?? { bucket, objects: 0, bytes: 0 };
  d.objects += objects;
  d.bytes += bytes;
  deltas.set(bucket.id, d);
}

export async function applyUsage(trx: UnitDb<ObjectTables>, deltas: UsageDeltas) {
  for (const d of deltas.values()) await adjustUsage(trx, d.bucket, d.objects, d.bytes);
}

/** What replacing or removing a version needs to know of it. */
type ReplacedRow = Pick<ObjectRow, 'id' | 'key' | 'size' | 'is_delete_marker' | 'blob' | 'object_lock'>;

/**
 * Removes one version row, counting it out; the blobs it named are returned for deletion. With
 * `modifiedBy`, only while the row's last-modified time is no later (lifecycle expiry: an
 * overwrite in place since the rule matched the row keeps its id, and is not expired).
 */
export async function removeRow(
  trx: UnitDb<ObjectTables>,
  bucket: BucketRef,
  row: ReplacedRow,
  deltas: UsageDeltas,
  modifiedBy?: number,
): Promise<Released> {
  // Only as read: a retention or legal hold placed since the caller checked the row keeps it.
  const lock = row.object_lock ?? null;
  let remove = trx
    .deleteFrom('storage_objects')
    .where('id', '=', row.id)
    .where((eb) => (lock === null ? eb('object_lock', 'is', null) : eb('object_lock', '=', lock)));
  // A dated rule past its date expires whatever is there (`modifiedBy` is Infinity).
  if (modifiedBy !== undefined && Number.isFinite(modifiedBy))
    remove = remove.where('last_modified', '<=', modifiedBy);
  const gone = await remove.returning(['size', 'is_delete_marker', 'blob']).executeTakeFirst();
  // A concurrent writer removed or locked it first (PostgreSQL, READ COMMITTED): nothing to count
  // out. What is counted and released is the row as deleted, not as read: a key of a bucket
  // without versioning is overwritten in place (`overwritesInPlace`), keeping its row's id.
  if (!gone || gone.is_delete_marker) return [];
  countUsage(deltas, bucket, -1, -Number(gone.size));
  return blobsOf(gone);
}

/**
 * The stored row of a new version, written out field by field. On Node 20 an object spread plus
 * the placing fields (`{ ...version, id, bucket_id, … }`) costs about 10 µs for a row this wide,
 * a hundred times this literal: it showed as a tenth of a small PUT's commit.
 */
function storedRow(
  v: NewVersion,
  id: string,
  bucketId: string,
  key: string,
  versionId: string,
  isLatest: number,
  noncurrentSince: number | null,
): ObjectRow {
  return {
    id,
    bucket_id: bucketId,
    key,
    version_id: versionId,
    is_latest: isLatest,
    is_delete_marker: v.is_delete_marker,
    size: v.size,
    etag: v.etag,
    content_type: v.content_type,
    headers: v.headers,
    metadata: v.metadata,
    tags: v.tags,
    checksum: v.checksum,
    blob: v.blob,
    last_modified: v.last_modified,
    noncurrent_since: noncurrentSince,
    sse: v.sse,
    object_lock: v.object_lock,
    acl: v.acl,
    storage_class: v.storage_class,
  };
}

/** A batch's writes to one bucket. */
interface BucketWrites {
  bucket: BucketRef;
  keys: Set<string>;
  /** Keys whose write replaces the `null` version (the bucket's versioning is not Enabled). */
  nullKeys: Set<string>;
  suspended: boolean;
  /** Every write was made while the bucket had never had versioning. */
  unversioned: boolean;
  now: number;
}

const REPLACED_COLUMNS = 'id, "key", size, is_delete_marker, blob, object_lock';
const slot = (bucketId: string, key: string) => `${bucketId}\n${key}`;

/**
 * The stored versions of a never-versioned bucket's keys that its writes may rewrite in place, or
 * null when they must be replaced the general way. In place means one upsert for the batch
 * (`OVERWRITE`) and the row keeps its id, so no index changes: for a burst of small PUTs
 * overwriting keys, the statements and the pages a commit writes drop to about a third. SQLite
 * only, where the transaction is the one writer; on PostgreSQL another process could change the
 * rows between this read and the upsert.
 *
 * Code holding an id read before such an overwrite reaches the new content: a removal counts and
 * releases what it deleted (`removeRow`), lifecycle checks the last-modified time it read
 * (`removeRow`, `ObjectRepo.updateStorageClass`), the blob scans read parts first (`referencedBlobs`), and tags or an ACL set by id land on the new content, as if
 * they had come just after it.
 *
 * It holds when every version of the keys is a current, unlocked `null` version — always, for a
 * bucket that never had versioning. A write read as "never versioned" just as versioning was
 * enabled finds a versioned row here and takes the general way.
 */
async function overwritesInPlace(trx: UnitDb<ObjectTables>, b: BucketWrites): Promise<ReplacedRow[] | null> {
  if (!b.unversioned || onPostgres(trx)) return null;
  const rows = await runCompiled<ReplacedRow & Pick<ObjectRow, 'version_id' | 'is_latest'>>(
    trx,
    `SELECT ${REPLACED_COLUMNS}, version_id, is_latest FROM storage_objects
      WHERE bucket_id = ? AND "key" IN (${placeholders(b.nullKeys.size)})`,
    [b.bucket.id, ...b.nullKeys],
  );
  const simple = rows.rows.every(
    (r) => r.version_id === 'null' && Number(r.is_latest) === 1 && !r.object_lock,
  );
  return simple ? rows.rows : null;
}

/**
 * A new version overwriting the stored `null` version of its key, in place (`overwritesInPlace`).
 * Both are current (`is_latest` 1), and a column left out of the update keeps SQLite from
 * rewriting the indexes that name it: `is_latest` is the listing index's condition.
 */
const KEPT_IN_PLACE = new Set(['id', 'bucket_id', 'key', 'version_id', 'is_latest']);
const OVERWRITE: OnConflictUpdate = {
  target: ['bucket_id', 'key', 'version_id'],
  set: OBJECT_COLUMNS.filter((c) => !KEPT_IN_PLACE.has(c)),
};

/**
 * The versions of a batch as a handful of statements per bucket, whatever the batch's size (on
 * PostgreSQL each statement is a round trip): the `null` versions they replace are read at once,
 * removed at once, the keys' current versions made noncurrent at once, and the new rows inserted
 * in one statement. Within the batch, writes apply in order: of two writes of one key, the later
 * is current, and in a bucket without versioning it replaces the earlier before it is stored.
 * On SQLite a never-versioned bucket's keys are overwritten in place (`overwritesInPlace`).
 */
export async function writeVersionsIn(
  trx: UnitDb<ObjectTables>,
  items: PendingVersion[],
  lockLiveBucket: (bucketId: string) => Promise<string | null>,
): Promise<{ versionId: string; released: Released }[]> {
  const byBucket = new Map<string, BucketWrites>();
  for (const it of items) {
    const b = byBucket.get(it.bucket.id) ?? {
      bucket: it.bucket,
      keys: new Set<string>(),
      nullKeys: new Set<string>(),
      suspended: false,
      unversioned: true,
      now: it.now,
    };
    b.keys.add(it.key);
    // Each write's own versioning state: one read before versioning was enabled can share a batch
    // with one read after, whose key's `null` version must stay (noncurrent).
    if (it.bucket.versioning !== 'Enabled') b.nullKeys.add(it.key);
    if (it.bucket.versioning === 'Suspended') b.suspended = true;
    if (it.bucket.versioning !== 'Unversioned') b.unversioned = false;
    b.now = Math.min(b.now, it.now);
    byBucket.set(it.bucket.id, b);
  }
  // Every bucket's lock first, in one order, so two writers never wait on each other.
  const bucketIds = [...byBucket.keys()].sort();
  /** Buckets whose keys have no version but the `null` one being replaced: nothing to make noncurrent. */
  const onlyNull = new Set<string>();
  for (const id of bucketIds) {
    // Versioning is never turned off once on, so a bucket locked as never versioned holds no
    // other version of any key.
    if ((await lockLiveBucket(id)) === 'Unversioned') onlyNull.add(id);
  }

  // The stored `null` versions that writes to unversioned and suspended buckets replace: removed
  // at once, the statement returning what the accounting needs. A version with a retention or
  // legal hold is left by that statement and read instead (removeRow decides, as for one delete).
  const removed = new Map<string, ReplacedRow>();
  const locked = new Map<string, ReplacedRow>();
  /** Buckets whose new rows overwrite the stored ones in place (`overwritesInPlace`). */
  const inPlace = new Set<string>();
  for (const id of bucketIds) {
    const b = byBucket.get(id)!;
    const keys = [...b.nullKeys];
    if (keys.length === 0) continue;
    const current = await overwritesInPlace(trx, b);
    if (current) {
      inPlace.add(id);
      onlyNull.add(id);
      for (const row of current) removed.set(slot(id, row.key), row);
      continue;
    }
    const gone = await runCompiled<ReplacedRow>(
      trx,
      `DELETE FROM storage_objects WHERE bucket_id = ? AND "key" IN (${placeholders(keys.length)})
        AND version_id = 'null' AND object_lock IS NULL RETURNING ${REPLACED_COLUMNS}`,
      [id, ...keys],
    );
    for (const row of gone.rows) removed.set(slot(id, row.key), row);
    // Object lock needs versioning from the bucket's creation on, so a bucket that never had it
    // holds no locked version: new keys there cost the one statement.
    const rest = b.suspended ? keys.filter((k) => !removed.has(slot(id, k))) : [];
    if (rest.length === 0) continue;
    const kept = await runCompiled<ReplacedRow>(
      trx,
      `SELECT ${REPLACED_COLUMNS} FROM storage_objects
        WHERE bucket_id = ? AND "key" IN (${placeholders(rest.length)}) AND version_id = 'null'`,
      [id, ...rest],
    );
    for (const row of kept.rows) locked.set(slot(id, row.key), row);
  }

  const deltas: UsageDeltas = new Map();
  const out = items.map(() => ({ versionId: '', released: [] as Released }));
  const rows: (ObjectRow | null)[] = [];
  const last = new Map<string, number>();
  for (const [i, it] of items.entries()) last.set(slot(it.bucket.id, it.key), i);
  const nullWrittenBy = new Map<string, number>();
  const replaces: { row: ReplacedRow; by: number }[] = [];
  for (const [i, it] of items.entries()) {
    const at = slot(it.bucket.id, it.key);
    const current = last.get(at) === i;
    let versionId = 'null';
    if (it.bucket.versioning === 'Enabled') versionId = newVersionId();
    else {
      const earlier = nullWrittenBy.get(at);
      if (earlier !== undefined) {
        // Written a moment ago in this batch: replaced before it is stored.
        const gone = rows[earlier]!;
        rows[earlier] = null;
        if (!gone.is_delete_marker) countUsage(deltas, it.bucket, -1, -gone.size);
        out[i]!.released.push(...blobsOf(gone));
      } else {
        const gone = removed.get(at);
        if (gone) {
          if (!gone.is_delete_marker) countUsage(deltas, it.bucket, -1, -gone.size);
          out[i]!.released.push(...blobsOf(gone));
        }
        const kept = locked.get(at);
        if (kept) replaces.push({ row: kept, by: i });
      }
      nullWrittenBy.set(at, i);
    }
    rows.push(
      storedRow(it.row, newId(), it.bucket.id, it.key, versionId, current ? 1 : 0, current ? null : it.now),
    );
    if (!it.row.is_delete_marker) countUsage(deltas, it.bucket, 1, it.row.size);
    out[i]!.versionId = versionId;
  }

  // Replaced versions with a retention or legal hold (their lock was checked before the write).
  for (const r of replaces)
    out[r.by]!.released.push(...(await removeRow(trx, items[r.by]!.bucket, r.row, deltas)));

  for (const id of bucketIds) {
    if (onlyNull.has(id)) continue;
    const b = byBucket.get(id)!;
    await runCompiled(
      trx,
      `UPDATE storage_objects SET is_latest = 0, noncurrent_since = ?
        WHERE bucket_id = ? AND "key" IN (${placeholders(b.keys.size)}) AND is_latest = 1`,
      [b.now, id, ...b.keys],
    );
  }
  const inserted: ObjectRow[] = [];
  const overwriting: ObjectRow[] = [];
  for (const row of rows) if (row) (inPlace.has(row.bucket_id) ? overwriting : inserted).push(row);
  if (inserted.length > 0) await insertRows(trx, 'storage_objects', OBJECT_COLUMNS, inserted);
  if (overwriting.length > 0)
    await insertRows(trx, 'storage_objects', OBJECT_COLUMNS, overwriting, OVERWRITE);
  await applyUsage(trx, deltas);
  return out;
}

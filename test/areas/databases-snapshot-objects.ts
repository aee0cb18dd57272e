import { sql } from 'kysely';
import { blobOnDisk } from '../helpers/blob-on-disk.js';
import type { TestFjord } from '../helpers/fjord.js';

/**
 * Where a snapshot's dump lives: its object row in the data plane's internal bucket and, on the
 * `fs` blob store, its bytes on disk (a file of its own, or a stretch of a pack file).
 */
export async function snapshotObject(t: TestFjord, snapshotId: string) {
  const db = t.kernel.store.db;
  const snap = await sql<{ storage_key: string }>`
    SELECT storage_key FROM database_snapshots WHERE id = ${snapshotId}`.execute(db);
  const key = snap.rows[0]?.storage_key;
  if (!key) throw new Error(`no snapshot ${snapshotId}`);
  const obj = await sql<{ bucket_id: string; key: string; size: number | string; blob: string }>`
    SELECT bucket_id, key, size, blob FROM storage_objects WHERE key = ${key}`.execute(db);
  const row = obj.rows[0];
  if (!row) throw new Error(`snapshot ${snapshotId} has no object ${key}`);
  const parts = JSON.parse(row.blob) as { ref: string }[];
  const ref = parts[0]?.ref;
  const blob = ref ? blobOnDisk(t.kernel.config.dataDir, ref) : null;
  return {
    ...row,
    blobPath: blob?.path ?? null,
    blobBytes: blob?.read() ?? Buffer.alloc(0),
    writeBlob: (bytes: Buffer) => blob?.write(bytes),
  };
}

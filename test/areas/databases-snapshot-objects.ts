import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { TestFjord } from '../helpers/fjord.js';

/**
 * Where a snapshot's dump lives: its object row in the data plane's internal bucket and, on the
 * `fs` blob store, the file behind it (`<data dir>/objects/<last two of ref>/<ref>`).
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
  const blobPath = ref ? join(t.kernel.config.dataDir, 'objects', ref.slice(-2), ref) : null;
  const blobBytes = blobPath && existsSync(blobPath) ? readFileSync(blobPath) : Buffer.alloc(0);
  return { ...row, blobPath, blobBytes };
}

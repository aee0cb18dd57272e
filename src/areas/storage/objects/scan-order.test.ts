import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { type Harness, startHarness } from '../s3/testing/harness.js';
import { PackRefsRepo } from './pack-refs-repo.js';

/**
 * The scans that decide which blobs are still named (the orphan sweep, pack compaction) read the
 * uploaded parts before paging through the object versions: completing an upload moves its parts'
 * blobs to a version, and an overwrite in place keeps that version's id, possibly one the scan
 * has already paged past. Parts first, each blob is seen where it was or where it went.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

function tablesRead(db: { selectFrom: (table: never) => unknown }): string[] {
  const read: string[] = [];
  const original = db.selectFrom.bind(db);
  vi.spyOn(db, 'selectFrom').mockImplementation(((table: string) => {
    read.push(table);
    return original(table as never);
  }) as never);
  return read;
}

it('the orphan sweep reads the parts before the object versions', async () => {
  const repo = h.plane.env.objects.repo;
  const read = tablesRead(repo.db as never);
  await repo.referencedBlobs();
  vi.restoreAllMocks();
  expect(read.indexOf('storage_upload_parts')).toBeGreaterThanOrEqual(0);
  expect(read.indexOf('storage_upload_parts')).toBeLessThan(read.indexOf('storage_objects'));
});

it('pack compaction reads the parts before the object versions', async () => {
  const db = h.store.typed();
  const read = tablesRead(db as never);
  for await (const _ of new PackRefsRepo(db as never).rows()) void _;
  vi.restoreAllMocks();
  expect(read.indexOf('storage_upload_parts')).toBeGreaterThanOrEqual(0);
  expect(read.indexOf('storage_upload_parts')).toBeLessThan(read.indexOf('storage_objects'));
});

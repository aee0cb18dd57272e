import { readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { StorageService } from '../../src/areas/storage/service.js';
import { TestFjord } from '../helpers/fjord.js';

/**
 * Blobs a crash leaves behind (written but never committed, or their row dropped first) are
 * found by the daily `storage.blobs.sweep` job and removed — only once they are an hour old, and
 * never one an object still refers to.
 */
let t: TestFjord;
beforeAll(async () => {
  t = await TestFjord.create();
});
afterAll(() => t.close());

/** Blob files and pack files (small objects share packs). */
const blobFiles = (root: string) =>
  readdirSync(root).flatMap((dir) =>
    /^([0-9a-f]{2}|packs)$/.test(dir)
      ? readdirSync(join(root, dir)).map((name) => join(root, dir, name))
      : [],
  );

it('removes hour-old blobs no object refers to, and keeps the rest', async () => {
  const storage = t.fjord.areas.get('storage')!.service as StorageService;
  const bucket = storage.internalBucket('sweep-test');
  await bucket.put('kept.txt', Readable.from([Buffer.from('still referenced')]), 'text/plain');
  const root = join(t.kernel.config.dataDir, 'objects');
  const [kept] = blobFiles(root);
  expect(kept).toBeDefined();
  // Two strays, as a crash between writing a blob and committing its row leaves them.
  const old = join(root, 'ab', '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f40ab');
  const fresh = join(root, 'cd', '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f40cd');
  writeFileSync(old, 'left by a crash');
  writeFileSync(fresh, 'an upload being committed right now');
  const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
  for (const file of [kept!, old]) utimesSync(file, twoHoursAgo, twoHoursAgo);

  await t.kernel.jobs.enqueue('storage.blobs.sweep', {});
  await t.kernel.jobs.drain();

  const left = blobFiles(root);
  expect(left).not.toContain(old);
  expect(left).toContain(fresh);
  expect(left).toContain(kept);
  expect((await (await bucket.get('kept.txt')).toArray()).join('')).toBe('still referenced');
});

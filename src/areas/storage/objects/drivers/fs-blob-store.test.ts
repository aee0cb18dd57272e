import { existsSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { FsBlobStore } from './fs-blob-store.js';

it('sweeps temp files a crash left behind at first use, and keeps ones still being written', async () => {
  const root = mkdtempSync(join(tmpdir(), 'fjord-blobs-'));
  mkdirSync(join(root, 'tmp'));
  const stale = join(root, 'tmp', 'left-by-a-crash');
  const fresh = join(root, 'tmp', 'an-upload-in-flight');
  writeFileSync(stale, 'x'.repeat(1000));
  writeFileSync(fresh, 'y');
  const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
  utimesSync(stale, twoHoursAgo, twoHoursAgo);
  const blobs = new FsBlobStore(root, false);
  const ref = await blobs.put(
    (async function* () {
      yield Buffer.from('hello');
    })(),
    5,
    () => {},
  );
  expect(existsSync(stale)).toBe(false);
  expect(existsSync(fresh)).toBe(true);
  expect((await blobs.readAll(ref)).toString()).toBe('hello');
});

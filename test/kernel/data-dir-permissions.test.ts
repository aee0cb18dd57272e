import { chmodSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { TestFjord } from '../helpers/fjord.js';

/**
 * Nothing in the data dir is readable by other local users: the store, object blobs, keys and
 * the development credentials are the owner's alone, and entries an older Fjord left readable
 * are fixed at start.
 */
it('creates the data dir and everything in it owner-only, and fixes older entries at start', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-perms-'));
  chmodSync(dir, 0o755);
  // What an older Fjord (or a copy with another umask) may have left.
  mkdirSync(join(dir, 'old-folder'), { mode: 0o755 });
  chmodSync(join(dir, 'old-folder'), 0o755);
  writeFileSync(join(dir, 'old-file'), 'secret', { mode: 0o644 });
  chmodSync(join(dir, 'old-file'), 0o644);
  const t = await TestFjord.create({
    FJORD_DATA_DIR: dir,
    FJORD_STORE_URL: '',
    FJORD_DEV_CREDENTIALS: 'true',
  });
  try {
    const c = await t.customer();
    const bucket = await t.request('POST', '/v1/storage/buckets', {
      key: c.pat,
      body: { bucket_name: `perm-${Date.now().toString(36)}` },
    });
    expect(bucket.status).toBe(201);
    const loose: string[] = [];
    const walk = (path: string) => {
      const st = statSync(path);
      // Folders may keep o+x (traversal, for the embedded PostgreSQL); nothing may be readable or writable.
      if ((st.mode & 0o066) !== 0) loose.push(`${path} ${(st.mode & 0o777).toString(8)}`);
      if (st.isDirectory()) for (const e of readdirSync(path)) walk(join(path, e));
    };
    walk(dir);
    expect(loose).toEqual([]);
    expect(t.logs.some((l) => l.includes('readable by others; fixed'))).toBe(true);
  } finally {
    await t.close();
  }
});

/**
 * The S3 data plane alone (fs driver, SQLite in a temp dir), for bench/s3.bench.ts: prints
 * `READY <endpoint>` and serves until killed. With `--keys N` it first fills bucket `list`
 * with N keys straight through the store (a listing benchmark needs no 100k PUTs).
 */

import { sql } from 'kysely';
import { startHarness } from '../src/areas/storage/s3/testing/harness.js';
import { newId } from '../src/kernel/ids.js';

const keysArg = process.argv.indexOf('--keys');
const fill = keysArg > 0 ? Number(process.argv[keysArg + 1]) : 0;
const h = await startHarness(process.argv.includes('--no-fsync') ? { FJORD_S3_FSYNC: 'false' } : {});
h.directory.addBucket({ name: 'bench', customerId: 'c1' });
h.directory.addBucket({ name: 'list', customerId: 'c1' });
// Each bucket's row, as Fjord's control plane keeps it: writes lock it and read its versioning.
for (const id of ['b-bench', 'b-list'])
  await sql`INSERT INTO storage_buckets (id, updated_at, deleted_at, versioning) VALUES (${id}, 0, NULL, 'Unversioned')`.execute(
    h.store.db,
  );
h.directory.addKey({ accessKeyId: 'AKBENCH', customerId: 'c1', grants: [{ bucket: '*', actions: 'all' }] });
if (fill > 0) {
  const db = h.store.db;
  const now = Date.now();
  for (let i = 0; i < fill; i += 1000) {
    const rows = [];
    for (let j = i; j < Math.min(fill, i + 1000); j++) {
      const key = `dir${String(j % 100).padStart(3, '0')}/file-${String(j).padStart(7, '0')}.txt`;
      rows.push({
        id: newId(),
        bucket_id: 'b-list',
        key,
        version_id: 'null',
        is_latest: 1,
        is_delete_marker: 0,
        size: 4,
        etag: 'd41d8cd98f00b204e9800998ecf8427e',
        content_type: 'text/plain',
        headers: '{}',
        metadata: '{}',
        tags: '{}',
        checksum: null,
        blob: '[]',
        last_modified: now,
        noncurrent_since: null,
      });
    }
    await db.insertInto('storage_objects').values(rows).execute();
  }
}
process.stdout.write(`READY ${h.endpoint}\n`);
process.on('SIGTERM', () => void h.close().then(() => process.exit(0)));

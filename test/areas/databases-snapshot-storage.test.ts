import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabasesService } from '../../src/areas/databases/service.js';
import { TestFjord } from '../helpers/fjord.js';
import { createDb, dbCustomer } from './databases-fixtures.js';
import { snapshotObject } from './databases-snapshot-objects.js';

/**
 * Snapshots live in Fjord's object storage: objects of the data plane in a bucket no customer
 * can name, on whichever blob store the deployment uses (files, or an upstream S3 store).
 */
let t: TestFjord;
beforeAll(async () => {
  t = await TestFjord.create();
});
afterAll(async () => {
  await t?.close();
});

/** The simulated engine keeps each database as the text of its dump. */
async function simulated(on = t) {
  const service = on.fjord.areas.get('databases')!.service as DatabasesService;
  return (await service.driver('postgresql')) as unknown as { databases: Map<string, { body: string }> };
}
async function fill(db: string, text: string, on = t) {
  (await simulated(on)).databases.get(db)!.body = text;
}
const body = async (db: string, on = t) => (await simulated(on)).databases.get(db)!.body;

describe('snapshots in object storage', () => {
  it('writes each dump as an object of the internal bucket, counted there and not in the customer’s usage', async () => {
    const c = await dbCustomer(t);
    const d = await createDb(t, c, 'postgresql', 'objs');
    // Over 128 KiB gzipped, so the dump gets a file of its own (small blobs share pack files).
    const filler = randomBytes(200_000).toString('base64');
    await fill(d.technical_name, `CREATE TABLE t (v text);\n-- ${filler}\n`);
    const base = `/v1/databases/postgresql/${d.technical_name}`;
    const snap = await t.request('POST', `${base}/snapshots`, { key: c.key, body: { name: 'one' } });
    expect(snap.status, snap.text).toBe(201);
    const obj = await snapshotObject(t, snap.body.snapshot_id);
    expect(obj.key).toMatch(new RegExp(`^${c.id}/[^/]+/${snap.body.snapshot_id}\\.sql\\.gz$`));
    expect(Number(obj.size)).toBe(snap.body.size_bytes);
    expect(obj.blobBytes.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b])); // gzip
    expect(obj.bucket_id).toBe('fjord-internal:database-snapshots');
    const account = await t.request('GET', '/v1/storage/buckets', { key: c.pat });
    expect(account.status).toBe(200);
    expect(account.body.buckets ?? account.body).toEqual([]);

    const del = await t.request('DELETE', `${base}/snapshots/${snap.body.snapshot_id}`, { key: c.key });
    expect(del.status).toBe(200);
    const rows = await sql`SELECT 1 FROM storage_objects WHERE key = ${obj.key}`.execute(t.kernel.store.db);
    expect(rows.rows).toEqual([]);
    // The blob goes right after the commit that stopped naming it (not inside it).
    await vi.waitFor(() => expect(existsSync(obj.blobPath!)).toBe(false), { timeout: 10_000 });
  });

  it('restores from the object, and deleting the database deletes its snapshots’ objects', async () => {
    const c = await dbCustomer(t);
    const d = await createDb(t, c, 'postgresql', 'roundtrip');
    await fill(d.technical_name, 'INSERT INTO t VALUES (1);\n');
    const base = `/v1/databases/postgresql/${d.technical_name}`;
    const snap = await t.request('POST', `${base}/snapshots`, { key: c.key, body: {} });
    await fill(d.technical_name, 'changed');
    const r = await t.request('POST', `${base}/restore`, {
      key: c.key,
      body: { snapshot_id: snap.body.snapshot_id },
    });
    expect(r.status, r.text).toBe(200);
    expect(await body(d.technical_name)).toBe('INSERT INTO t VALUES (1);\n');
    const obj = await snapshotObject(t, snap.body.snapshot_id);
    const gone = await t.request('DELETE', `/v1/databases/postgresql/${d.technical_name}`, { key: c.key });
    expect(gone.status, gone.text).toBe(200);
    const rows = await sql`SELECT 1 FROM storage_objects WHERE key = ${obj.key}`.execute(t.kernel.store.db);
    expect(rows.rows).toEqual([]);
  });

  it('still restores and deletes a snapshot taken before snapshots moved into object storage', async () => {
    const c = await dbCustomer(t);
    const d = await createDb(t, c, 'postgresql', 'legacy');
    const base = `/v1/databases/postgresql/${d.technical_name}`;
    const snap = await t.request('POST', `${base}/snapshots`, { key: c.key, body: {} });
    // Turn it into what an older Fjord left behind: a file in the data dir, store = 'fs'.
    const obj = await snapshotObject(t, snap.body.snapshot_id);
    const file = join(t.kernel.config.dataDir, 'databases', 'snapshots', obj.key);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, gzipSync('-- simulated postgresql dump\nfrom the old file store\n'));
    const size = readFileSync(file).length;
    await sql`DELETE FROM storage_objects WHERE key = ${obj.key}`.execute(t.kernel.store.db);
    await sql`UPDATE database_snapshots SET store = 'fs', size_bytes = ${size} WHERE id = ${snap.body.snapshot_id}`.execute(
      t.kernel.store.db,
    );
    const r = await t.request('POST', `${base}/restore`, {
      key: c.key,
      body: { snapshot_id: snap.body.snapshot_id },
    });
    expect(r.status, r.text).toBe(200);
    expect(await body(d.technical_name)).toBe('from the old file store\n');
    const del = await t.request('DELETE', `${base}/snapshots/${snap.body.snapshot_id}`, { key: c.key });
    expect(del.status).toBe(200);
    expect(existsSync(file)).toBe(false);
  });
});

describe('on an upstream S3 store (FJORD_S3_DRIVER=s3)', () => {
  let upstream: TestFjord;
  let front: TestFjord;
  let s3: S3Client;
  let upstreamEnv: Record<string, string>;
  beforeAll(async () => {
    upstream = await TestFjord.create({ FJORD_S3_PORT: '0' });
    await upstream.fjord.start(['s3']);
    const owner = await upstream.customer();
    const bucket = await upstream.request('POST', '/v1/storage/buckets', {
      key: owner.pat,
      body: { bucket_name: `fjord-blobs-${Date.now()}` },
    });
    expect(bucket.status, bucket.text).toBe(201);
    const endpoint = bucket.body.endpoint as string;
    upstreamEnv = {
      FJORD_S3_DRIVER: 's3',
      FJORD_S3_UPSTREAM_ENDPOINT: endpoint,
      FJORD_S3_UPSTREAM_BUCKET: bucket.body.bucket_name,
      FJORD_S3_UPSTREAM_REGION: 'eu-north-1',
      FJORD_S3_UPSTREAM_ACCESS_KEY_ID: bucket.body.access_key,
      FJORD_S3_UPSTREAM_SECRET_ACCESS_KEY: bucket.body.secret_key,
      FJORD_S3_UPSTREAM_PREFIX: 'blobs/',
    };
    front = await TestFjord.create(upstreamEnv);
    s3 = new S3Client({
      endpoint,
      region: 'eu-north-1',
      forcePathStyle: true,
      credentials: { accessKeyId: bucket.body.access_key, secretAccessKey: bucket.body.secret_key },
    });
    (s3 as unknown as { bucket: string }).bucket = bucket.body.bucket_name;
  });
  afterAll(async () => {
    await front?.close();
    await upstream?.close();
  });

  it('stores the dump upstream and restores it from there', async () => {
    const bucketName = (s3 as unknown as { bucket: string }).bucket;
    const listed = async () =>
      (await s3.send(new ListObjectsV2Command({ Bucket: bucketName }))).Contents?.map((o) => o.Size) ?? [];
    const c = await dbCustomer(front);
    const d = await createDb(front, c, 'postgresql', 'upstream');
    const base = `/v1/databases/postgresql/${d.technical_name}`;
    await fill(d.technical_name, 'kept upstream\n', front);
    const snap = await front.request('POST', `${base}/snapshots`, { key: c.key, body: {} });
    expect(snap.status, front.logs.join('')).toBe(201);
    expect(await listed()).toEqual([snap.body.size_bytes]);
    const r = await front.request('POST', `${base}/restore`, {
      key: c.key,
      body: { snapshot_id: snap.body.snapshot_id },
    });
    expect(r.status, r.text).toBe(200);
    expect(await body(d.technical_name, front)).toBe('kept upstream\n');
    await front.request('DELETE', `${base}/snapshots/${snap.body.snapshot_id}`, { key: c.key });
    // The upstream blob goes after the delete has answered: give a busy machine time.
    await vi.waitFor(async () => expect(await listed()).toEqual([]), { timeout: 15_000 });
  });

  it('answers 503 and keeps nothing when object storage refuses the dump', async () => {
    const broken = await TestFjord.create({
      ...upstreamEnv,
      FJORD_S3_UPSTREAM_SECRET_ACCESS_KEY: 'not-the-secret',
    });
    try {
      const c = await dbCustomer(broken);
      const d = await createDb(broken, c, 'postgresql', 'refused');
      const base = `/v1/databases/postgresql/${d.technical_name}`;
      const snap = await broken.request('POST', `${base}/snapshots`, { key: c.key, body: {} });
      expect(snap.status, snap.text).toBe(503);
      expect(snap.body.detail.code).toBe('snapshot_storage_unavailable');
      expect(snap.text).not.toContain('SignatureDoesNotMatch'); // the upstream's words stay in the log
      expect(broken.logs.join('')).toContain('SignatureDoesNotMatch');
      const list = await broken.request('GET', `${base}/snapshots`, { key: c.key });
      expect(list.body.snapshots).toMatchObject([{ status: 'failed' }]);
    } finally {
      await broken.close();
    }
  });
});

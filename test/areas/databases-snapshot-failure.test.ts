import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it, onTestFinished, vi } from 'vitest';
import type { DatabasesService } from '../../src/areas/databases/service.js';
import { TestFjord } from '../helpers/fjord.js';
import { dbCustomer } from './databases-fixtures.js';

let t: TestFjord;
beforeAll(async () => {
  t = await TestFjord.create({ FJORD_DATABASE_ENGINES: 'simulated' });
});
afterAll(async () => {
  await t?.close();
});

it('a dump that fails halfway leaves a failed snapshot and no file', async () => {
  const c = await dbCustomer(t);
  const r = await t.request('POST', '/v1/databases', {
    key: c.key,
    body: { db_type: 'postgresql', db_name: 'f' },
  });
  expect(r.status).toBe(201);
  const service = t.fjord.areas.get('databases')!.service as DatabasesService;
  const driver = await service.driver('postgresql');
  const dump = driver.dump.bind(driver);
  onTestFinished(() => {
    driver.dump = dump;
  });
  driver.dump = async (_db, out: Writable) => {
    out.write('-- part of a dump\n'.repeat(1000));
    await new Promise((res) => setTimeout(res, 20));
    throw new Error('pg_dump exited 1: connection lost');
  };
  const base = `/v1/databases/postgresql/${r.body.technical_name}`;
  const snap = await t.request('POST', `${base}/snapshots`, { key: c.key, body: { name: 'broken' } });
  expect(snap.status).toBe(502);
  expect(snap.body.detail.code).toBe('database_server_error');
  const list = await t.request('GET', `${base}/snapshots`, { key: c.key });
  expect(list.body.snapshots).toMatchObject([{ name: 'broken', status: 'failed' }]);
  await new Promise((res) => setTimeout(res, 50));
  // Nothing committed in object storage, and no blob left behind (temp files included). Polled
  // after that pause: a loaded machine may take longer than it to remove a temp file.
  await vi.waitFor(
    async () => {
      const rows =
        await sql`SELECT key FROM storage_objects WHERE bucket_id = 'fjord-internal:database-snapshots'`.execute(
          t.kernel.store.db,
        );
      expect(rows.rows).toEqual([]);
      const dir = join(t.kernel.config.dataDir, 'objects');
      const files = existsSync(dir)
        ? readdirSync(dir, { recursive: true, withFileTypes: true }).filter((f) => f.isFile())
        : [];
      expect(files.map((f) => f.name)).toEqual([]);
    },
    { timeout: 10_000 },
  );
});

it('gives the plan’s last snapshot place to one of two requests at once, and failed snapshots take none', async () => {
  const c = await dbCustomer(t, 'free'); // 5 manual snapshots per database
  const r = await t.request('POST', '/v1/databases', {
    key: c.key,
    body: { db_type: 'mariadb', db_name: 'race' },
  });
  const base = `/v1/databases/mariadb/${r.body.technical_name}`;
  const service = t.fjord.areas.get('databases')!.service as DatabasesService;
  const driver = await service.driver('mariadb');
  const dump = driver.dump.bind(driver);
  onTestFinished(() => {
    driver.dump = dump;
  });
  driver.dump = async () => {
    throw new Error('mariadb-dump exited 2');
  };
  const failed = await t.request('POST', `${base}/snapshots`, { key: c.key, body: {} });
  expect(failed.status).toBe(502);
  driver.dump = dump;
  const answers = await Promise.all(
    Array.from({ length: 8 }, () => t.request('POST', `${base}/snapshots`, { key: c.key, body: {} })),
  );
  expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 201, 201, 201, 409, 409, 409]);
  const list = await t.request('GET', `${base}/snapshots`, { key: c.key });
  expect(list.body.snapshots.filter((s: { status: string }) => s.status === 'available')).toHaveLength(5);
});

it('marks failed a snapshot whose taking process stopped beating', async () => {
  const c = await dbCustomer(t);
  const r = await t.request('POST', '/v1/databases', {
    key: c.key,
    body: { db_type: 'postgresql', db_name: 'crashed' },
  });
  const base = `/v1/databases/postgresql/${r.body.technical_name}`;
  const snap = await t.request('POST', `${base}/snapshots`, { key: c.key, body: {} });
  // What a process killed in the middle of a dump leaves behind: `creating`, beats stopped.
  await sql`UPDATE database_snapshots SET status = 'creating', completed_at = NULL,
    heartbeat_at = ${Date.now() - 6 * 60_000} WHERE id = ${snap.body.snapshot_id}`.execute(t.kernel.store.db);
  const fresh = await t.request('POST', `${base}/snapshots`, { key: c.key, body: {} });
  await sql`UPDATE database_snapshots SET status = 'creating', heartbeat_at = ${Date.now()}
    WHERE id = ${fresh.body.snapshot_id}`.execute(t.kernel.store.db);
  await t.advance(300);
  await vi.waitFor(
    async () => {
      const list = await t.request('GET', `${base}/snapshots`, { key: c.key });
      expect(list.body.snapshots.map((s: { status: string }) => s.status)).toEqual(['failed', 'creating']);
    },
    { timeout: 10_000 },
  );
});

it('keeps manual and automatic snapshots together within the plan’s count', async () => {
  const c = await dbCustomer(t, 'free'); // 5 snapshots per database
  const r = await t.request('POST', '/v1/databases', {
    key: c.key,
    body: { db_type: 'mariadb', db_name: 'mixed' },
  });
  const base = `/v1/databases/mariadb/${r.body.technical_name}`;
  for (let i = 0; i < 3; i++)
    expect((await t.request('POST', `${base}/snapshots`, { key: c.key, body: {} })).status).toBe(201);
  const put = await t.request('PUT', `${base}/backup-policy`, {
    key: c.key,
    body: { enabled: true, frequency: 'hourly', retention_count: 5 },
  });
  expect(put.status).toBe(200);
  for (let i = 0; i < 4; i++) await t.advance(3600);
  const list = await t.request('GET', `${base}/snapshots`, { key: c.key });
  const kinds = list.body.snapshots.map((s: { kind: string }) => s.kind);
  expect(kinds.filter((k: string) => k === 'automatic')).toHaveLength(2);
  expect(list.body).toMatchObject({ total: 5, max_snapshots: 5 });
  // Full: a manual snapshot now waits for a place, automatic ones included.
  const sixth = await t.request('POST', `${base}/snapshots`, { key: c.key, body: {} });
  expect(sixth.status).toBe(409);
});

it('a restore into the database itself that fails halfway leaves the database as it was', async () => {
  const c = await dbCustomer(t);
  const r = await t.request('POST', '/v1/databases', {
    key: c.key,
    body: { db_type: 'postgresql', db_name: 'keep' },
  });
  expect(r.status).toBe(201);
  const base = `/v1/databases/postgresql/${r.body.technical_name}`;
  const snap = await t.request('POST', `${base}/snapshots`, { key: c.key, body: { name: 'before' } });
  expect(snap.status, snap.text).toBe(201);
  const service = t.fjord.areas.get('databases')!.service as DatabasesService;
  const driver = await service.driver('postgresql');
  // What the database holds now, written after the snapshot (the simulated engine keeps a text body).
  const store = (driver as unknown as { databases: Map<string, { body: string }> }).databases;
  store.get(r.body.technical_name)!.body = 'rows written after the snapshot';
  const restore = driver.restore.bind(driver);
  onTestFinished(() => {
    driver.restore = restore;
  });
  driver.restore = async (db) => {
    store.get(db.name)!.body = 'half a replay';
    throw new Error('psql exited 3: ERROR: out of disk space');
  };
  const res = await t.request('POST', `${base}/restore`, {
    key: c.key,
    body: { snapshot_id: snap.body.snapshot_id },
  });
  expect(res.status).toBe(502);
  expect(store.get(r.body.technical_name)!.body).toBe('rows written after the snapshot');
  // No staging copy is left behind.
  expect([...store.keys()].filter((n) => n.endsWith('_restore'))).toEqual([]);
});

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readTar } from '../../src/areas/vps/drivers/tar.js';
import { blobOnDisk } from '../helpers/blob-on-disk.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

/**
 * Backups of virtual servers (simulated driver): real tar.gz archives of the simulated disk in
 * object storage, restore into the same server, signed download links, the policy on the
 * clock with retention, usage, and every refusal.
 */
let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;

beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_RATE_LIMITS: JSON.stringify({ vps: { points: 10_000, duration: 60 } }),
  });
  b = await t.customer();
});
// A customer per test: the free plan allows two servers.
beforeEach(async () => {
  a = await t.customer();
});
afterAll(() => t.close());

const create = async (hostname: string, key = a.pat) => {
  const r = await t.request('POST', '/v1/vps', {
    key,
    body: { hostname, plan_code: 'vps-1-2', region: 'oslo', os_template: 'debian-12' },
  });
  expect(r.status, r.text).toBe(201);
  return r.body.id as string;
};
const act = (id: string, action: string, key = a.pat) =>
  t.request('POST', `/v1/vps/${id}/${action}`, { key });
const backup = (id: string, body: Record<string, unknown> = {}, key = a.pat) =>
  t.request('POST', `/v1/vps/${id}/backups`, { key, body });
const backups = (id: string, key = a.pat) => t.request('GET', `/v1/vps/${id}/backups`, { key });
const restore = (id: string, backupId: string, key = a.pat) =>
  t.request('POST', `/v1/vps/${id}/backups/${backupId}/restore`, { key });
const diskOf = (id: string) => join(t.kernel.config.dataDir, 'vps', 'simulated', id, 'disk');
/** The path and query of a link Fjord handed out (requests here go through inject). */
const pathOf = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};
/** Brings a new server to `stopped`. */
async function stoppedServer(hostname: string, key = a.pat) {
  const id = await create(hostname, key);
  await t.advance(181);
  expect((await act(id, 'stop', key)).status).toBe(200);
  await t.advance(31);
  return id;
}

describe('virtual server backups', () => {
  it('takes a real tar.gz of the disk while running, lists it and downloads it through a signed link', async () => {
    const id = await create('bk-1.example.com');
    const early = await backup(id);
    expect(early.status).toBe(409);
    expect(early.body.detail).toMatchObject({ code: 'invalid_state', status: 'provisioning' });
    await t.advance(181);

    const made = await backup(id, { name: 'before upgrade', description: 'd' });
    expect(made.status, made.text).toBe(201);
    expect(made.body).toEqual({
      id: expect.any(String),
      vps_id: id,
      name: 'before upgrade',
      description: 'd',
      kind: 'manual',
      status: 'available',
      format: 'tar.gz',
      size_bytes: expect.any(Number),
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      os_template: 'debian-12',
      created_at: expect.any(String),
      completed_at: expect.any(String),
      error: null,
    });
    const backupId = made.body.id as string;
    // A body is optional: the name defaults to the kind and time.
    const second = await t.request('POST', `/v1/vps/${id}/backups`, { key: a.pat });
    expect(second.status).toBe(201);
    expect(second.body.name).toMatch(/^manual-/);

    const list = await backups(id);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ total: 2, max_backups: 7 });
    expect(list.body.backups.map((x: { id: string }) => x.id)).toEqual([second.body.id, backupId]);

    const link = await t.request('GET', `/v1/vps/${id}/backups/${backupId}/download`, { key: a.pat });
    expect(link.status).toBe(200);
    expect(link.body).toEqual({
      backup_id: backupId,
      vps_id: id,
      download_url: expect.stringContaining(`/v1/vps/backup-downloads/${backupId}?token=`),
      expires_at: expect.any(String),
      filename: `bk-1.example.com-${backupId}.tar.gz`,
      format: 'tar.gz',
      size_bytes: made.body.size_bytes,
      sha256: made.body.sha256,
    });
    const file = await t.request('GET', pathOf(link.body.download_url));
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toBe('application/gzip');
    expect(file.headers['content-disposition']).toContain(link.body.filename);
    expect(file.raw.length).toBe(made.body.size_bytes);
    expect(createHash('sha256').update(file.raw).digest('hex')).toBe(made.body.sha256);
    const entries = readTar(gunzipSync(file.raw));
    const manifest = JSON.parse(entries.find((e) => e.name === 'fjord-backup.json')!.data!.toString());
    expect(manifest).toMatchObject({ format: 'fjord-vps-backup/1', vps_id: id, os_template: 'debian-12' });
    expect(entries.find((e) => e.name === 'disk/etc/hostname')?.data?.toString()).toBe('bk-1.example.com\n');

    // The link is the credential: tampered, for another backup, or expired, it opens nothing.
    const token = new URL(link.body.download_url).searchParams.get('token')!;
    expect((await t.request('GET', `/v1/vps/backup-downloads/${backupId}?token=${token}x`)).status).toBe(404);
    expect(
      (await t.request('GET', `/v1/vps/backup-downloads/${second.body.id}?token=${token}`)).body.detail.code,
    ).toBe('download_link_invalid');
    await t.advance(3601);
    expect((await t.request('GET', pathOf(link.body.download_url))).status).toBe(404);

    // Another customer sees none of it.
    expect((await backups(id, b.pat)).status).toBe(404);
    expect((await backup(id, {}, b.pat)).status).toBe(404);
    expect(
      (await t.request('GET', `/v1/vps/${id}/backups/${backupId}/download`, { key: b.pat })).status,
    ).toBe(404);
    expect((await t.request('DELETE', `/v1/vps/${id}/backups/${backupId}`, { key: b.pat })).status).toBe(404);
    expect((await t.request('GET', `/v1/vps/${id}/backup-usage`, { key: b.pat })).status).toBe(404);
    expect((await t.request('GET', `/v1/vps/${id}/backup-policy`, { key: b.pat })).status).toBe(404);

    // Deleting a backup is for good; deleting the server takes its backups with it.
    const del = await t.request('DELETE', `/v1/vps/${id}/backups/${second.body.id}`, { key: a.pat });
    expect(del.body).toEqual({ status: 'deleted', backup_id: second.body.id });
    expect(
      (await t.request('DELETE', `/v1/vps/${id}/backups/${second.body.id}`, { key: a.pat })).body.detail.code,
    ).toBe('backup_not_found');
    const key = await storageKeyOf(backupId);
    expect(await objectCount(key)).toBe(1);
    expect((await t.request('DELETE', `/v1/vps/${id}`, { key: a.pat })).status).toBe(200);
    expect(await objectCount(key)).toBe(0);
    expect(existsSync(diskOf(id))).toBe(false);
  });

  it('restores only a stopped server, and puts its disk back as it was', async () => {
    const id = await create('bk-2.example.com');
    await t.advance(181);
    const made = await backup(id);
    expect(made.status).toBe(201);
    const backupId = made.body.id as string;

    const running = await restore(id, backupId);
    expect(running.status).toBe(409);
    expect(running.body.detail).toMatchObject({
      code: 'invalid_state',
      status: 'running',
      action: 'restore',
    });
    await act(id, 'stop');
    const stopping = await restore(id, backupId);
    expect(stopping.body.detail).toMatchObject({ code: 'invalid_state', status: 'stopping' });
    await t.advance(31);

    // Written after the backup: gone after the restore.
    writeFileSync(join(diskOf(id), 'etc', 'hostname'), 'changed\n');
    mkdirSync(join(diskOf(id), 'srv'), { recursive: true });
    writeFileSync(join(diskOf(id), 'srv', 'later.txt'), 'later');
    const done = await restore(id, backupId);
    expect(done.status, done.text).toBe(200);
    expect(done.body).toEqual({
      status: 'restored',
      backup_id: backupId,
      vps_id: id,
      restored_at: expect.any(String),
      message: expect.any(String),
    });
    expect(readFileSync(join(diskOf(id), 'etc', 'hostname'), 'utf8')).toBe('bk-2.example.com\n');
    expect(existsSync(join(diskOf(id), 'srv', 'later.txt'))).toBe(false);
    expect((await t.request('GET', `/v1/vps/${id}`, { key: a.pat })).body.status).toBe('stopped');
    // The server is free again: it starts.
    expect((await act(id, 'start')).status).toBe(200);
    await t.advance(61);
    await act(id, 'stop');
    await t.advance(31);

    expect((await restore(id, 'nope')).body.detail.code).toBe('backup_not_found');

    // An archive altered in object storage is refused before the disk is touched.
    writeFileSync(join(diskOf(id), 'etc', 'hostname'), 'kept\n');
    await damage(backupId);
    const damaged = await restore(id, backupId);
    expect(damaged.status).toBe(502);
    expect(damaged.body.detail.code).toBe('backup_unreadable');
    expect(readFileSync(join(diskOf(id), 'etc', 'hostname'), 'utf8')).toBe('kept\n');
    expect((await act(id, 'start')).status).toBe(200);
    await t.request('DELETE', `/v1/vps/${id}`, { key: a.pat });
  });

  it('keeps at most 7 manual backups per server, also under concurrent requests', async () => {
    const c = await t.customer();
    const id = await stoppedServer('bk-3.example.com', c.pat);
    const answers = await Promise.all(Array.from({ length: 20 }, () => backup(id, {}, c.pat)));
    const made = answers.filter((r) => r.status === 201);
    expect(made.length).toBeGreaterThan(0);
    expect(made.length).toBeLessThanOrEqual(7);
    for (const r of answers.filter((x) => x.status !== 201)) {
      expect(r.status).toBe(409);
      expect(['backup_limit', 'backup_in_progress']).toContain(r.body.detail.code);
    }
    while ((await backups(id, c.pat)).body.total < 7) expect((await backup(id, {}, c.pat)).status).toBe(201);
    const full = await backup(id, {}, c.pat);
    expect(full.status).toBe(409);
    expect(full.body.detail).toMatchObject({ code: 'backup_limit', limit: 7 });
    const first = (await backups(id, c.pat)).body.backups[0].id as string;
    expect((await t.request('DELETE', `/v1/vps/${id}/backups/${first}`, { key: c.pat })).status).toBe(200);
    expect((await backup(id, {}, c.pat)).status).toBe(201);
  });

  it('takes automatic backups by policy on the clock and prunes past the retention', async () => {
    const id = await stoppedServer('bk-4.example.com');
    const initial = await t.request('GET', `/v1/vps/${id}/backup-policy`, { key: a.pat });
    expect(initial.body).toEqual({
      vps_id: id,
      enabled: false,
      frequency: 'daily',
      hour_utc: 3,
      day_of_week: 0,
      retention_count: 7,
      max_retention: 7,
      next_run_at: null,
      last_run_at: null,
      updated_at: null,
    });
    const put = (body: Record<string, unknown>) =>
      t.request('PUT', `/v1/vps/${id}/backup-policy`, { key: a.pat, body });
    const tooMany = await put({ enabled: true, retention_count: 8 });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.detail.code).toBe('retention_too_high');
    expect((await put({ enabled: true, hour_utc: 24 })).status).toBe(422);

    const weekly = await put({ enabled: true, frequency: 'weekly', day_of_week: 3, hour_utc: 5 });
    expect(weekly.status).toBe(200);
    const next = new Date(weekly.body.next_run_at);
    expect([next.getUTCDay(), next.getUTCHours(), next.getUTCMinutes()]).toEqual([3, 5, 0]);

    const hour = new Date((await t.operator('GET', '/admin/v1/clock')).body.now).getUTCHours();
    const daily = await put({ enabled: true, frequency: 'daily', hour_utc: hour, retention_count: 3 });
    expect(daily.body).toMatchObject({
      enabled: true,
      frequency: 'daily',
      hour_utc: hour,
      retention_count: 3,
    });
    // A manual backup is never pruned by the policy.
    expect((await backup(id, { name: 'keep me' })).status).toBe(201);
    for (let day = 0; day < 5; day++) await t.advance(86_400);
    const list = (await backups(id)).body.backups as { kind: string; name: string; status: string }[];
    expect(list.filter((x) => x.kind === 'automatic')).toHaveLength(3);
    expect(list.filter((x) => x.kind === 'automatic').every((x) => x.status === 'available')).toBe(true);
    expect(list.filter((x) => x.kind === 'manual').map((x) => x.name)).toEqual(['keep me']);
    const after = (await t.request('GET', `/v1/vps/${id}/backup-policy`, { key: a.pat })).body;
    expect(after.last_run_at).not.toBeNull();
    expect(Date.parse(after.next_run_at)).toBeGreaterThan(Date.parse(after.last_run_at));

    // Disabled, it takes no more.
    await put({ enabled: false });
    await t.advance(2 * 86_400);
    expect((await backups(id)).body.total).toBe(4);
  });

  it('reports the bytes the backups take and their price, stopped servers included', async () => {
    const id = await stoppedServer('bk-5.example.com');
    const usage = (q = '') => t.request('GET', `/v1/vps/${id}/backup-usage${q}`, { key: a.pat });
    expect((await usage()).body).toMatchObject({ used_bytes: 0, backup_count: 0, estimated_monthly_cost: 0 });
    const one = (await backup(id)).body.size_bytes as number;
    const two = (await backup(id)).body.size_bytes as number;
    const r = await usage();
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      vps_id: id,
      region: 'oslo',
      server_status: 'stopped',
      backup_count: 2,
      manual_backups: 2,
      automatic_backups: 0,
      max_backups: 7,
      used_bytes: one + two,
      used_gb: expect.any(Number),
      price_per_gb_month: 0.5,
      estimated_monthly_cost: expect.any(Number),
      currency: 'NOK',
    });
    expect(r.body.used_gb).toBeCloseTo((one + two) / 1e9, 6);
    expect((await usage('?currency=EUR')).body).toMatchObject({
      currency: 'EUR',
      price_per_gb_month: 0.0435,
    });
    expect((await usage('?currency=XYZ')).status).toBe(422);
  });

  it('holds a server being restored, and lets the hold lapse when a restore was cut off', async () => {
    const id = await stoppedServer('bk-7.example.com');
    const made = (await backup(id)).body.id as string;
    // As a Fjord killed mid-restore leaves it: the server held, on the clock.
    const now = Date.parse((await t.operator('GET', '/admin/v1/clock')).body.now);
    await sql`UPDATE vps_servers SET status = 'stopped', action = 'restore', next_status = 'stopped', settles_at = ${now + 30 * 60_000}
      WHERE id = ${id}`.execute(t.kernel.store.db);
    for (const r of [
      await act(id, 'start'),
      await restore(id, made),
      await backup(id),
      await t.request('POST', `/v1/vps/${id}/snapshots`, { key: a.pat, body: { name: 's' } }),
      await t.request('DELETE', `/v1/vps/${id}/backups/${made}`, { key: a.pat }),
    ]) {
      expect(r.status).toBe(409);
      expect(r.body.detail).toMatchObject({ code: 'restore_in_progress', status: 'stopped' });
    }
    expect((await t.request('GET', `/v1/vps/${id}`, { key: a.pat })).body.status).toBe('stopped');
    await t.advance(30 * 60 + 1);
    expect((await act(id, 'start')).status).toBe(200);
  });

  it('takes one backup at a time, and marks failed a backup whose taker died', async () => {
    const id = await stoppedServer('bk-8.example.com');
    const insert = (backupId: string, heartbeat: number) =>
      sql`
      INSERT INTO vps_backups (id, server_id, customer_id, name, kind, status, storage_key, os_template,
        created_at, heartbeat_at)
      VALUES (${backupId}, ${id}, ${a.id}, 'x', 'manual', 'creating', ${`${a.id}/${id}/${backupId}.tar.gz`},
        'debian-12', ${Date.now()}, ${heartbeat})`.execute(t.kernel.store.db);
    await insert(`live-${id}`, Date.now());
    const busy = await backup(id);
    expect(busy.status).toBe(409);
    expect(busy.body.detail.code).toBe('backup_in_progress');
    expect(
      (await t.request('DELETE', `/v1/vps/${id}/backups/live-${id}`, { key: a.pat })).body.detail.code,
    ).toBe('backup_not_available');
    expect(
      (await t.request('GET', `/v1/vps/${id}/backups/live-${id}/download`, { key: a.pat })).body.detail,
    ).toMatchObject({ code: 'backup_not_available', backup_status: 'creating' });
    await sql`DELETE FROM vps_backups WHERE id = ${`live-${id}`}`.execute(t.kernel.store.db);

    await insert(`dead-${id}`, Date.now() - 11 * 60_000);
    expect((await backup(id)).status).toBe(201);
    await t.advance(301);
    const dead = ((await backups(id)).body.backups as { id: string; status: string; error: string }[]).find(
      (x) => x.id === `dead-${id}`,
    );
    expect(dead).toMatchObject({ status: 'failed', error: expect.stringContaining('interrupted') });
    expect((await restore(id, `dead-${id}`)).body.detail.code).toBe('backup_not_available');
    expect((await t.request('DELETE', `/v1/vps/${id}/backups/dead-${id}`, { key: a.pat })).status).toBe(200);
  });

  it('refuses backups while the server moves, and answers 404 for unknown servers', async () => {
    const id = await create('bk-6.example.com');
    await t.advance(181);
    await act(id, 'reboot');
    const r = await backup(id);
    expect(r.body.detail).toMatchObject({ code: 'invalid_state', status: 'starting', action: 'back up' });
    expect((await backups('nope')).status).toBe(404);
    expect((await t.request('GET', '/v1/vps/nope/backup-policy', { key: a.pat })).status).toBe(404);
    expect(
      (await t.request('PUT', '/v1/vps/nope/backup-policy', { key: a.pat, body: { enabled: true } })).status,
    ).toBe(404);
    expect((await t.request('GET', '/v1/vps/nope/backup-usage', { key: a.pat })).status).toBe(404);
  });
});

async function storageKeyOf(backupId: string): Promise<string> {
  const r = await sql<{ storage_key: string }>`
    SELECT storage_key FROM vps_backups WHERE id = ${backupId}`.execute(t.kernel.store.db);
  return r.rows[0]!.storage_key;
}

async function objectCount(key: string): Promise<number> {
  const r = await sql<{ n: number | string }>`
    SELECT count(*) AS n FROM storage_objects WHERE key = ${key}`.execute(t.kernel.store.db);
  return Number(r.rows[0]?.n ?? 0);
}

/** Flips a byte of the backup's archive in the blob store (files in the data dir). */
async function damage(backupId: string) {
  const key = await storageKeyOf(backupId);
  const r = await sql<{ blob: string }>`SELECT blob FROM storage_objects WHERE key = ${key}`.execute(
    t.kernel.store.db,
  );
  const ref = (JSON.parse(r.rows[0]!.blob) as { ref: string }[])[0]!.ref;
  const blob = blobOnDisk(t.kernel.config.dataDir, ref);
  const bytes = blob.read();
  bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
  blob.write(bytes);
}

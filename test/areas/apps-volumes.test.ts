import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestCustomer, TestFjord } from '../helpers/fjord.js';
import { expectLimitHolds } from '../helpers/race.js';
import { simulatedFjord } from './apps-fixtures.js';

/**
 * Volumes of container apps (simulated driver): create within the plan's size, mount paths
 * checked, snapshots into object storage and a new volume from one, delete refused while the app
 * runs, the volume quota under concurrent creates, and tenant isolation.
 */
let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;

beforeAll(async () => {
  t = await simulatedFjord();
  b = await t.customer();
});
beforeEach(async () => {
  a = await t.customer();
});
afterAll(() => t.close());

const createApp = async (name: string, key = a.pat) => {
  const r = await t.request('POST', '/v1/apps', { key, body: { name, image: 'quay.io/team/web:1' } });
  expect(r.status).toBe(201);
  return r.body.id as string;
};
const createVolume = (app: string, body: Record<string, unknown>, key = a.pat) =>
  t.request('POST', `/v1/apps/${app}/volumes`, { key, body });

describe('container app volumes (simulated driver)', () => {
  it('creates, lists, snapshots, restores and deletes a volume', async () => {
    const app = await createApp('db');
    await t.advance(10);
    const v = await createVolume(app, { name: 'data', size_gb: 1, mount_path: '/var/lib/data/' });
    expect(v.status).toBe(201);
    expect(v.body).toMatchObject({
      size_enforced: null,
      app_id: app,
      name: 'data',
      size_gb: 1,
      mount_path: '/var/lib/data',
      used_bytes: null,
      source_snapshot_id: null,
      simulated: true,
    });
    const list = await t.request('GET', `/v1/apps/db/volumes`, { key: a.pat });
    expect(list.body).toMatchObject({ total: 1, volumes: [{ id: v.body.id }] });
    expect((await t.request('GET', `/v1/apps/db/volumes/data`, { key: a.pat })).body.id).toBe(v.body.id);

    const snap = await t.request('POST', `/v1/apps/db/volumes/data/snapshots`, { key: a.pat });
    expect(snap.status).toBe(201);
    expect(snap.body).toMatchObject({ volume_id: v.body.id, status: 'ready', error: null });
    expect(snap.body.size_bytes).toBeGreaterThan(0);
    const snaps = await t.request('GET', `/v1/apps/db/volumes/data/snapshots`, { key: a.pat });
    expect(snaps.body).toMatchObject({ total: 1, snapshots: [{ id: snap.body.id }] });

    // Another app of the account starts a volume from the snapshot.
    const copy = await createApp('copy');
    const restored = await createVolume(copy, {
      name: 'data',
      size_gb: 1,
      mount_path: '/data',
      snapshot_id: snap.body.id,
    });
    expect(restored.status).toBe(201);
    expect(restored.body.source_snapshot_id).toBe(snap.body.id);

    // Instances may have it mounted while the app runs: suspend first.
    const busy = await t.request('DELETE', `/v1/apps/db/volumes/data`, { key: a.pat });
    expect(busy.status).toBe(409);
    expect(busy.body.detail).toMatchObject({ code: 'invalid_state', status: 'running' });
    await t.request('POST', `/v1/apps/db/suspend`, { key: a.pat });
    const gone = await t.request('DELETE', `/v1/apps/db/volumes/data`, { key: a.pat });
    expect(gone.body).toEqual({ deleted: true, id: v.body.id });
    expect((await t.request('GET', `/v1/apps/db/volumes/data`, { key: a.pat })).status).toBe(404);
    // Its snapshots went with it.
    const orphan = await createVolume(copy, {
      name: 'again',
      size_gb: 1,
      mount_path: '/again',
      snapshot_id: snap.body.id,
    });
    expect(orphan.status).toBe(404);
    expect(orphan.body.detail.code).toBe('snapshot_not_found');
  });

  it('keeps the newest snapshots per volume', async () => {
    const app = await createApp('snaps');
    await createVolume(app, { name: 'data', size_gb: 1, mount_path: '/data' });
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      await t.advance(1);
      ids.push((await t.request('POST', `/v1/apps/snaps/volumes/data/snapshots`, { key: a.pat })).body.id);
    }
    const snaps = await t.request('GET', `/v1/apps/snaps/volumes/data/snapshots`, { key: a.pat });
    expect(snaps.body.total).toBe(5);
    expect(snaps.body.snapshots.map((s: { id: string }) => s.id)).toEqual(ids.slice(2).reverse());
  });

  it('refuses bad input with the field that is wrong', async () => {
    const app = await createApp('bad');
    const cases: [Record<string, unknown>, number, string][] = [
      [{ name: 'big', size_gb: 2, mount_path: '/data' }, 422, 'volume_too_large'],
      [{ name: 'rel', size_gb: 1, mount_path: 'data' }, 422, 'invalid_mount_path'],
      [{ name: 'dots', size_gb: 1, mount_path: '/data/../etc' }, 422, 'invalid_mount_path'],
      [{ name: 'sys', size_gb: 1, mount_path: '/usr/local' }, 422, 'invalid_mount_path'],
      [{ name: 'root', size_gb: 1, mount_path: '/' }, 422, 'invalid_mount_path'],
      [{ name: 'Not A Name', size_gb: 1, mount_path: '/data' }, 422, 'invalid_name'],
      [{ name: 'xx', size_gb: 1, mount_path: '/data', snapshot_id: 'nope' }, 404, 'snapshot_not_found'],
    ];
    for (const [body, status, code] of cases) {
      const r = await createVolume(app, body);
      expect([r.status, r.body.detail?.code], JSON.stringify(body)).toEqual([status, code]);
    }
    expect((await createVolume(app, { name: 'data', size_gb: 1, mount_path: '/data' })).status).toBe(201);
    const again = await createVolume(app, { name: 'data', size_gb: 1, mount_path: '/other' });
    expect([again.status, again.body.detail.code]).toEqual([409, 'volume_exists']);
    const inside = await createVolume(app, { name: 'inner', size_gb: 1, mount_path: '/data/inner' });
    expect([inside.status, inside.body.detail.code]).toEqual([422, 'invalid_mount_path']);
    expect((await createVolume('no-such-app', { name: 'dd', size_gb: 1, mount_path: '/d' })).status).toBe(
      404,
    );
  });

  it('frees the quota when the app is deleted with its volumes', async () => {
    const one = await createApp('one');
    expect((await createVolume(one, { name: 'a1', size_gb: 1, mount_path: '/a1' })).status).toBe(201);
    expect((await createVolume(one, { name: 'a2', size_gb: 1, mount_path: '/a2' })).status).toBe(201);
    const over = await createVolume(one, { name: 'a3', size_gb: 1, mount_path: '/a3' });
    expect(over.body.detail).toMatchObject({ code: 'quota_exceeded', limit: 2 });
    await t.request('DELETE', `/v1/apps/${one}`, { key: a.pat });
    const two = await createApp('two');
    expect((await createVolume(two, { name: 'b1', size_gb: 1, mount_path: '/b1' })).status).toBe(201);
  });

  it('never shows or touches another customer’s volume', async () => {
    const app = await createApp('mine');
    await createVolume(app, { name: 'data', size_gb: 1, mount_path: '/data' });
    const snap = await t.request('POST', `/v1/apps/${app}/volumes/data/snapshots`, { key: a.pat });
    for (const [method, path] of [
      ['GET', `/v1/apps/${app}/volumes`],
      ['GET', `/v1/apps/${app}/volumes/data`],
      ['DELETE', `/v1/apps/${app}/volumes/data`],
      ['POST', `/v1/apps/${app}/volumes/data/snapshots`],
    ] as const)
      expect((await t.request(method, path, { key: b.pat })).status).toBe(404);
    const theirs = await createApp('theirs', b.pat);
    const stolen = await createVolume(
      theirs,
      { name: 'xx', size_gb: 1, mount_path: '/x', snapshot_id: snap.body.id },
      b.pat,
    );
    expect(stolen.status).toBe(404);
  });

  it('holds the volume quota under concurrent creates', async () => {
    const app = await createApp('race');
    // The free plan allows 2 volumes.
    await expectLimitHolds({
      room: 2,
      attempts: 20,
      send: (i) => createVolume(app, { name: `v${i}`, size_gb: 1, mount_path: `/data/v${i}` }),
      refusal: { status: 403, code: 'quota_exceeded' },
    });
  });

  it('reports empty metrics for a simulated app, which takes no traffic', async () => {
    const app = await createApp('quiet');
    await t.advance(10);
    const m = await t.request('GET', `/v1/apps/${app}/metrics`, { key: a.pat });
    expect(m.body).toEqual({
      window_seconds: 3600,
      requests: 0,
      errors: 0,
      latency_ms: { p50: null, p95: null },
      per_minute: [],
      instances: [],
      simulated: true,
    });
    expect((await t.request('GET', `/v1/apps/${app}/metrics`, { key: b.pat })).status).toBe(404);
  });
});

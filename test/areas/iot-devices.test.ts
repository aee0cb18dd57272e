import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IotService } from '../../src/areas/iot/service.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { expectLimitHolds } from '../helpers/race.js';

/**
 * IoT devices through the API: MQTT credentials shown once and kept only as a hash, the login
 * check the broker uses, tags, filters and pages, tenant isolation and the plan's device limit.
 */
let t: TestFjord;
let a: TestCustomer;
beforeAll(async () => {
  t = await TestFjord.create();
  a = await t.customer();
});
afterAll(() => t.close());

const iot = () => t.fjord.areas.get('iot')!.service as IotService;
const create = (body: unknown, key = a.pat) => t.request('POST', '/v1/iot/devices', { key, body });

describe('IoT devices', () => {
  it('shows the MQTT password once, keeps only its hash and accepts it at the broker login', async () => {
    const r = await create({ name: 'Boiler', device_id: 'boiler-1', metadata: { room: 'cellar' } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      device_id: 'boiler-1',
      name: 'Boiler',
      is_active: true,
      is_online: false,
      connection_status: 'disconnected',
      tags: [],
      metadata: { room: 'cellar' },
    });
    const creds = r.body.mqtt_credentials;
    expect(creds.password).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(creds.topic_root).toBe(`devices/${creds.username}`);
    expect(creds.client_id).toBe(creds.username);

    const stored = await iot().repo.byUsername(creds.username);
    expect(stored?.mqtt_password_hash).toBe(createHash('sha256').update(creds.password).digest('hex'));
    expect(JSON.stringify(stored)).not.toContain(creds.password);
    const got = await t.request('GET', '/v1/iot/devices/boiler-1', { key: a.pat });
    expect(got.status).toBe(200);
    expect(got.body.mqtt_credentials).toBeUndefined();

    expect(await iot().authenticate(creds.username, creds.password)).toHaveProperty('device');
    expect(await iot().authenticate(creds.username, 'wrong')).toEqual({ refused: 'bad_credentials' });
    expect(await iot().authenticate('d_nobody', creds.password)).toEqual({ refused: 'bad_credentials' });

    // Rotation: the old password stops working, the new one works, the login name stays.
    const rot = await t.request('POST', '/v1/iot/devices/boiler-1/credentials/rotate', { key: a.pat });
    expect(rot.status).toBe(200);
    expect(rot.body.username).toBe(creds.username);
    expect(await iot().authenticate(creds.username, creds.password)).toEqual({ refused: 'bad_credentials' });
    expect(await iot().authenticate(creds.username, rot.body.password)).toHaveProperty('device');

    // Deactivated: refused as not authorised; deleted: the login is gone.
    const off = await t.request('PATCH', '/v1/iot/devices/boiler-1', {
      key: a.pat,
      body: { is_active: false },
    });
    expect(off.body.is_active).toBe(false);
    expect(await iot().authenticate(creds.username, rot.body.password)).toEqual({
      refused: 'not_authorised',
    });
    const events: string[] = [];
    const stop = iot().stream.subscribe((e) => events.push(`${e.kind}:${e.device_id}`));
    expect((await t.request('DELETE', '/v1/iot/devices/boiler-1', { key: a.pat })).status).toBe(204);
    stop();
    expect(events).toEqual(['deleted:boiler-1']);
    expect((await t.request('GET', '/v1/iot/devices/boiler-1', { key: a.pat })).status).toBe(404);
    expect(await iot().authenticate(creds.username, rot.body.password)).toEqual({
      refused: 'bad_credentials',
    });
  });

  it('generates a UUID device_id, refuses unsafe and duplicate ones, and PATCH replaces metadata', async () => {
    const c = await t.customer();
    const gen = await create({ name: 'Anon' }, c.pat);
    expect(gen.body.device_id).toMatch(/^[0-9a-f-]{36}$/);
    const bad = await create({ name: 'x', device_id: 'a/b#' }, c.pat);
    expect(bad.status).toBe(422);
    expect(bad.body.detail.code).toBe('invalid_device_id');
    expect((await create({ name: 'one', device_id: 'dup' }, c.pat)).status).toBe(201);
    const dup = await create({ name: 'two', device_id: 'dup' }, c.pat);
    expect([dup.status, dup.body.detail.code]).toEqual([409, 'device_exists']);
    await t.request('PATCH', '/v1/iot/devices/dup', { key: c.pat, body: { metadata: { a: 1, b: 2 } } });
    const p = await t.request('PATCH', '/v1/iot/devices/dup', {
      key: c.pat,
      body: { metadata: { c: 3 }, firmware_version: '1.2.0', name: 'renamed' },
    });
    expect(p.body).toMatchObject({ metadata: { c: 3 }, firmware_version: '1.2.0', name: 'renamed' });
  });

  it('adds tags (only new ones answered), removes them and filters and pages the list', async () => {
    const c = await t.customer();
    for (const [id, type] of [
      ['s1', 'sensor'],
      ['s2', 'sensor'],
      ['g1', 'gateway'],
    ])
      await create({ name: id, device_id: id, device_type: type }, c.pat);
    const add = (id: string, tags: unknown) =>
      t.request('POST', `/v1/iot/devices/${id}/tags`, { key: c.pat, body: tags });
    const first = await add('s1', ['roof', 'north']);
    expect(first.body).toEqual({ added: ['roof', 'north'] });
    expect((await add('s1', ['north', 'east', 'east'])).body).toEqual({ added: ['east'] });
    expect((await add('s2', ['roof'])).body).toEqual({ added: ['roof'] });
    expect((await add('s2', ['%'])).status).toBe(422);
    const tags = await t.request('GET', '/v1/iot/devices/s1/tags', { key: c.pat });
    expect(tags.body).toEqual({ tags: ['roof', 'north', 'east'] });
    expect((await t.request('DELETE', '/v1/iot/devices/s1/tags/north', { key: c.pat })).status).toBe(204);
    expect((await t.request('DELETE', '/v1/iot/devices/s1/tags/north', { key: c.pat })).status).toBe(404);

    const list = async (q: string) => (await t.request('GET', `/v1/iot/devices?${q}`, { key: c.pat })).body;
    const ids = (b: { devices: { device_id: string }[] }) => b.devices.map((d) => d.device_id);
    expect(ids(await list('tag=roof'))).toEqual(['s1', 's2']);
    expect(ids(await list('device_type=gateway'))).toEqual(['g1']);
    expect(ids(await list('is_online=true'))).toEqual([]);
    const page = await list('page=2&page_size=2');
    expect(page).toMatchObject({ total: 3, page: 2, page_size: 2, has_more: false });
    expect(ids(page)).toEqual(['g1']);
    expect(await list('page_size=2')).toMatchObject({ has_more: true });
  });

  it('answers 404 for another customer’s device and needs the iot service on a key', async () => {
    const b = await t.customer();
    await create({ name: 'mine', device_id: 'private-1' });
    for (const [method, url] of [
      ['GET', '/v1/iot/devices/private-1'],
      ['PATCH', '/v1/iot/devices/private-1'],
      ['DELETE', '/v1/iot/devices/private-1'],
      ['GET', '/v1/iot/devices/private-1/tags'],
      ['POST', '/v1/iot/devices/private-1/credentials/rotate'],
    ] as const) {
      const r = await t.request(method, url, {
        key: b.pat,
        body: method === 'PATCH' ? { name: 'x' } : undefined,
      });
      expect([url, r.status]).toEqual([url, 404]);
    }
    expect((await t.request('GET', '/v1/iot/devices', { key: b.pat })).body.total).toBe(0);
    const gpuKey = (await t.kernel.identity.createServiceKey(b.id, 'gpu', 'other')).key;
    expect((await t.request('GET', '/v1/iot/devices', { key: gpuKey })).status).toBe(403);
    const iotKey = (await t.kernel.identity.createServiceKey(b.id, 'iot', 'fleet')).key;
    expect((await t.request('GET', '/v1/iot/devices', { key: iotKey })).status).toBe(200);
  });

  it('refuses a suspended customer’s devices at the login', async () => {
    const c = await t.customer();
    const d = (await create({ name: 'x' }, c.pat)).body.mqtt_credentials;
    await t.operator('PATCH', `/admin/v1/customers/${c.id}`, { status: 'suspended' });
    expect(await iot().authenticate(d.username, d.password)).toEqual({ refused: 'not_authorised' });
    await t.operator('PATCH', `/admin/v1/customers/${c.id}`, { status: 'active' });
    expect(await iot().authenticate(d.username, d.password)).toHaveProperty('device');
  });

  it('holds the plan’s device limit when 30 creates arrive at once', async () => {
    const c = await t.customer();
    await create({ name: 'first' }, c.pat);
    await expectLimitHolds({
      room: 9,
      attempts: 30,
      send: (i) => create({ name: `race ${i}`, device_id: `race-${i}` }, c.pat),
      refusal: { status: 403, code: 'quota_exceeded' },
    });
  });
});

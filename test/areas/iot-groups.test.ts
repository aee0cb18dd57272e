import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestFjord } from '../helpers/fjord.js';
import { expectLimitHolds } from '../helpers/race.js';

/** IoT device groups: CRUD, colour checks, membership by device_id and the group limit. */
let t: TestFjord;
beforeAll(async () => {
  t = await TestFjord.create({ FJORD_LIMITS: JSON.stringify({ 'iot.groups': 5 }) });
});
afterAll(() => t.close());

describe('IoT device groups', () => {
  it('creates, changes, fills, filters by and deletes a group; another account sees 404', async () => {
    const c = await t.customer();
    const req = (method: string, url: string, body?: unknown) => t.request(method, url, { key: c.pat, body });
    const g = await req('POST', '/v1/iot/groups', { name: 'Roof', color: '#ff8800' });
    expect(g.status).toBe(201);
    expect(g.body).toMatchObject({ name: 'Roof', color: '#ff8800', description: null });
    expect((await req('POST', '/v1/iot/groups', { name: 'Bad', color: 'orange' })).status).toBe(422);
    const put = await req('PUT', `/v1/iot/groups/${g.body.id}`, {
      name: 'Roof north',
      description: 'N side',
    });
    expect(put.body).toMatchObject({ name: 'Roof north', description: 'N side', color: '#ff8800' });

    for (const id of ['a', 'b', 'c']) await req('POST', '/v1/iot/devices', { name: id, device_id: id });
    const unknown = await req('POST', `/v1/iot/groups/${g.body.id}/devices`, {
      device_ids: ['a', 'zz', 'yy'],
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail.unknown_device_ids).toEqual(['zz', 'yy']);
    const add = await req('POST', `/v1/iot/groups/${g.body.id}/devices`, { device_ids: ['a', 'b'] });
    expect(add.body).toEqual({ added: ['a', 'b'] });
    expect(
      (await req('POST', `/v1/iot/groups/${g.body.id}/devices`, { device_ids: ['b', 'c'] })).body,
    ).toEqual({
      added: ['c'],
    });
    expect((await req('DELETE', `/v1/iot/groups/${g.body.id}/devices/c`)).status).toBe(204);
    expect((await req('DELETE', `/v1/iot/groups/${g.body.id}/devices/c`)).status).toBe(404);
    const inGroup = await req('GET', `/v1/iot/devices?group_id=${g.body.id}`);
    expect(inGroup.body.devices.map((d: { device_id: string }) => d.device_id)).toEqual(['a', 'b']);

    const other = await t.customer();
    expect((await t.request('GET', `/v1/iot/groups/${g.body.id}`, { key: other.pat })).status).toBe(404);
    expect((await t.request('GET', '/v1/iot/groups', { key: other.pat })).body).toEqual({ groups: [] });

    expect((await req('DELETE', `/v1/iot/groups/${g.body.id}`)).status).toBe(204);
    expect((await req('GET', `/v1/iot/groups/${g.body.id}`)).status).toBe(404);
    expect((await req('GET', '/v1/iot/devices/a')).status).toBe(200);
  });

  it('holds the group limit when 20 creates arrive at once', async () => {
    const c = await t.customer();
    await expectLimitHolds({
      room: 5,
      attempts: 20,
      send: (i) => t.request('POST', '/v1/iot/groups', { key: c.pat, body: { name: `g${i}` } }),
      refusal: { status: 403, code: 'quota_exceeded' },
    });
  });
});

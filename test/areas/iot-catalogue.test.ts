import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IotService } from '../../src/areas/iot/service.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { connectDevice, type DeviceCreds, registerDevice } from '../helpers/iot.js';
import { expectLimitHolds } from '../helpers/race.js';

/**
 * Datapoint definitions (checked at ingest with a real MQTT client), profiles applied to devices,
 * device health, the attributes topic, usage, statistics and telemetry retention on the clock.
 */
let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;
const clients: MqttClient[] = [];
beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_API_PORT: '0',
    FJORD_MQTT_PORT: '0',
    FJORD_LIMITS: JSON.stringify({ 'iot.profiles': 12 }),
  });
  await t.fjord.start(['api', 'mqtt']);
  a = await t.customer();
  b = await t.customer();
});
afterAll(async () => {
  for (const c of clients) c.end(true);
  await t.close();
});

const iot = () => t.fjord.areas.get('iot')!.service as IotService;
const device = (deviceId: string, key = a.pat) => registerDevice(t, key, deviceId);
const connect = (c: DeviceCreds) => connectDevice(c, clients);
const get = (url: string, key = a.pat) => t.request('GET', url, { key });

describe('IoT datapoints', () => {
  it('defines keys, refuses wrong types and out-of-range values at ingest and rounds numbers', async () => {
    const temp = await t.request('POST', '/v1/iot/datapoints', {
      key: a.pat,
      body: {
        key: 'temp',
        name: 'Temperature',
        unit: '°C',
        data_type: 'number',
        min: -40,
        max: 85,
        decimals: 1,
      },
    });
    expect(temp.status).toBe(201);
    expect(temp.body).toMatchObject({ key: 'temp', unit: '°C', min: -40, max: 85, decimals: 1 });
    const dup = await t.request('POST', '/v1/iot/datapoints', {
      key: a.pat,
      body: { key: 'temp', name: 'again', data_type: 'number' },
    });
    expect([dup.status, dup.body.detail.code]).toEqual([409, 'datapoint_exists']);
    const bad = await t.request('POST', '/v1/iot/datapoints', {
      key: a.pat,
      body: { key: 'door', name: 'Door', data_type: 'boolean', min: 0 },
    });
    expect([bad.status, bad.body.detail.code]).toEqual([422, 'invalid_datapoint']);
    const inverted = await t.request('POST', '/v1/iot/datapoints', {
      key: a.pat,
      body: { key: 'hum', name: 'Humidity', data_type: 'integer', min: 100, max: 0 },
    });
    expect(inverted.status).toBe(422);
    expect(
      (
        await t.request('POST', '/v1/iot/datapoints', {
          key: a.pat,
          body: { key: 'mode', name: 'Mode', data_type: 'string' },
        })
      ).status,
    ).toBe(201);
    expect((await get('/v1/iot/datapoints')).body.datapoints.map((d: { key: string }) => d.key)).toEqual([
      'mode',
      'temp',
    ]);
    expect((await get(`/v1/iot/datapoints/${temp.body.id}`, b.pat)).status).toBe(404);

    const c = await device('probe-1');
    const client = await connect(c);
    const send = (v: unknown) =>
      client.publishAsync(`${c.topic_root}/telemetry`, JSON.stringify(v), { qos: 1 });
    await send({ temp: 21.456, mode: 'eco', battery: 87.4, rssi: -67 });
    await send({ temp: 200 });
    await send({ temp: 'hot', mode: 'eco' });
    const points = (await get('/v1/iot/devices/probe-1/telemetry?keys=temp')).body.points;
    expect(points.map((p: { value: unknown }) => p.value)).toEqual([21.5]);
    expect((await get('/v1/iot/devices/probe-1/telemetry?keys=mode')).body.points).toHaveLength(2);
    const dev = (await get('/v1/iot/devices/probe-1')).body;
    expect(dev).toMatchObject({
      messages_24h: 3,
      battery_level: 87,
      signal_strength: -67,
      stability_score: 100,
    });
    const usage = (await get('/v1/iot/usage')).body;
    expect(usage).toMatchObject({ messages: 3, points_stored: 5, points_rejected: 2, devices: 1 });
    expect(usage.stored_points).toBe(5);
    expect((await get('/v1/iot/usage', b.pat)).body).toMatchObject({ messages: 0, devices: 0 });

    // A changed range applies from the next point; a deleted definition stops checking the key.
    const widened = await t.request('PATCH', `/v1/iot/datapoints/${temp.body.id}`, {
      key: a.pat,
      body: { max: 250, decimals: null },
    });
    expect(widened.body).toMatchObject({ max: 250, decimals: null, key: 'temp' });
    await send({ temp: 200.25 });
    expect((await get('/v1/iot/devices/probe-1/telemetry/latest')).body.values.temp.value).toBe(200.25);
    expect((await t.request('DELETE', `/v1/iot/datapoints/${temp.body.id}`, { key: a.pat })).status).toBe(
      204,
    );
    await send({ temp: 'hot' });
    expect((await get('/v1/iot/devices/probe-1/telemetry/latest')).body.values.temp.value).toBe('hot');
  });

  it('takes firmware version and metadata from the attributes topic', async () => {
    const c = await device('probe-attr');
    const client = await connect(c);
    await client.publishAsync(
      `${c.topic_root}/attributes`,
      JSON.stringify({ firmware_version: '1.2.3', site: 'oslo' }),
      {
        qos: 1,
      },
    );
    await client.publishAsync(`${c.topic_root}/attributes`, 'not json', { qos: 1 });
    expect((await get('/v1/iot/devices/probe-attr')).body).toMatchObject({
      firmware_version: '1.2.3',
      metadata: { site: 'oslo' },
    });
  });
});

describe('IoT profiles', () => {
  it('creates, applies, changes and deletes a profile; another account sees 404', async () => {
    await t.request('POST', '/v1/iot/datapoints', {
      key: a.pat,
      body: { key: 'co2', name: 'CO₂', data_type: 'integer' },
    });
    const p = await t.request('POST', '/v1/iot/profiles', {
      key: a.pat,
      body: {
        name: 'air-sensor',
        device_type: 'air',
        default_metadata: { site: 'default', interval: 60 },
        datapoint_keys: ['co2'],
      },
    });
    expect(p.status).toBe(201);
    expect(p.body).toMatchObject({ name: 'air-sensor', datapoint_keys: ['co2'], device_count: 0 });
    const unknown = await t.request('POST', '/v1/iot/profiles', {
      key: a.pat,
      body: { name: 'x', datapoint_keys: ['nope'] },
    });
    expect([unknown.status, unknown.body.detail.code]).toEqual([422, 'unknown_datapoint']);
    const taken = await t.request('POST', '/v1/iot/profiles', { key: a.pat, body: { name: 'air-sensor' } });
    expect([taken.status, taken.body.detail.code]).toEqual([409, 'profile_exists']);

    await t.request('POST', '/v1/iot/devices', {
      key: a.pat,
      body: { name: 'air 1', device_id: 'air-1', metadata: { site: 'roof' } },
    });
    const applied = await t.request('POST', `/v1/iot/profiles/${p.body.id}/apply/air-1`, { key: a.pat });
    expect(applied.status).toBe(200);
    expect(applied.body).toMatchObject({ device_type: 'air', metadata: { site: 'roof', interval: 60 } });
    expect((await get('/v1/iot/devices/air-1')).body).toMatchObject({
      device_type: 'air',
      metadata: { site: 'roof' },
    });
    expect((await get(`/v1/iot/profiles/${p.body.id}`)).body.device_count).toBe(1);
    expect((await t.request('POST', `/v1/iot/profiles/${p.body.id}/apply/nope`, { key: a.pat })).status).toBe(
      404,
    );
    expect(
      (await t.request('POST', `/v1/iot/profiles/${p.body.id}/apply/air-1`, { key: b.pat })).status,
    ).toBe(404);

    const patched = await t.request('PATCH', `/v1/iot/profiles/${p.body.id}`, {
      key: a.pat,
      body: { description: 'indoor air', datapoint_keys: [] },
    });
    expect(patched.body).toMatchObject({ name: 'air-sensor', description: 'indoor air', datapoint_keys: [] });
    expect((await get('/v1/iot/profiles')).body.profiles).toHaveLength(1);
    expect((await get('/v1/iot/profiles', b.pat)).body.profiles).toHaveLength(0);
    expect((await t.request('DELETE', `/v1/iot/profiles/${p.body.id}`, { key: b.pat })).status).toBe(404);
    expect((await t.request('DELETE', `/v1/iot/profiles/${p.body.id}`, { key: a.pat })).status).toBe(204);
    expect((await get(`/v1/iot/profiles/${p.body.id}`)).status).toBe(404);
    expect((await get('/v1/iot/devices/air-1')).body.device_type).toBe('air');
  });

  it('holds the profile limit when creates arrive at once', async () => {
    const have = (await get('/v1/iot/profiles', b.pat)).body.profiles.length;
    await expectLimitHolds({
      room: 12 - have,
      attempts: 30,
      send: (i) => t.request('POST', '/v1/iot/profiles', { key: b.pat, body: { name: `p${i}` } }),
      refusal: { status: 403, code: 'quota_exceeded' },
    });
  });
});

describe('IoT health, stats and retention', () => {
  it('scores a device from never seen to connected and fresh to offline', async () => {
    const c = await device('probe-health');
    const first = (await get('/v1/iot/devices/probe-health/health')).body;
    expect(first).toMatchObject({ device_id: 'probe-health', health_status: 'unknown' });
    const client = await connect(c);
    await t.advance(3600);
    await client.publishAsync(`${c.topic_root}/telemetry`, JSON.stringify({ v: 1 }), { qos: 1 });
    const healthy = (await get('/v1/iot/devices/probe-health/health')).body;
    expect(healthy).toMatchObject({
      health_status: 'healthy',
      health_score: 100,
      components: { uptime: 100, alarm_burden: 100, connection_stability: 100, telemetry_freshness: 100 },
    });
    const stats = (await get('/v1/iot/stats')).body;
    expect(stats.devices.online).toBeGreaterThanOrEqual(1);
    expect(stats.broker.connected_here).toBeGreaterThanOrEqual(1);
    const gone = new Promise<void>((resolve) => {
      const stop = iot().stream.subscribe((e) => {
        if (e.kind === 'disconnected' && e.device_id === 'probe-health') {
          stop();
          resolve();
        }
      });
    });
    client.end(true);
    await gone;
    await t.advance(3000);
    const offline = (await get('/v1/iot/devices/probe-health/health')).body;
    expect(offline.health_status).toBe('offline');
    // Connected for one hour of the 110 minutes since it was registered.
    expect(offline.components.uptime).toBe(55);
    expect(offline.components.telemetry_freshness).toBe(60);
    expect((await get('/v1/iot/devices/probe-health/health', b.pat)).status).toBe(404);
  });

  it('lists each device as a service of the account', async () => {
    await device('probe-service');
    const services = (await get('/v1/account/services')).body as {
      id: string;
      service_type: string;
      status: string;
      api: { base_url: string };
    }[];
    const mine = services.find((e) => e.service_type === 'iot' && e.id === 'probe-service');
    expect(mine).toMatchObject({ status: 'disconnected' });
    expect(mine!.api.base_url).toMatch(/\/v1\/iot\/devices\/probe-service$/);
    const theirs = (await get('/v1/account/services', b.pat)).body as { id: string }[];
    expect(theirs.some((e) => e.id === 'probe-service')).toBe(false);
  });

  it('aggregates telemetry per interval with avg, min, max, sum and count', async () => {
    const c = await device('probe-agg');
    const client = await connect(c);
    const base = Math.floor(iot().now() / 3_600_000) * 3_600_000 - 3 * 3_600_000;
    await client.publishAsync(
      `${c.topic_root}/telemetry`,
      JSON.stringify([
        { ts: base, values: { t: 10 } },
        { ts: base + 600_000, values: { t: 20 } },
        { ts: base + 3_600_000, values: { t: 30 } },
        { ts: base + 3_601_000, values: { t: 'warm' } },
      ]),
      { qos: 1 },
    );
    const q = (fn: string) =>
      get(
        `/v1/iot/devices/probe-agg/telemetry?aggregation=${fn}&interval=3600&from=${new Date(base).toISOString()}&to=${new Date(base + 7_199_000).toISOString()}`,
      );
    const avg = (await q('avg')).body;
    expect(avg).toMatchObject({ aggregation: 'avg', interval: 3600 });
    expect(avg.points).toEqual([
      { key: 't', ts: new Date(base + 3_600_000).toISOString(), value: 30, count: 2 },
      { key: 't', ts: new Date(base).toISOString(), value: 15, count: 2 },
    ]);
    expect((await q('min')).body.points.map((p: { value: number }) => p.value)).toEqual([30, 10]);
    expect((await q('max')).body.points.map((p: { value: number }) => p.value)).toEqual([30, 20]);
    expect((await q('sum')).body.points.map((p: { value: number }) => p.value)).toEqual([30, 30]);
    expect((await q('count')).body.points.map((p: { value: number }) => p.value)).toEqual([2, 2]);
    const raw = (await get('/v1/iot/devices/probe-agg/telemetry?limit=2')).body;
    expect(raw).toMatchObject({ aggregation: 'none', interval: null });
    expect(raw.points[0]).toMatchObject({ key: 't', value: 'warm', count: 1 });
    const tooMany = await get(
      '/v1/iot/devices/probe-agg/telemetry?aggregation=avg&interval=1&from=2020-01-01T00:00:00Z',
    );
    expect([tooMany.status, tooMany.body.detail.code]).toEqual([422, 'invalid_time_window']);
  });

  it('prunes telemetry past the plan’s retention on the clock', async () => {
    const c = await device('probe-old');
    const client = await connect(c);
    const now = iot().now();
    await client.publishAsync(
      `${c.topic_root}/telemetry`,
      JSON.stringify([
        { ts: now - 8 * 86_400_000, values: { old: 1 } },
        { ts: now, values: { fresh: 1 } },
      ]),
      { qos: 1 },
    );
    expect((await get('/v1/iot/devices/probe-old/telemetry')).body.points).toHaveLength(2);
    await t.advance(3600);
    const keys = (await get('/v1/iot/devices/probe-old/telemetry')).body.points.map(
      (p: { key: string }) => p.key,
    );
    expect(keys).toEqual(['fresh']);
  });
});

import type { Kysely } from 'kysely';
import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IotTables } from '../../src/areas/iot/migrations.js';
import { eventually } from '../helpers/eventually.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { HttpsReceiver, signatureValid } from '../helpers/https-receiver.js';
import { connectDevice, registerDevice } from '../helpers/iot.js';
import { expectLimitHolds } from '../helpers/race.js';

/**
 * Alarm rules judged on real MQTT telemetry (MQTT.js) and on the clock, the alarm state machine,
 * and notifications to a local HTTPS receiver: signed, routed by policy, throttled, held in quiet
 * hours and repeated while unacknowledged.
 */
let t: TestFjord;
let a: TestCustomer;
let b: TestCustomer;
let hooks: HttpsReceiver;
const clients: MqttClient[] = [];
beforeAll(async () => {
  hooks = new HttpsReceiver();
  await hooks.listen();
  t = await TestFjord.create(
    {
      FJORD_API_PORT: '0',
      FJORD_MQTT_PORT: '0',
      FJORD_WEBHOOK_ALLOW_PRIVATE: '1',
      // Its devices stay connected from test to test: more than a free plan's 20 live connections.
      FJORD_LIMITS: JSON.stringify({ 'iot.rules': 30, 'iot.devices': 50, 'iot.mqtt_connections': 100 }),
    },
    { fetchImpl: hooks.fetch },
  );
  await t.fjord.start(['api', 'mqtt']);
  a = await t.customer();
  b = await t.customer();
});
afterAll(async () => {
  for (const c of clients) c.end(true);
  await t.close();
  await hooks.close();
});

const get = (url: string, key = a.pat) => t.request('GET', url, { key });
const post = (url: string, body?: unknown, key = a.pat) => t.request('POST', url, { key, body });

/** A registered, connected device that publishes telemetry at QoS 1. */
async function device(deviceId: string, key = a.pat) {
  const c = await registerDevice(t, key, deviceId);
  const client = await connectDevice(c, clients);
  return {
    client,
    send: (values: Record<string, unknown>) =>
      client.publishAsync(`${c.topic_root}/telemetry`, JSON.stringify(values), { qos: 1 }),
  };
}
async function rule(body: Record<string, unknown>, key = a.pat) {
  const r = await post('/v1/iot/rules', body, key);
  expect(r.status, r.text).toBe(201);
  return r.body as { id: string };
}
const alarmsOf = async (deviceId: string, status = '') =>
  (await get(`/v1/iot/alarms?device_id=${deviceId}${status ? `&status=${status}` : ''}`)).body.alarms as {
    id: string;
    severity: string;
    status: string;
    cleared_by: string | null;
  }[];
/** Runs due jobs (webhook deliveries) until `path` has received `n` requests. */
const received = (path: string, n: number) =>
  eventually(async () => {
    await t.advance(1);
    expect(hooks.to(path).length).toBeGreaterThanOrEqual(n);
    return hooks.to(path);
  }, 10_000);

describe('IoT alarm rules and alarms', () => {
  it('raises on a threshold, escalates, clears by rule and notifies a signed webhook for each move', async () => {
    const channel = await post('/v1/iot/notifications/channels', {
      name: 'ops',
      channel_type: 'webhook',
      config: { url: `${hooks.base}/alarms` },
    });
    expect(channel.status).toBe(201);
    const policy = await post('/v1/iot/notifications/policies', {
      name: 'all to ops',
      channel_ids: [channel.body.id],
      device_ids: ['boiler-1'],
      events: ['created', 'escalated', 'resolved'],
    });
    expect(policy.status).toBe(201);
    const boiler = await device('boiler-1');
    const r = await rule({
      name: 'boiler temperature',
      target: { type: 'device', value: 'boiler-1' },
      severities: {
        critical: { type: 'simple', filters: [{ key: 'temp', operator: '>', value: 50 }] },
        warning: { type: 'simple', filters: [{ key: 'temp', operator: '>', value: 30 }] },
      },
      clear_condition: { type: 'simple', filters: [{ key: 'temp', operator: '<', value: 25 }] },
    });
    await boiler.send({ temp: 20 });
    await boiler.send({ temp: 35 });
    const [alarm] = await eventually(async () => {
      const list = await alarmsOf('boiler-1');
      expect(list).toHaveLength(1);
      return list;
    }, 5000);
    expect(alarm).toMatchObject({ severity: 'warning', status: 'active', cleared_by: null });
    await boiler.send({ temp: 60 });
    await eventually(async () => expect((await alarmsOf('boiler-1'))[0]!.severity).toBe('critical'), 5000);
    await boiler.send({ temp: 40 }); // Better, but not clear: the alarm keeps its worst severity.
    await boiler.send({ temp: 22 });
    await eventually(
      async () =>
        expect((await alarmsOf('boiler-1'))[0]).toMatchObject({ status: 'resolved', cleared_by: 'rule' }),
      5000,
    );
    const timeline = (await get(`/v1/iot/alarms/${alarm!.id}/timeline`)).body.events;
    expect(timeline.map((e: { event: string }) => e.event).filter((e: string) => e !== 'notified')).toEqual([
      'created',
      'severity_changed',
      'resolved',
    ]);
    expect(timeline[0].actor).toBe(`rule:${r.id}`);

    const got = await received('/alarms', 3);
    expect(got.map((h) => h.json.type)).toEqual([
      'iot.alarm.created',
      'iot.alarm.escalated',
      'iot.alarm.resolved',
    ]);
    const secret = await t.kernel.webhooks.secretFor(a.id);
    for (const h of got) expect(signatureValid(h, secret)).toBe(true);
    expect(got[1]!.json.alarm).toMatchObject({ id: alarm!.id, severity: 'critical', device_id: 'boiler-1' });
    const deliveries = await eventually(async () => {
      const d = (await get(`/v1/iot/notifications/deliveries?alarm_id=${alarm!.id}`)).body.deliveries;
      expect(d.every((x: { status: string }) => x.status === 'delivered')).toBe(true);
      return d;
    }, 5000);
    expect(deliveries).toHaveLength(3);
    expect(deliveries[0]).toMatchObject({ response_code: 200, test: false, channel_id: channel.body.id });
    expect((await get(`/v1/iot/alarms/${alarm!.id}`, b.pat)).status).toBe(404);
    expect((await get('/v1/iot/alarms', b.pat)).body.total).toBe(0);
  });

  it('acknowledges, resolves and reopens, and refuses every other move with a clear error', async () => {
    const door = await device('door-1');
    await rule({
      name: 'door open',
      target: { type: 'device', value: 'door-1' },
      severities: { minor: { type: 'simple', filters: [{ key: 'open', operator: '==', value: true }] } },
    });
    await door.send({ open: true });
    const [alarm] = await eventually(async () => {
      const list = await alarmsOf('door-1');
      expect(list).toHaveLength(1);
      return list;
    }, 5000);
    const id = alarm!.id;
    const move = (action: string) => post(`/v1/iot/alarms/${id}/${action}`);
    const reopenEarly = await move('reopen');
    expect([reopenEarly.status, reopenEarly.body.detail.code]).toEqual([409, 'invalid_alarm_state']);
    const acked = await move('acknowledge');
    expect(acked.body).toMatchObject({ status: 'acknowledged', acknowledged: true });
    expect(acked.body.acknowledged_by).toMatch(/^pat:/);
    expect((await move('acknowledge')).status).toBe(409);
    await door.send({ open: true }); // Still open: no second alarm.
    const health = (await get('/v1/iot/devices/door-1/health')).body;
    expect(health.components.alarm_burden).toBe(90);
    const resolved = await move('resolve');
    expect(resolved.body).toMatchObject({ status: 'resolved', cleared_by: 'user' });
    expect((await move('resolve')).body.detail.code).toBe('invalid_alarm_state');
    const reopened = await move('reopen');
    expect(reopened.body).toMatchObject({ status: 'active', acknowledged: false, cleared_by: null });
    expect(await alarmsOf('door-1')).toHaveLength(1);
    expect((await post(`/v1/iot/alarms/${id}/resolve`, undefined, b.pat)).status).toBe(404);
    const summary = (await get('/v1/iot/alarms/summary')).body;
    expect(summary.by_status.active).toBeGreaterThanOrEqual(1);
    expect(summary.open_by_severity.minor).toBe(1);
    const events = (await get(`/v1/iot/alarms/${id}/timeline`)).body.events.map(
      (e: { event: string }) => e.event,
    );
    expect(events).toEqual(['created', 'acknowledged', 'resolved', 'reopened']);
  });

  it('fires a repeating rule on the Nth message in a row only', async () => {
    const pump = await device('pump-1');
    await rule({
      name: 'vibration',
      target: { type: 'device', value: 'pump-1' },
      severities: {
        major: {
          type: 'repeating',
          count: 3,
          filters: [{ key: 'vib', operator: 'between', min: 5, max: 100 }],
        },
      },
    });
    await pump.send({ vib: 6 });
    await pump.send({ vib: 7 });
    await pump.send({ vib: 1 }); // The run is broken: counting starts again.
    await pump.send({ vib: 8 });
    await pump.send({ vib: 9 });
    await new Promise((r) => setTimeout(r, 300));
    expect(await alarmsOf('pump-1')).toHaveLength(0);
    await pump.send({ vib: 10 });
    await eventually(async () => expect(await alarmsOf('pump-1')).toHaveLength(1), 5000);
  });

  it('fires a duration rule on the clock, also when the device goes quiet, and not before', async () => {
    const tank = await device('tank-1');
    await rule({
      name: 'pressure',
      target: { type: 'device', value: 'tank-1' },
      severities: {
        critical: {
          type: 'duration',
          duration_seconds: 120,
          filters: [{ key: 'bar', operator: '>=', value: 100 }],
        },
      },
    });
    await tank.send({ bar: 120 });
    await new Promise((r) => setTimeout(r, 300));
    await t.advance(60);
    expect(await alarmsOf('tank-1')).toHaveLength(0);
    await t.advance(90);
    const [alarm] = await eventually(async () => {
      // A loaded machine may judge the message after that sweep: each try sweeps again.
      await t.advance(1);
      const list = await alarmsOf('tank-1');
      expect(list).toHaveLength(1);
      return list;
    }, 5000);
    expect(alarm).toMatchObject({ severity: 'critical', status: 'active' });
  });

  it('fires an inactivity rule when the device stops and clears it when telemetry returns', async () => {
    const q = await device('quiet-1');
    await rule({
      name: 'silent sensor',
      target: { type: 'device', value: 'quiet-1' },
      severities: { major: { type: 'inactivity', inactivity_seconds: 600 } },
    });
    await q.send({ v: 1 });
    await t.advance(300);
    expect(await alarmsOf('quiet-1')).toHaveLength(0);
    await t.advance(400);
    await eventually(async () => {
      await t.advance(1); // sweeps again, should the message's last-seen have been written late
      expect(await alarmsOf('quiet-1', 'active')).toHaveLength(1);
    }, 5000);
    await q.send({ v: 2 });
    await eventually(
      async () =>
        expect((await alarmsOf('quiet-1'))[0]).toMatchObject({ status: 'resolved', cleared_by: 'rule' }),
      5000,
    );
  });

  it('does not judge a disabled rule, and judges it again once enabled', async () => {
    const h = await device('hum-1');
    const r = await rule({
      name: 'humidity',
      target: { type: 'device', value: 'hum-1' },
      severities: { warning: { type: 'simple', filters: [{ key: 'rh', operator: '>', value: 80 }] } },
    });
    expect((await post(`/v1/iot/rules/${r.id}/disable`)).body.enabled).toBe(false);
    await h.send({ rh: 90 });
    await new Promise((res) => setTimeout(res, 300));
    expect(await alarmsOf('hum-1')).toHaveLength(0);
    expect((await post(`/v1/iot/rules/${r.id}/enable`)).body.enabled).toBe(true);
    await h.send({ rh: 91 });
    await eventually(async () => expect(await alarmsOf('hum-1')).toHaveLength(1), 5000);
  });

  it('judges a rule on the messages carrying a key it reads, re-indexes an edited rule, forgets a deleted one', async () => {
    const d = await device('keys-1');
    const r = await rule({
      name: 'reads a',
      target: { type: 'device', value: 'keys-1' },
      severities: { warning: { type: 'simple', filters: [{ key: 'a', operator: '>', value: 10 }] } },
      clear_condition: { type: 'simple', filters: [{ key: 'a', operator: '<', value: 5 }] },
    });
    await d.send({ b: 50 });
    await d.send({ a: 20 });
    const [first] = await eventually(async () => {
      const list = await alarmsOf('keys-1', 'active');
      expect(list).toHaveLength(1);
      return list;
    }, 5000);
    // The edit reads `c` instead: `a` no longer clears nor fires, `c` does.
    const edited = await t.request('PATCH', `/v1/iot/rules/${r.id}`, {
      key: a.pat,
      body: {
        severities: { warning: { type: 'simple', filters: [{ key: 'c', operator: '>', value: 10 }] } },
        clear_condition: { type: 'simple', filters: [{ key: 'c', operator: '<', value: 5 }] },
      },
    });
    expect(edited.status, edited.text).toBe(200);
    await d.send({ a: 1 });
    await new Promise((res) => setTimeout(res, 300));
    expect((await alarmsOf('keys-1', 'active')).map((x) => x.id)).toEqual([first!.id]);
    await d.send({ c: 1 });
    await eventually(async () => expect(await alarmsOf('keys-1', 'active')).toHaveLength(0), 5000);
    await d.send({ a: 30 });
    await new Promise((res) => setTimeout(res, 300));
    expect(await alarmsOf('keys-1', 'active')).toHaveLength(0);
    await d.send({ c: 20 });
    const [second] = await eventually(async () => {
      const list = await alarmsOf('keys-1', 'active');
      expect(list).toHaveLength(1);
      return list;
    }, 5000);
    expect(second!.id).not.toBe(first!.id);
    // Resolved by a user: the engine learns it, so the next message that meets the condition opens
    // a new alarm.
    expect((await post(`/v1/iot/alarms/${second!.id}/resolve`)).status).toBe(200);
    await d.send({ c: 21 });
    const [third] = await eventually(async () => {
      const list = await alarmsOf('keys-1', 'active');
      expect(list).toHaveLength(1);
      return list;
    }, 5000);
    expect(third!.id).not.toBe(second!.id);
    expect((await post(`/v1/iot/alarms/${third!.id}/resolve`)).status).toBe(200);
    expect((await t.request('DELETE', `/v1/iot/rules/${r.id}`, { key: a.pat })).status).toBe(204);
    await d.send({ c: 50 });
    await new Promise((res) => setTimeout(res, 300));
    expect(await alarmsOf('keys-1', 'active')).toHaveLength(0);
  });

  it('counts a message once for a rule reading several of its keys, and not when it carries none', async () => {
    const d = await device('keys-2');
    const r = await rule({
      name: 'a and b',
      target: { type: 'device', value: 'keys-2' },
      severities: {
        major: {
          type: 'repeating',
          count: 2,
          filters: [
            { key: 'a', operator: '>', value: 10 },
            { key: 'b', operator: '>', value: 10 },
          ],
        },
      },
    });
    await d.send({ a: 20, b: 20 }); // One message: the count is 1, not 2.
    await d.send({ z: 1 }); // Reads neither key: not judged, the count stays.
    await new Promise((res) => setTimeout(res, 300));
    expect(await alarmsOf('keys-2')).toHaveLength(0);
    // The count is in the store, so a restart or another process carries on from it.
    const db = t.kernel.store.typed<IotTables>() as Kysely<IotTables>;
    await eventually(async () => {
      const rows = await db.selectFrom('iot_rule_state').selectAll().where('rule_id', '=', r.id).execute();
      expect(rows.map((x) => Number(x.count))).toEqual([1]);
    }, 5000);
    await d.send({ a: 21 }); // Judged against the latest b (20): the second in a row.
    await eventually(async () => expect(await alarmsOf('keys-2', 'active')).toHaveLength(1), 5000);
  });

  it('opens one alarm per device when many devices cross a threshold at once', async () => {
    const fleet = await Promise.all(Array.from({ length: 8 }, (_, i) => device(`burst-${i}`)));
    const r = await rule({
      name: 'burst',
      severities: {
        critical: { type: 'simple', filters: [{ key: 'burst', operator: '>', value: 90 }] },
        warning: { type: 'simple', filters: [{ key: 'burst', operator: '>', value: 50 }] },
      },
    });
    // The devices side by side, each one's readings in order (each acknowledged before the next).
    await Promise.all(
      fleet.map(async (d) => {
        for (const burst of [60, 95, 99]) await d.send({ burst });
      }),
    );
    const open = await eventually(async () => {
      const list = (await get(`/v1/iot/alarms?rule_id=${r.id}&status=active`)).body.alarms as {
        id: string;
        device_id: string;
        severity: string;
      }[];
      expect(list).toHaveLength(8);
      expect(list.every((x) => x.severity === 'critical')).toBe(true);
      return list;
    }, 10_000);
    expect(new Set(open.map((x) => x.device_id)).size).toBe(8);
    for (const x of open) {
      const events = (await get(`/v1/iot/alarms/${x.id}/timeline`)).body.events.map(
        (e: { event: string }) => e.event,
      );
      expect(events.filter((e: string) => e !== 'notified')).toEqual(['created', 'severity_changed']);
    }
    expect((await t.request('DELETE', `/v1/iot/rules/${r.id}`, { key: a.pat })).status).toBe(204);
  });

  it('learns of alarm moves made by another process from the store notices, and reads them again after a resync', async () => {
    const d = await device('elsewhere-1');
    const r = await rule({
      name: 'pressure elsewhere',
      target: { type: 'device', value: 'elsewhere-1' },
      severities: { major: { type: 'simple', filters: [{ key: 'p', operator: '>', value: 10 }] } },
    });
    const db = t.kernel.store.typed<IotTables>() as Kysely<IotTables>;
    const active = () => alarmsOf('elsewhere-1', 'active');
    /** Resolves the alarm as another Fjord process would: in the store, then (maybe) a notice. */
    const resolveElsewhere = async (id: string) => {
      await db
        .updateTable('iot_alarms')
        .set({ status: 'resolved', cleared_by: 'user' })
        .where('id', '=', id)
        .execute();
      const alarm = await db
        .selectFrom('iot_alarms')
        .select('device_pk')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      return alarm.device_pk;
    };
    await d.send({ p: 20 });
    const [first] = await eventually(async () => {
      const list = await active();
      expect(list).toHaveLength(1);
      return list;
    }, 5000);
    const pk = await resolveElsewhere(first!.id);
    await t.kernel.store.publish('fjord_iot_alarm_open', `another-process|${r.id}|${pk}|`);
    await new Promise((res) => setTimeout(res, 200));
    await d.send({ p: 21 }); // The engine knows none is open: a new alarm.
    const [second] = await eventually(async () => {
      const list = await active();
      expect(list).toHaveLength(1);
      return list;
    }, 5000);
    expect(second!.id).not.toBe(first!.id);
    // Notices were lost (the store's resync): every device's open alarms are read again.
    await resolveElsewhere(second!.id);
    await t.kernel.store.publish('fjord_iot_alarm_open', '');
    await new Promise((res) => setTimeout(res, 200));
    await d.send({ p: 22 });
    const [third] = await eventually(async () => {
      const list = await active();
      expect(list).toHaveLength(1);
      return list;
    }, 5000);
    expect(third!.id).not.toBe(second!.id);
  });

  it('never judges one account’s telemetry by another account’s rules', async () => {
    await device('shared-id');
    await rule({
      name: 'a watches shared-id',
      target: { type: 'device', value: 'shared-id' },
      severities: { critical: { type: 'simple', filters: [{ key: 'x', operator: '>', value: 0 }] } },
    });
    const theirs = await device('shared-id', b.pat);
    await theirs.send({ x: 99 });
    await new Promise((r) => setTimeout(r, 300));
    expect(await alarmsOf('shared-id')).toHaveLength(0);
    expect((await get('/v1/iot/alarms', b.pat)).body.total).toBe(0);
    expect((await get('/v1/iot/rules', b.pat)).body.rules).toHaveLength(0);
  });

  it('routes by severity: a policy for critical alarms ignores a warning', async () => {
    const ch = await post('/v1/iot/notifications/channels', {
      name: 'critical only',
      channel_type: 'webhook',
      config: { url: `${hooks.base}/critical` },
    });
    await post('/v1/iot/notifications/policies', {
      name: 'critical only',
      channel_ids: [ch.body.id],
      severities: ['critical'],
      device_ids: ['sev-1'],
    });
    const d = await device('sev-1');
    await rule({
      name: 'levels',
      target: { type: 'device', value: 'sev-1' },
      severities: {
        critical: { type: 'simple', filters: [{ key: 'v', operator: '>=', value: 10 }] },
        warning: { type: 'simple', filters: [{ key: 'v', operator: '>=', value: 5 }] },
      },
    });
    await d.send({ v: 6 });
    await eventually(async () => expect(await alarmsOf('sev-1')).toHaveLength(1), 5000);
    await t.advance(1);
    expect((await get(`/v1/iot/notifications/deliveries?channel_id=${ch.body.id}`)).body.total).toBe(0);
    await d.send({ v: 12 });
    const [hook] = await received('/critical', 1);
    expect(hook!.json).toMatchObject({ type: 'iot.alarm.escalated', alarm: { severity: 'critical' } });
  });

  it('refuses bad rules, channels and policies with a clear error', async () => {
    const none = await post('/v1/iot/rules', { name: 'x', severities: {} });
    expect([none.status, none.body.detail.code]).toEqual([422, 'invalid_rule']);
    const noCount = await post('/v1/iot/rules', {
      name: 'x',
      severities: { major: { type: 'repeating', filters: [{ key: 'a', operator: '>', value: 1 }] } },
    });
    expect(noCount.body.detail.errors[0].path).toBe('/body/severities/major/count');
    const badTarget = await post('/v1/iot/rules', {
      name: 'x',
      target: { type: 'group', value: 'nope' },
      severities: { major: { type: 'simple', filters: [{ key: 'a', operator: '>', value: 1 }] } },
    });
    expect(badTarget.status).toBe(422);
    const badZone = await post('/v1/iot/rules', {
      name: 'x',
      schedule: { timezone: 'Mars/Base', days: [1], start: '08:00', end: '17:00' },
      severities: { major: { type: 'simple', filters: [{ key: 'a', operator: '>', value: 1 }] } },
    });
    expect(badZone.body.detail.errors[0].path).toBe('/body/schedule/timezone');
    expect(
      (await post('/v1/iot/notifications/channels', { name: 'm', channel_type: 'email', config: {} })).status,
    ).toBe(422);
    const noUrl = await post('/v1/iot/notifications/channels', {
      name: 'w',
      channel_type: 'webhook',
      config: { url: 'ftp://x' },
    });
    expect(noUrl.body.detail.code).toBe('invalid_notification_setting');
    const badPolicy = await post('/v1/iot/notifications/policies', { name: 'p', channel_ids: ['nope'] });
    expect(badPolicy.status).toBe(422);
    const used = (await get('/v1/iot/notifications/channels')).body.channels[0].id;
    const del = await t.request('DELETE', `/v1/iot/notifications/channels/${used}`, { key: a.pat });
    expect([del.status, del.body.detail.code]).toEqual([409, 'channel_in_use']);
    expect((await get(`/v1/iot/notifications/channels/${used}`, b.pat)).status).toBe(404);
  });
});

describe('IoT limits under concurrency', () => {
  it('holds the rule and channel limits when creates arrive at once', async () => {
    const c = await t.customer();
    await expectLimitHolds({
      room: 30,
      attempts: 40,
      send: (i) =>
        post(
          '/v1/iot/rules',
          {
            name: `r${i}`,
            severities: { warning: { type: 'simple', filters: [{ key: 'k', operator: '>', value: i }] } },
          },
          c.pat,
        ),
      refusal: { status: 403, code: 'quota_exceeded' },
    });
    await expectLimitHolds({
      room: 20,
      attempts: 30,
      send: (i) =>
        post(
          '/v1/iot/notifications/channels',
          { name: `c${i}`, channel_type: 'webhook', config: { url: `${hooks.base}/c${i}` } },
          c.pat,
        ),
      refusal: { status: 403, code: 'quota_exceeded' },
    });
  });
});

describe('IoT notifications', () => {
  it('sends a marked test notification and answers its delivery', async () => {
    const ch = await post('/v1/iot/notifications/channels', {
      name: 'test',
      channel_type: 'webhook',
      config: { url: `${hooks.base}/test` },
    });
    const d = await post(`/v1/iot/notifications/channels/${ch.body.id}/test`);
    expect(d.status).toBe(202);
    expect(d.body).toMatchObject({ test: true, status: 'pending', channel_id: ch.body.id, alarm_id: null });
    const [hook] = await received('/test', 1);
    expect(hook!.json).toMatchObject({ type: 'iot.alarm.test', test: true });
  });

  it('sends alarms by e-mail (through the mail inbox) and by SMS (through the SMS area)', async () => {
    expect((await post('/v1/sms/sender-profiles', { name: 'Main', sender_id: '+4791000001' })).status).toBe(
      201,
    );
    const mail = await post('/v1/iot/notifications/channels', {
      name: 'mail',
      channel_type: 'email',
      config: { to: ['ops@example.test'] },
    });
    const sms = await post('/v1/iot/notifications/channels', {
      name: 'sms',
      channel_type: 'sms',
      config: { to: ['+4791234567'] },
    });
    expect([mail.status, sms.status]).toEqual([201, 201]);
    const badMail = await post('/v1/iot/notifications/channels', {
      name: 'x',
      channel_type: 'email',
      config: { to: ['not an address'] },
    });
    expect(badMail.body.detail.errors[0].path).toBe('/body/config/to');
    await post('/v1/iot/notifications/policies', {
      name: 'people',
      channel_ids: [mail.body.id, sms.body.id],
      device_ids: ['mail-1'],
    });
    const d = await device('mail-1');
    await rule({
      name: 'overheat',
      target: { type: 'device', value: 'mail-1' },
      severities: { critical: { type: 'simple', filters: [{ key: 't', operator: '>', value: 1 }] } },
    });
    await d.send({ t: 5 });
    const deliveries = await eventually(async () => {
      const list = (await get('/v1/iot/notifications/deliveries?status=delivered')).body.deliveries.filter(
        (x: { channel_id: string }) => x.channel_id === mail.body.id || x.channel_id === sms.body.id,
      );
      expect(list).toHaveLength(2);
      return list;
    }, 5000);
    expect(deliveries.every((x: { event: string }) => x.event === 'created')).toBe(true);
    const inbox = (await t.operator('GET', '/admin/v1/emulator/inbox?to=ops@example.test')).body.messages;
    expect(inbox[0].subject).toBe('[Fjord IoT] CRITICAL alarm created on mail-1: overheat');
    expect(inbox[0].text).toContain('"t":5');
    const texts = await t.request('GET', '/v1/sms/messages', {
      key: a.pat,
      query: { recipient: '+4791234567', message_type: 'ALERT' },
    });
    expect(texts.body.total).toBe(1);
  });

  it('throttles a flapping device, holds notifications in quiet hours and repeats while unacknowledged', async () => {
    const ch = await post('/v1/iot/notifications/channels', {
      name: 'flap',
      channel_type: 'webhook',
      config: { url: `${hooks.base}/flap` },
    });
    await post('/v1/iot/notifications/policies', {
      name: 'flap',
      channel_ids: [ch.body.id],
      device_ids: ['flap-1'],
      events: ['created', 'resolved'],
      renotify_minutes: 5,
    });
    const f = await device('flap-1');
    await rule({
      name: 'flapping',
      target: { type: 'device', value: 'flap-1' },
      severities: { warning: { type: 'simple', filters: [{ key: 'on', operator: '==', value: true }] } },
      clear_condition: { type: 'simple', filters: [{ key: 'on', operator: '==', value: false }] },
    });
    for (let i = 0; i < 6; i++) {
      await f.send({ on: true });
      await eventually(async () => expect(await alarmsOf('flap-1', 'active')).toHaveLength(1), 5000);
      await f.send({ on: false });
      await eventually(async () => expect(await alarmsOf('flap-1', 'active')).toHaveLength(0), 5000);
    }
    const all = await eventually(async () => {
      const d = (await get(`/v1/iot/notifications/deliveries?channel_id=${ch.body.id}&page_size=50`)).body;
      expect(d.total).toBe(12);
      return d.deliveries as { status: string; error: string | null }[];
    }, 5000);
    const throttled = all.filter((d) => d.status === 'suppressed');
    expect(throttled).toHaveLength(2);
    expect(throttled[0]!.error).toBe('throttled');

    // Repeated while active and unacknowledged, once the throttle window has passed.
    await t.advance(11 * 60);
    await f.send({ on: true });
    await eventually(async () => expect(await alarmsOf('flap-1', 'active')).toHaveLength(1), 5000);
    // The alarm's own `created` delivery is recorded just after the alarm: counted before the
    // clock moves, so the renotify is the only delivery the next step adds.
    const before = await eventually(async () => {
      const d = (await get(`/v1/iot/notifications/deliveries?channel_id=${ch.body.id}`)).body;
      expect(d.total).toBe(13);
      expect(d.deliveries[0].event).toBe('created');
      return d.total as number;
    }, 5000);
    await t.advance(6 * 60);
    await eventually(async () => {
      const d = (await get(`/v1/iot/notifications/deliveries?channel_id=${ch.body.id}`)).body;
      expect(d.total).toBe(before + 1);
      expect(d.deliveries[0].event).toBe('renotify');
    }, 5000);

    // Quiet hours all day: recorded, not sent.
    const quiet = await post('/v1/iot/notifications/channels', {
      name: 'quiet',
      channel_type: 'webhook',
      config: { url: `${hooks.base}/quiet` },
    });
    await post('/v1/iot/notifications/policies', {
      name: 'quiet',
      channel_ids: [quiet.body.id],
      device_ids: ['quiet-2'],
      quiet_hours: { timezone: 'Europe/Oslo', start: '00:00', end: '00:00' },
    });
    const q = await device('quiet-2');
    await rule({
      name: 'quiet',
      target: { type: 'device', value: 'quiet-2' },
      severities: { warning: { type: 'simple', filters: [{ key: 'x', operator: '>', value: 0 }] } },
    });
    await q.send({ x: 1 });
    await eventually(async () => {
      const d = (await get(`/v1/iot/notifications/deliveries?channel_id=${quiet.body.id}`)).body.deliveries;
      expect(d).toHaveLength(1);
      expect(d[0]).toMatchObject({ status: 'suppressed', error: 'quiet_hours' });
    }, 5000);
    expect(hooks.to('/quiet')).toHaveLength(0);
  });
});

import mqtt from 'mqtt';
import { describe, expect, it } from 'vitest';
import type { IotEvent } from '../../src/areas/iot/index.js';
import type { DeviceCreds } from '../helpers/iot.js';
import { latch } from '../helpers/latch.js';
import { useBroker } from '../helpers/mqtt-fixture.js';

/**
 * The MQTT broker with a real client (MQTT.js over TCP): device logins, the topic tree a device
 * may use, telemetry stored before its QoS 1 acknowledgement and read back through the API,
 * connection state, and a deleted device's live connection dropped.
 */
const broker = useBroker();
const device = (deviceId: string, key?: string) => broker.device(deviceId, key);
const connect = (c: DeviceCreds, password = c.password) => broker.connect(c, { password });
const next = (kind: IotEvent['kind'], deviceId: string) => broker.nextEvent(kind, deviceId);

describe('the MQTT broker', () => {
  it('stores telemetry before acknowledging it and shows the device online', async () => {
    const c = await device('meter-1');
    const connected = next('connected', 'meter-1');
    const client = await connect(c);
    await connected;
    expect(
      (await broker.t.request('GET', '/v1/iot/devices/meter-1', { key: broker.a.pat })).body,
    ).toMatchObject({
      is_online: true,
      connection_status: 'connected',
    });
    await client.publishAsync(`${c.topic_root}/telemetry`, JSON.stringify({ temp: 21.5, door: true }), {
      qos: 1,
    });
    await client.publishAsync(
      `${c.topic_root}/telemetry`,
      JSON.stringify([{ ts: 1_700_000_000_000, values: { temp: 19, mode: 'eco' } }]),
      { qos: 1 },
    );
    // The PUBACKs came back: the points are in the store already.
    const all = await broker.t.request('GET', '/v1/iot/devices/meter-1/telemetry?keys=temp', {
      key: broker.a.pat,
    });
    expect(all.body.points.map((p: { value: unknown }) => p.value)).toEqual([21.5, 19]);
    const latest = await broker.t.request('GET', '/v1/iot/devices/meter-1/telemetry/latest', {
      key: broker.a.pat,
    });
    expect(latest.body.values).toMatchObject({
      temp: { value: 21.5 },
      door: { value: true },
      mode: { value: 'eco', ts: new Date(1_700_000_000_000).toISOString() },
    });
    // A malformed message is dropped and the connection lives on.
    await client.publishAsync(`${c.topic_root}/telemetry`, 'not json', { qos: 1 });
    await client.publishAsync(`${c.topic_root}/telemetry`, JSON.stringify({ temp: 22 }), { qos: 1 });
    const after = await broker.t.request('GET', '/v1/iot/devices/meter-1/telemetry/latest', {
      key: broker.a.pat,
    });
    expect(after.body.values.temp.value).toBe(22);

    const gone = next('disconnected', 'meter-1');
    await client.endAsync();
    await gone;
    expect(
      (await broker.t.request('GET', '/v1/iot/devices/meter-1', { key: broker.a.pat })).body.is_online,
    ).toBe(false);
  });

  it('refuses a wrong password, a borrowed client id and a suspended customer', async () => {
    const c = await device('meter-2');
    await expect(connect(c, 'wrong-password')).rejects.toMatchObject({ code: 4 });
    await expect(connect({ ...c, client_id: 'someone-else' })).rejects.toMatchObject({ code: 2 });
    const b = await broker.t.customer();
    const d = await device('meter-3', b.pat);
    // Connected when the customer is suspended: dropped at once, and refused on the way back.
    const live = await connect(d);
    const dropped = new Promise<void>((resolve) => live.once('close', () => resolve()));
    await broker.t.operator('PATCH', `/admin/v1/customers/${b.id}`, { status: 'suspended' });
    await dropped;
    await expect(connect(d)).rejects.toMatchObject({ code: 5 });
  });

  it('takes several sessions of one device (username, and username-suffix ids) and drops them all', async () => {
    const c = await device('meter-7');
    const other = await device('meter-8');
    // A subscriber and a publisher, as mosquitto_sub and mosquitto_pub: neither kicks the other off.
    const sub = await connect({ ...c, client_id: `${c.username}-sub` });
    const pub = await connect(c);
    await sub.subscribeAsync(`${c.topic_root}/commands`, { qos: 1 });
    const got = new Promise<string>((resolve) => sub.once('message', (_t, m) => resolve(m.toString())));
    const sent = await broker.t.request('POST', '/v1/iot/devices/meter-7/commands', {
      key: broker.a.pat,
      body: { name: 'open', params: {} },
    });
    expect(sent.status).toBe(202);
    expect(JSON.parse(await got)).toMatchObject({ name: 'open' });
    // Online while one session is.
    await pub.endAsync();
    expect(
      (await broker.t.request('GET', '/v1/iot/devices/meter-7', { key: broker.a.pat })).body.is_online,
    ).toBe(true);
    // Another device's id with a suffix, or a suffix of odd characters, is not this login's.
    await expect(connect({ ...c, client_id: `${other.username}-sub` })).rejects.toMatchObject({ code: 2 });
    await expect(connect({ ...c, client_id: `${c.username}-a/b` })).rejects.toMatchObject({ code: 2 });
    // A deleted device loses every session at once.
    const second = await connect({ ...c, client_id: `${c.username}-pub-2` });
    const closed = [sub, second].map((s) => new Promise<void>((resolve) => s.once('close', () => resolve())));
    expect((await broker.t.request('DELETE', '/v1/iot/devices/meter-7', { key: broker.a.pat })).status).toBe(
      204,
    );
    await Promise.all(closed);
  });

  it('keeps a device in its own topic tree and drops a deleted device at once', async () => {
    const mine = await device('meter-4');
    const other = await device('meter-5');
    const client = await connect(mine);
    const granted = await client.subscribeAsync(`${mine.topic_root}/commands/#`, { qos: 1 });
    expect(granted.map((g) => g.qos)).toEqual([1]);
    // Another device's tree: the SUBACK carries the failure code, which MQTT.js turns into an error.
    await expect(client.subscribeAsync(`${other.topic_root}/#`, { qos: 1 })).rejects.toThrow(
      /Subscribe error/,
    );

    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    expect((await broker.t.request('DELETE', '/v1/iot/devices/meter-4', { key: broker.a.pat })).status).toBe(
      204,
    );
    await closed;
    await expect(connect(mine)).rejects.toMatchObject({ code: 4 });

    // Publishing outside its tree ends the offender's connection and stores nothing.
    const intruder = await device('meter-6');
    const c6 = await connect(intruder);
    const cut = new Promise<void>((resolve) => c6.once('close', () => resolve()));
    c6.publish(`${other.topic_root}/telemetry`, JSON.stringify({ temp: 99 }), { qos: 1 });
    await cut;
    const stored = await broker.t.request('GET', '/v1/iot/devices/meter-5/telemetry', { key: broker.a.pat });
    expect(stored.body.points).toEqual([]);
  });

  it.each([
    ['its device is deleted', 'meter-9', 'DELETE /v1/iot/devices/meter-9'],
    ['its customer is suspended', 'meter-10', 'suspend'],
  ])('ends a login under way when %s', async (_, deviceId, change) => {
    const owner = change === 'suspend' ? await broker.t.customer() : broker.a;
    const c = await device(deviceId, owner.pat);
    // Holds the login between its password check and the rest of it: the change comes then.
    const iot = broker.iot();
    const checkPassword = iot.authenticate.bind(iot);
    const passwordChecked = latch();
    const held = latch();
    iot.authenticate = async (...args) => {
      const r = await checkPassword(...args);
      passwordChecked.open();
      await held.opened;
      return r;
    };
    const client = mqtt.connect(`mqtt://127.0.0.1:${c.port}`, {
      username: c.username,
      password: c.password,
      clientId: c.client_id,
      reconnectPeriod: 0,
    });
    broker.opened.push(client);
    let acknowledged = false;
    client.once('connect', () => {
      acknowledged = true;
    });
    const ended = new Promise<void>((r) => client.once('close', () => r()));
    await passwordChecked.opened;
    iot.authenticate = checkPassword;
    if (change === 'suspend') {
      // The broker hears of it through the store's notice (later, on PostgreSQL); its listener
      // was added at start, so it has run when this one runs.
      const identity = broker.t.fjord.kernel.identity;
      let stop = () => {};
      const heard = new Promise<void>((r) => {
        stop = identity.onCustomerStatusChanged((id) => id === owner.id && r());
      });
      await broker.t.operator('PATCH', `/admin/v1/customers/${owner.id}`, { status: 'suspended' });
      await heard;
      stop();
    } else
      expect(
        (await broker.t.request('DELETE', `/v1/iot/devices/${deviceId}`, { key: owner.pat })).status,
      ).toBe(204);
    held.open();
    // Let in on the state from before the change, the session ends as it registers, unacknowledged.
    await ended;
    expect(acknowledged).toBe(false);
  });

  it('delivers a command sent through the API to the connected device at QoS 1', async () => {
    const c = await device('valve-1');
    const send = () =>
      broker.t.request('POST', '/v1/iot/devices/valve-1/commands', {
        key: broker.a.pat,
        body: { name: 'open', params: { percent: 40 } },
      });
    const offline = await send();
    expect([offline.status, offline.body.detail.code]).toEqual([409, 'device_offline']);
    const client = await connect(c);
    await client.subscribeAsync(`${c.topic_root}/commands`, { qos: 1 });
    const received = new Promise<{ topic: string; qos: number; body: Record<string, unknown> }>((resolve) =>
      client.once('message', (topic, payload, packet) =>
        resolve({ topic, qos: packet.qos, body: JSON.parse(payload.toString()) }),
      ),
    );
    const sent = await send();
    expect(sent.status).toBe(202);
    const got = await received;
    expect(got).toMatchObject({
      topic: `${c.topic_root}/commands`,
      qos: 1,
      body: { id: sent.body.command_id, name: 'open', params: { percent: 40 } },
    });
  });

  it('tells how to connect and what the plan allows', async () => {
    const info = await broker.t.request('GET', '/v1/iot/credentials', { key: broker.a.pat });
    const c = await device('info-1');
    expect(info.body.ports).toEqual({ mqtt: c.port, mqtts: null, websocket: null });
    expect(info.body.example).toContain(`-p ${c.port}`);
    const sub = await broker.t.request('GET', '/v1/iot/subscription', { key: broker.a.pat });
    expect(sub.body).toMatchObject({ plan: 'free', device_limit: 10, group_limit: 100 });
    expect(sub.body.devices).toBeGreaterThan(0);
  });
});

import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { IotEvent, IotService } from '../../src/areas/iot/index.js';
import { REVOKE_CHANNEL, revocationNotice } from '../../src/areas/iot/revocation-notice.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { connectDevice, type DeviceCreds, registerDevice } from '../helpers/iot.js';
import { RawMqtt } from '../helpers/mqtt-raw.js';

/**
 * The protocol's fine print, each found wrong in aedes 1.2 as embedded before: delivery at the
 * QoS a wildcard subscription was granted, DUP on redelivery, a QoS 2 message resent before its
 * PUBREL stored once (and one left without its PUBREL forgotten by a clean session), and the wills
 * of deactivated and deleted devices.
 */
let t: TestFjord;
let a: TestCustomer;
const opened: MqttClient[] = [];
const raws: RawMqtt[] = [];
beforeAll(async () => {
  t = await TestFjord.create({ FJORD_API_PORT: '0', FJORD_MQTT_PORT: '0' });
  await t.fjord.start(['api', 'mqtt']);
  a = await t.customer();
});
afterAll(async () => {
  for (const c of opened) c.end(true);
  for (const r of raws) r.close();
  await t.close();
});

const iot = () => t.fjord.areas.get('iot')!.service as IotService;
const nextEvent = (kind: IotEvent['kind'], deviceId: string) =>
  new Promise<IotEvent>((resolve) => {
    const stop = iot().stream.subscribe((e) => {
      if (e.kind === kind && e.device_id === deviceId) {
        stop();
        resolve(e);
      }
    });
  });
async function telemetryRows(deviceId: string): Promise<number> {
  const r = await t.kernel.store.db
    .selectFrom('iot_telemetry')
    .innerJoin('iot_devices', 'iot_devices.id', 'iot_telemetry.device_pk')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('iot_devices.device_id', '=', deviceId)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}
/** Waits until telemetry sent before now is committed: another device's QoS 1 message is acknowledged after its own commit, in order. */
let flusher: DeviceCreds | null = null;
async function flushTelemetry() {
  flusher ??= await registerDevice(t, a.pat, 'flush');
  const other = flusher;
  const c = await connectDevice(other, opened);
  await c.publishAsync(`${other.topic_root}/telemetry`, JSON.stringify({ n: 1 }), { qos: 1 });
  c.end(true);
}

it('delivers a QoS 2 publish to a wildcard subscription granted QoS 1 at QoS 1 (MQTT-3.8.4-6)', async () => {
  const d = await registerDevice(t, a.pat, 'fp-qos');
  const c = await connectDevice(d, opened);
  const granted = await c.subscribeAsync(`${d.topic_root}/#`, { qos: 1 });
  expect(granted[0]?.qos).toBe(1);
  const got = new Promise<number>((resolve) =>
    c.once('message', (_topic, _payload, packet) => resolve(packet.qos)),
  );
  await c.publishAsync(`${d.topic_root}/events`, 'x', { qos: 2 });
  expect(await got).toBe(1);
});

it('sends an unacknowledged QoS 1 message again with DUP=1 when the persistent session resumes', async () => {
  const d = await registerDevice(t, a.pat, 'fp-dup');
  const login = {
    username: d.username,
    password: d.password,
    clientId: d.client_id,
    reconnectPeriod: 0,
    protocolVersion: 4 as const,
    clean: false,
  };
  const first = await mqtt.connectAsync(`mqtt://127.0.0.1:${d.port}`, login);
  opened.push(first);
  await first.subscribeAsync(`${d.topic_root}/inbox`, { qos: 1 });
  // Never acknowledged: the handler never calls back, so MQTT.js sends no PUBACK.
  const firstCopy = new Promise<{ dup: boolean }>((resolve) => {
    first.handleMessage = (packet) => resolve({ dup: packet.dup });
  });
  await first.publishAsync(`${d.topic_root}/inbox`, 'hello', { qos: 1 });
  expect((await firstCopy).dup).toBe(false);
  const gone = nextEvent('disconnected', 'fp-dup');
  first.end(true);
  await gone;

  // Listening from the start: the queued message follows the CONNACK at once.
  const again = mqtt.connect(`mqtt://127.0.0.1:${d.port}`, login);
  opened.push(again);
  const second = new Promise<{ dup: boolean; payload: string }>((resolve) =>
    again.on('message', (_t, payload, packet) => resolve({ dup: packet.dup, payload: payload.toString() })),
  );
  expect(await second).toEqual({ dup: true, payload: 'hello' });
});

it('stores a QoS 2 telemetry message sent again with DUP before its PUBREL once', async () => {
  const d = await registerDevice(t, a.pat, 'fp-qos2');
  const raw = await RawMqtt.open(d.port, {
    username: d.username,
    password: d.password,
    clientId: d.client_id,
  });
  raws.push(raw);
  const publish = {
    cmd: 'publish',
    topic: `${d.topic_root}/telemetry`,
    payload: Buffer.from(JSON.stringify({ temperature: 21.5 })),
    qos: 2,
    messageId: 7,
    retain: false,
    dup: false,
  };
  let rec = raw.next((p) => p.cmd === 'pubrec');
  raw.send(publish);
  await rec;
  rec = raw.next((p) => p.cmd === 'pubrec');
  raw.send({ ...publish, dup: true });
  await rec;
  const comp = raw.next((p) => p.cmd === 'pubcomp');
  raw.send({ cmd: 'pubrel', messageId: 7 });
  await comp;
  await flushTelemetry();
  expect(await telemetryRows('fp-qos2')).toBe(1);
});

it('forgets a QoS 2 message awaiting PUBREL at a clean-session connect: the next one under its packet id is stored', async () => {
  const d = await registerDevice(t, a.pat, 'fp-qos2-clean');
  const login = { username: d.username, password: d.password, clientId: d.client_id };
  const publish = (temperature: number) => ({
    cmd: 'publish',
    topic: `${d.topic_root}/telemetry`,
    payload: Buffer.from(JSON.stringify({ temperature })),
    qos: 2,
    messageId: 9,
    retain: false,
    dup: false,
  });
  // Left without its PUBREL: the session holds it until the next connection starts clean.
  const first = await RawMqtt.open(d.port, { ...login, clean: false });
  raws.push(first);
  let rec = first.next((p) => p.cmd === 'pubrec');
  first.send(publish(20));
  await rec;
  const gone = nextEvent('disconnected', 'fp-qos2-clean');
  first.close();
  await gone;

  // MQTT-3.1.2-6: a clean session discards the state of the one before, so this is a new message.
  const second = await RawMqtt.open(d.port, { ...login, clean: true });
  raws.push(second);
  rec = second.next((p) => p.cmd === 'pubrec');
  second.send(publish(22));
  await rec;
  const comp = second.next((p) => p.cmd === 'pubcomp');
  second.send({ cmd: 'pubrel', messageId: 9 });
  await comp;
  await flushTelemetry();
  expect(await telemetryRows('fp-qos2-clean')).toBe(2);
});

async function connectWithWill(d: DeviceCreds) {
  const c = await mqtt.connectAsync(`mqtt://127.0.0.1:${d.port}`, {
    username: d.username,
    password: d.password,
    clientId: d.client_id,
    reconnectPeriod: 0,
    protocolVersion: 4,
    will: {
      topic: `${d.topic_root}/telemetry`,
      payload: Buffer.from('{"temperature": 99}'),
      qos: 1,
      retain: false,
    },
  });
  opened.push(c);
  return c;
}

it('does not store the will of a device deactivated while connected', async () => {
  const d = await registerDevice(t, a.pat, 'fp-will-off');
  await connectWithWill(d);
  const gone = nextEvent('disconnected', 'fp-will-off');
  const r = await t.request('PATCH', '/v1/iot/devices/fp-will-off', {
    key: a.pat,
    body: { is_active: false },
  });
  expect(r.status, r.text).toBe(200);
  await gone;
  await flushTelemetry();
  expect(await telemetryRows('fp-will-off')).toBe(0);
});

it('logs no foreign-key error for the will of a device deleted while connected', async () => {
  const d = await registerDevice(t, a.pat, 'fp-will-del');
  const c = await connectWithWill(d);
  const closed = new Promise<void>((r) => c.once('close', () => r()));
  const r = await t.request('DELETE', '/v1/iot/devices/fp-will-del', { key: a.pat });
  expect(r.status, r.text).toBe(204);
  await closed;
  await flushTelemetry();
  const complaints = t.logs.filter((l) => /telemetry not stored|foreign key/i.test(l));
  expect(complaints).toEqual([]);
});

it('keeps the new login of a rotated device when the revocation notice comes back late', async () => {
  const d = await registerDevice(t, a.pat, 'fp-rotate');
  const old = await connectDevice(d, opened);
  const oldClosed = new Promise<void>((r) => old.once('close', () => r()));
  const rot = await t.request('POST', '/v1/iot/devices/fp-rotate/credentials/rotate', { key: a.pat });
  expect(rot.status, rot.text).toBe(200);
  await oldClosed; // the session that logged in with the old password ends at once
  const before = Date.now() - 1;
  const fresh = await connectDevice({ ...d, password: rot.body.password }, opened);
  // The rotation's notice as PostgreSQL's NOTIFY may deliver it under load: after the new login.
  const heard = new Promise<void>((resolve) =>
    iot().revocations.on('revoke', (username) => username === 'd_sentinel' && resolve()),
  );
  await t.kernel.store.publish(REVOKE_CHANNEL, revocationNotice({ username: d.username, at: before }));
  // Notices arrive in the order they were committed: once the sentinel is heard, so was the late one.
  await t.kernel.store.publish(REVOKE_CHANNEL, revocationNotice({ username: 'd_sentinel', at: before }));
  await heard;
  expect(fresh.connected).toBe(true);
  await fresh.publishAsync(`${d.topic_root}/telemetry`, JSON.stringify({ n: 1 }), { qos: 1 });
  // A revocation made after that login does end it.
  const freshClosed = new Promise<void>((r) => fresh.once('close', () => r()));
  await t.kernel.store.publish(REVOKE_CHANNEL, revocationNotice({ username: d.username, at: Date.now() }));
  await freshClosed;
});

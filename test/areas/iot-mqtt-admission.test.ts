import { connect, type Socket } from 'node:net';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type Reply, type TestCustomer, TestFjord } from '../helpers/fjord.js';
import { type DeviceCreds, registerDevice } from '../helpers/iot.js';
import { expectLimitHolds } from '../helpers/race.js';

/**
 * Admission control on the broker: a connect flood from one address is cut at its connect rate
 * while a device from another address still gets in, and a customer's live connections stop at
 * its plan's cap however many devices log in at once.
 */
const FLOOD_RATE = 20;
const FLOOD = 200;
const CONNECTION_CAP = 3;
let t: TestFjord;
let a: TestCustomer;
const opened: MqttClient[] = [];
const flood: Socket[] = [];
beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_API_PORT: '0',
    FJORD_MQTT_PORT: '0',
    FJORD_RATE_LIMITS: JSON.stringify({ 'mqtt.connect': { points: FLOOD_RATE, duration: 3600 } }),
    FJORD_LIMITS: JSON.stringify({ 'iot.mqtt_connections': CONNECTION_CAP }),
  });
  await t.fjord.start(['api', 'mqtt']);
  a = await t.customer();
});
afterAll(async () => {
  for (const c of opened) c.end(true);
  for (const s of flood) s.destroy();
  await t.close();
});

const brokerPort = async () => (await registerDevice(t, a.pat, `probe-${opened.length}`)).port;

it('cuts a connect flood from one address at its rate while a device from another address logs in', async () => {
  const port = await brokerPort();
  // Idle sockets that never send CONNECT, all from 127.0.0.2 (still loopback).
  let closed = 0;
  for (let i = 0; i < FLOOD; i++) {
    const s = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' });
    s.on('error', () => {});
    s.on('close', () => closed++);
    flood.push(s);
  }
  await eventually(async () => expect(closed).toBe(FLOOD - FLOOD_RATE), 20_000);

  const d = await registerDevice(t, a.pat, 'flood-survivor');
  const c = await mqtt.connectAsync(`mqtt://127.0.0.1:${d.port}`, {
    username: d.username,
    password: d.password,
    clientId: d.client_id,
    reconnectPeriod: 0,
    protocolVersion: 4,
  });
  opened.push(c);
  expect(c.connected).toBe(true);
  c.end(true);
  for (const s of flood) s.destroy();
});

it('holds a customer to its connection cap when its devices log in together', async () => {
  const b = await t.customer();
  const devices: DeviceCreds[] = [];
  for (let i = 0; i < 8; i++) devices.push(await registerDevice(t, b.pat, `cap-${i}`));
  const asReply = (status: number, text: string): Reply => ({
    status,
    headers: {},
    body: null,
    text,
    raw: Buffer.from(text),
  });
  const { succeeded } = await expectLimitHolds({
    room: CONNECTION_CAP,
    attempts: devices.length,
    // CONNACK 0 → 201; CONNACK 3 (server unavailable) → 503.
    send: async (i) => {
      const d = devices[i]!;
      try {
        const c = await mqtt.connectAsync(`mqtt://127.0.0.1:${d.port}`, {
          username: d.username,
          password: d.password,
          clientId: d.client_id,
          reconnectPeriod: 0,
          protocolVersion: 4,
        });
        opened.push(c);
        return asReply(201, d.client_id);
      } catch (err) {
        const code = (err as { code?: number }).code;
        return asReply(code === 3 ? 503 : 500, String(err));
      }
    },
    refusal: { status: 503 },
  });
  // A connection given back makes room for one more.
  const leaving = opened.find((c) => c.options.clientId === succeeded[0]!.text)!;
  await leaving.endAsync(true);
  const refusedOne = devices.find((d) => !succeeded.some((r) => r.text === d.client_id))!;
  await eventually(async () => {
    const c = await mqtt.connectAsync(`mqtt://127.0.0.1:${refusedOne.port}`, {
      username: refusedOne.username,
      password: refusedOne.password,
      clientId: refusedOne.client_id,
      reconnectPeriod: 0,
      protocolVersion: 4,
    });
    opened.push(c);
  }, 10_000);
});

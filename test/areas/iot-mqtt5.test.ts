import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import mqtt, { type IClientOptions, type IConnackPacket, type MqttClient } from 'mqtt';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DeviceCreds } from '../helpers/iot.js';
import { useBroker } from '../helpers/mqtt-fixture.js';
import { RawMqtt } from '../helpers/mqtt-raw.js';

/**
 * MQTT 5 next to 3.1.1, with MQTT.js 5 (`protocolVersion: 5`), raw v5 packets and mosquitto_pub/
 * sub `-V mqttv5`: the conformance cases of the Paho v5 interoperability suite that apply to a
 * broker with per-device logins and topic trees (reason codes, assigned client id, server
 * keep-alive, session and message expiry, topic aliases, properties passed through, maximum
 * packet size), on TCP, TLS and WebSocket.
 */
const f = useBroker({
  FJORD_MQTT_TLS_PORT: '0',
  FJORD_MQTT_WS_PORT: '0',
  FJORD_LIMITS: JSON.stringify({ 'iot.devices': 30 }),
});
const run = promisify(execFile);
let ports: { mqtt: number; mqtts: number; websocket: number };
beforeAll(async () => {
  ports = (await f.t.request('GET', '/v1/iot/credentials', { key: f.a.pat })).body.ports;
});

const v5 = (extra: IClientOptions & { url?: string } = {}) => ({ protocolVersion: 5 as const, ...extra });

/** Connects with MQTT 5 and answers the client and its CONNACK, or the refusal's reason code. */
function connack(c: DeviceCreds, extra: IClientOptions = {}) {
  return new Promise<{ client: MqttClient; ack: IConnackPacket } | { refused: number }>((resolve) => {
    const client = mqtt.connect(`mqtt://127.0.0.1:${c.port}`, {
      username: c.username,
      password: c.password,
      clientId: c.client_id,
      reconnectPeriod: 0,
      protocolVersion: 5,
      ...extra,
    });
    f.opened.push(client);
    client.once('connect', (ack) => resolve({ client, ack }));
    client.once('error', (err) => resolve({ refused: (err as { code?: number }).code ?? -1 }));
  });
}

async function telemetryRows(deviceId: string): Promise<number> {
  const r = await f.t.request('GET', `/v1/iot/devices/${deviceId}/telemetry?keys=temp`, { key: f.a.pat });
  return r.body.points.length;
}

describe('MQTT 5 logins', () => {
  it('answers refusals with v5 reason codes', async () => {
    const d = await f.device('v5-login');
    expect(await connack(d, { password: 'wrong' })).toEqual({ refused: 0x86 });
    const other = await f.device('v5-login-other');
    expect(await connack(d, { clientId: other.client_id })).toEqual({ refused: 0x85 });
  });

  it('assigns the username as client id, imposes its keep-alive and advertises its limits', async () => {
    const d = await f.device('v5-assigned');
    const r = await connack(d, { clientId: '', keepalive: 0 });
    if (!('ack' in r)) throw new Error(`refused ${r.refused}`);
    expect(r.ack.reasonCode).toBe(0);
    expect(r.ack.properties).toMatchObject({
      assignedClientIdentifier: d.username,
      serverKeepAlive: 1200,
      topicAliasMaximum: 32,
      maximumPacketSize: 1024 * 1024,
    });
    // The session is the device's own: it publishes in its tree.
    await r.client.publishAsync(`${d.topic_root}/telemetry`, JSON.stringify({ temp: 1 }), { qos: 1 });
    expect(await telemetryRows('v5-assigned')).toBe(1);
  });

  it('cuts a session expiry past the broker’s longest and says so in the CONNACK', async () => {
    const d = await f.device('v5-expiry-cap');
    const r = await connack(d, { clean: false, properties: { sessionExpiryInterval: 0xffffffff } });
    if (!('ack' in r)) throw new Error(`refused ${r.refused}`);
    expect(r.ack.properties?.sessionExpiryInterval).toBe(7 * 24 * 3600);
  });
});

describe('MQTT 5 refusals keep the connection', () => {
  it('answers a publish outside the device’s tree with PUBACK 0x87 and a subscription with SUBACK 0x87', async () => {
    const d = await f.device('v5-acl');
    const other = await f.device('v5-acl-other');
    const client = await f.connect(d, v5());
    const refused = await client.publishAsync(`${other.topic_root}/telemetry`, '{"temp":1}', { qos: 1 }).then(
      () => 0,
      (err: { code?: number }) => err.code,
    );
    expect(refused).toBe(0x87);
    // MQTT.js 5 rejects a SUBSCRIBE with any refused filter; the SUBACK is on the error.
    const suback = await client
      .subscribeAsync([`${other.topic_root}/#`, `${d.topic_root}/#`], { qos: 1 })
      .then(
        () => null,
        (err: { packet?: { granted?: number[] } }) => err.packet?.granted,
      );
    expect(suback).toEqual([0x87, 1]);
    // Still connected: the next publish in its own tree is stored.
    await client.publishAsync(`${d.topic_root}/telemetry`, JSON.stringify({ temp: 2 }), { qos: 1 });
    expect(client.connected).toBe(true);
    expect(await telemetryRows('v5-acl')).toBe(1);
    expect(await telemetryRows('v5-acl-other')).toBe(0);
  });

  it('ends the connection with DISCONNECT 0x95 past the maximum packet size', async () => {
    const d = await f.device('v5-big');
    const raw = await RawMqtt.open(
      d.port,
      { username: d.username, password: d.password, clientId: d.client_id },
      5,
    );
    f.raws.push(raw);
    const disconnect = raw.next((p) => p.cmd === 'disconnect');
    raw.send({
      cmd: 'publish',
      topic: `${d.topic_root}/blob`,
      payload: Buffer.alloc(1024 * 1024 + 1),
      qos: 0,
      retain: false,
      dup: false,
    });
    expect(((await disconnect) as { reasonCode?: number }).reasonCode).toBe(0x95);
    await raw.closed();
  });
});

describe('MQTT 5 messages', () => {
  it('passes user properties, content type, payload format, response topic and correlation data to subscribers', async () => {
    const d = await f.device('v5-props');
    const sub = await f.connect(d, v5({ clientId: `${d.client_id}-sub` }));
    await sub.subscribeAsync(`${d.topic_root}/requests`, { qos: 1 });
    const got = new Promise<Record<string, unknown>>((resolve) =>
      sub.once('message', (_t, _p, packet) => resolve(packet.properties ?? {})),
    );
    const pub = await f.connect(d, v5());
    await pub.publishAsync(`${d.topic_root}/requests`, '{"op":"read"}', {
      qos: 1,
      properties: {
        userProperties: { app: 'meter', trace: ['a', 'b'] },
        contentType: 'application/json',
        payloadFormatIndicator: true,
        responseTopic: `${d.topic_root}/responses`,
        correlationData: Buffer.from('req-7'),
        messageExpiryInterval: 300,
      },
    });
    const props = await got;
    expect(props).toMatchObject({
      userProperties: { app: 'meter', trace: ['a', 'b'] },
      contentType: 'application/json',
      payloadFormatIndicator: true,
      responseTopic: `${d.topic_root}/responses`,
      correlationData: Buffer.from('req-7'),
    });
    expect(props.messageExpiryInterval).toBeGreaterThan(0);
    expect(props.messageExpiryInterval).toBeLessThanOrEqual(300);
  });

  it('publishes a will with its message properties and without the Will Delay Interval, which is no PUBLISH property', async () => {
    const d = await f.device('v5-will');
    const sub = await f.connect(d, v5({ clientId: `${d.client_id}-sub` }));
    await sub.subscribeAsync(`${d.topic_root}/last-words`, { qos: 1 });
    const got = new Promise<Record<string, unknown>>((resolve) =>
      sub.once('message', (_t, _p, packet) => resolve(packet.properties ?? {})),
    );
    const dying = await f.connect(
      d,
      v5({
        will: {
          topic: `${d.topic_root}/last-words`,
          payload: Buffer.from('gone'),
          qos: 1,
          retain: false,
          properties: { willDelayInterval: 0, userProperties: { a: '2' }, contentType: 'text/plain' },
        },
      }),
    );
    dying.stream.destroy(); // no DISCONNECT: the will is published
    const props = await got;
    // Paho's v5 client refuses a PUBLISH carrying it (MQTT 5, 3.3.2.3 lists what a PUBLISH has).
    expect(props).not.toHaveProperty('willDelayInterval');
    expect(props).toMatchObject({ userProperties: { a: '2' }, contentType: 'text/plain' });
  });

  it('resolves topic aliases, and stores telemetry sent by alias', async () => {
    const d = await f.device('v5-alias');
    const client = await f.connect(d, v5());
    const topic = `${d.topic_root}/telemetry`;
    await client.publishAsync(topic, JSON.stringify({ temp: 1 }), { qos: 1, properties: { topicAlias: 3 } });
    await client.publishAsync('', JSON.stringify({ temp: 2 }), { qos: 1, properties: { topicAlias: 3 } });
    expect(await telemetryRows('v5-alias')).toBe(2);
  });

  it('keeps a session for its expiry interval, with retained properties, and drops an expired message', async () => {
    const d = await f.device('v5-session');
    const login = v5({ clean: false, properties: { sessionExpiryInterval: 600 } });
    const first = await f.connect(d, login);
    await first.subscribeAsync(`${d.topic_root}/inbox`, { qos: 1 });
    const gone = f.nextEvent('disconnected', 'v5-session');
    await first.endAsync();
    await gone;
    const sender = await f.connect(d, v5({ clientId: `${d.client_id}-tx` }));
    await sender.publishAsync(`${d.topic_root}/inbox`, 'stale', {
      qos: 1,
      properties: { messageExpiryInterval: 1 },
    });
    await sender.publishAsync(`${d.topic_root}/inbox`, 'fresh', {
      qos: 1,
      properties: { messageExpiryInterval: 600, userProperties: { k: 'v' } },
    });
    // Past the first message's expiry interval (the broker counts whole seconds).
    await new Promise((r) => setTimeout(r, 2100));
    const received: { payload: string; props: Record<string, unknown> }[] = [];
    const back = mqtt.connect(`mqtt://127.0.0.1:${d.port}`, {
      username: d.username,
      password: d.password,
      clientId: d.client_id,
      reconnectPeriod: 0,
      ...login,
    });
    f.opened.push(back);
    back.on('message', (_t, payload, packet) =>
      received.push({ payload: payload.toString(), props: packet.properties ?? {} }),
    );
    const ack = await new Promise<IConnackPacket>((resolve) => back.once('connect', resolve));
    expect(ack.sessionPresent).toBe(true);
    // A marker sent after the reconnect arrives after whatever the session held.
    const marker = new Promise<void>((resolve) =>
      back.on('message', (_t, payload) => payload.toString() === 'marker' && resolve()),
    );
    await sender.publishAsync(`${d.topic_root}/inbox`, 'marker', { qos: 1 });
    await marker;
    expect(received.map((m) => m.payload)).toEqual(['fresh', 'marker']);
    expect(received[0]!.props).toMatchObject({ userProperties: { k: 'v' } });
  });

  it('ends a session with expiry 0 at disconnect', async () => {
    const d = await f.device('v5-no-session');
    const first = await f.connect(d, v5({ clean: false, properties: { sessionExpiryInterval: 0 } }));
    await first.subscribeAsync(`${d.topic_root}/inbox`, { qos: 1 });
    await first.endAsync();
    const r = await connack(d, { clean: false, properties: { sessionExpiryInterval: 60 } });
    if (!('ack' in r)) throw new Error(`refused ${r.refused}`);
    expect(r.ack.sessionPresent).toBe(false);
  });
});

describe('MQTT 5 on every listener', () => {
  it('takes telemetry over TLS and WebSocket', async () => {
    const d = await f.device('v5-listeners');
    const ca = readFileSync(join(f.t.fjord.kernel.config.dataDir, 'mqtt-tls', 'cert.pem'), 'utf8');
    const tls = await f.connect(d, v5({ url: `mqtts://localhost:${ports.mqtts}`, ca }));
    await tls.publishAsync(`${d.topic_root}/telemetry`, JSON.stringify({ temp: 1 }), { qos: 1 });
    const ws = await f.connect(
      d,
      v5({ url: `ws://127.0.0.1:${ports.websocket}/mqtt`, clientId: `${d.client_id}-ws` }),
    );
    await ws.publishAsync(`${d.topic_root}/telemetry`, JSON.stringify({ temp: 2 }), { qos: 1 });
    expect(await telemetryRows('v5-listeners')).toBe(2);
  });

  it('works with mosquitto_pub and mosquitto_sub -V mqttv5 (skipped without mosquitto-clients)', async (ctx) => {
    if (
      !(await run('mosquitto_pub', ['--help']).then(
        () => true,
        (e: { stdout?: string }) => /mqttv5/.test(e.stdout ?? ''),
      ))
    )
      return ctx.skip();
    const d = await f.device('v5-mosquitto');
    const base = [
      '-h',
      '127.0.0.1',
      '-p',
      String(d.port),
      '-V',
      'mqttv5',
      '-u',
      d.username,
      '-P',
      d.password,
    ];
    const sub = spawn('mosquitto_sub', [
      ...base,
      '-i',
      `${d.client_id}-sub`,
      '-t',
      `${d.topic_root}/events`,
      '-q',
      '1',
      '-C',
      '1',
      '-F',
      '%t|%C|%P|%p',
    ]);
    let out = '';
    let err = '';
    sub.stdout.on('data', (b) => (out += b));
    sub.stderr.on('data', (b) => (err += b));
    // 'close', not 'exit': 'exit' may come before the last of stdout has been read.
    const exited = new Promise<void>((resolve) => sub.once('close', () => resolve()));
    // Retained: the subscriber gets it whether its SUBSCRIBE is taken before or after.
    await f.nextEvent('connected', 'v5-mosquitto');
    await run('mosquitto_pub', [
      ...base,
      '-i',
      d.client_id,
      '-t',
      `${d.topic_root}/events`,
      '-q',
      '1',
      '-r',
      '-m',
      'door open',
      '-D',
      'publish',
      'content-type',
      'text/plain',
      '-D',
      'publish',
      'user-property',
      'site',
      'north',
    ]);
    await exited;
    expect({ out: out.trim(), err }).toEqual({
      out: `${d.topic_root}/events|text/plain|site:north|door open`,
      err: '',
    });
    // A publish outside its tree is refused with 0x87 and mosquitto_pub says so.
    const refused = await run('mosquitto_pub', [
      ...base,
      '-i',
      d.client_id,
      '-t',
      'devices/other/x',
      '-q',
      '1',
      '-m',
      'x',
    ]).then(
      (r) => r.stderr,
      (e: { stderr?: string }) => e.stderr ?? '',
    );
    expect(refused).toMatch(/not authori[sz]ed/i);
  });
});

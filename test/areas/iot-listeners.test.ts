import { execFile, execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { promisify } from 'node:util';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { makeSelfSigned, selfSignedPair } from '../../src/areas/iot/self-signed.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

/**
 * MQTT over TLS and over WebSocket: the same broker, logins and topic rules as plain TCP, with
 * MQTT.js (`mqtts://` trusting the self-signed certificate Fjord made, and `ws://…/mqtt`) and
 * mosquitto_pub --cafile; the ports reported by GET /v1/iot/credentials; an operator's own pair.
 */
const run = promisify(execFile);
let t: TestFjord;
let a: TestCustomer;
let cert: string;
let ports: { mqtt: number; mqtts: number; websocket: number };
const clients: MqttClient[] = [];
beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_API_PORT: '0',
    FJORD_MQTT_PORT: '0',
    FJORD_MQTT_TLS_PORT: '0',
    FJORD_MQTT_WS_PORT: '0',
  });
  await t.fjord.start(['api', 'mqtt']);
  a = await t.customer();
  cert = readFileSync(join(t.fjord.kernel.config.dataDir, 'mqtt-tls', 'cert.pem'), 'utf8');
  ports = (await t.request('GET', '/v1/iot/credentials', { key: a.pat })).body.ports;
});
afterAll(async () => {
  for (const c of clients) c.end(true);
  await t?.close();
});

interface Creds {
  username: string;
  password: string;
  client_id: string;
  topic_root: string;
}
async function device(deviceId: string): Promise<Creds> {
  const r = await t.request('POST', '/v1/iot/devices', {
    key: a.pat,
    body: { name: deviceId, device_id: deviceId },
  });
  expect(r.status).toBe(201);
  return r.body.mqtt_credentials;
}
async function connect(url: string, c: Creds, extra: IClientOptions = {}) {
  const client = await mqtt.connectAsync(url, {
    username: c.username,
    password: c.password,
    clientId: c.client_id,
    reconnectPeriod: 0,
    protocolVersion: 4,
    connectTimeout: 5000,
    ...extra,
  });
  clients.push(client);
  return client;
}
const tlsUrl = () => `mqtts://127.0.0.1:${ports.mqtts}`;
const wsUrl = () => `ws://127.0.0.1:${ports.websocket}/mqtt`;
const latest = async (id: string) =>
  (await t.request('GET', `/v1/iot/devices/${id}/telemetry/latest`, { key: a.pat })).body.values;

function hasCommand(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('MQTT over TLS and WebSocket', () => {
  it('reports the three ports in the connection info', async () => {
    const info = await t.request('GET', '/v1/iot/credentials', { key: a.pat });
    expect(info.status).toBe(200);
    expect(info.body.ports.mqtt).toBeGreaterThan(0);
    expect(info.body.ports.mqtts).toBeGreaterThan(0);
    expect(info.body.ports.websocket).toBeGreaterThan(0);
    expect(new Set(Object.values(info.body.ports)).size).toBe(3);
  });

  it('takes telemetry over mqtts:// from a client trusting the generated certificate', async () => {
    const c = await device('tls-1');
    const client = await connect(tlsUrl(), c, { ca: cert });
    await client.publishAsync(`${c.topic_root}/telemetry`, JSON.stringify({ temp: 20.5 }), { qos: 1 });
    // The PUBACK came back: the point is stored.
    expect((await latest('tls-1')).temp.value).toBe(20.5);
    await client.publishAsync(`${c.topic_root}/telemetry`, JSON.stringify({ temp: 21 }), { qos: 0 });
    await expect.poll(async () => (await latest('tls-1')).temp.value).toBe(21);
    // The same topic rules as over TCP.
    await expect(client.subscribeAsync('devices/someone-else/#', { qos: 1 })).rejects.toThrow(
      /Subscribe error/,
    );
  });

  it('is refused by a client that does not trust the certificate, and refuses a wrong password', async () => {
    const c = await device('tls-2');
    await expect(connect(tlsUrl(), c)).rejects.toThrow(/self[- ]signed/i);
    await expect(connect(tlsUrl(), { ...c, password: 'wrong' }, { ca: cert })).rejects.toMatchObject({
      code: 4,
    });
  });

  it('takes telemetry and delivers commands over ws://…/mqtt', async () => {
    const c = await device('ws-1');
    const client = await connect(wsUrl(), c);
    await client.publishAsync(`${c.topic_root}/telemetry`, JSON.stringify({ rssi: -70, door: false }), {
      qos: 1,
    });
    expect(await latest('ws-1')).toMatchObject({ rssi: { value: -70 }, door: { value: false } });

    await client.subscribeAsync(`${c.topic_root}/commands`, { qos: 1 });
    const received = new Promise<{ qos: number; body: Record<string, unknown> }>((resolve) =>
      client.once('message', (_topic, payload, packet) =>
        resolve({ qos: packet.qos, body: JSON.parse(payload.toString()) }),
      ),
    );
    const sent = await t.request('POST', '/v1/iot/devices/ws-1/commands', {
      key: a.pat,
      body: { name: 'reboot' },
    });
    expect(sent.status).toBe(202);
    expect(await received).toMatchObject({ qos: 1, body: { id: sent.body.command_id, name: 'reboot' } });

    // Deleting the device drops its WebSocket connection at once, as it does over TCP.
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    expect((await t.request('DELETE', '/v1/iot/devices/ws-1', { key: a.pat })).status).toBe(204);
    await closed;
    await expect(connect(wsUrl(), c)).rejects.toMatchObject({ code: 4 });
  });

  it('answers a plain HTTP request on the WebSocket port with 426, and no other path upgrades', async () => {
    const status = await new Promise<number>((resolve, reject) =>
      request(`http://127.0.0.1:${ports.websocket}/`, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on('error', reject)
        .end(),
    );
    expect(status).toBe(426);
    // Only /mqtt upgrades to a WebSocket.
    const refused = await new Promise<string>((resolve) => {
      const socket = new WebSocket(`ws://127.0.0.1:${ports.websocket}/elsewhere`, 'mqtt');
      socket.on('error', (err) => resolve(err.message));
      socket.on('open', () => resolve('open'));
    });
    expect(refused).toMatch(/400/);
  });

  it.skipIf(!hasCommand('mosquitto_pub'))(
    'takes telemetry from mosquitto_pub --cafile (skipped when mosquitto-clients is not installed)',
    async () => {
      const c = await device('tls-mosq');
      const caFile = join(t.fjord.kernel.config.dataDir, 'mqtt-tls', 'cert.pem');
      await run('mosquitto_pub', [
        ...['-h', '127.0.0.1', '-p', String(ports.mqtts), '--cafile', caFile, '-V', 'mqttv311'],
        ...['-i', c.client_id, '-u', c.username, '-P', c.password],
        ...['-q', '1', '-t', `${c.topic_root}/telemetry`, '-m', '{"humidity": 44}'],
      ]);
      expect((await latest('tls-mosq')).humidity.value).toBe(44);
    },
  );
});

describe('the MQTT TLS certificate', () => {
  it('is made once and reused, and made again when it does not name the host', async () => {
    const dir = join(t.fjord.kernel.config.dataDir, 'mqtt-tls');
    const again = await selfSignedPair(dir, ['localhost', '127.0.0.1']);
    expect(again).toMatchObject({ cert, regenerated: false });
    const other = await selfSignedPair(join(dir, 'other'), ['127.0.0.1']);
    const renamed = await selfSignedPair(join(dir, 'other'), ['127.0.0.1', 'mqtt.example']);
    expect(renamed.regenerated).toBe(true);
    expect(renamed.cert).not.toBe(other.cert);
  });

  it('is the operator’s own pair when FJORD_MQTT_TLS_CERT and FJORD_MQTT_TLS_KEY are set', async () => {
    const pair = await makeSelfSigned(['127.0.0.1']);
    const dir = t.fjord.kernel.config.dataDir;
    writeFileSync(join(dir, 'own-cert.pem'), pair.cert);
    writeFileSync(join(dir, 'own-key.pem'), pair.key);
    const own = await TestFjord.create({
      FJORD_MQTT_PORT: '0',
      FJORD_MQTT_TLS_PORT: '0',
      FJORD_MQTT_TLS_CERT: join(dir, 'own-cert.pem'),
      FJORD_MQTT_TLS_KEY: join(dir, 'own-key.pem'),
    });
    try {
      await own.fjord.start(['mqtt']);
      const customer = await own.customer();
      const info = await own.request('GET', '/v1/iot/credentials', { key: customer.pat });
      expect(info.body.ports.websocket).toBeNull();
      const served = await new Promise<string>((resolve, reject) => {
        const socket = tlsConnect({ host: '127.0.0.1', port: info.body.ports.mqtts, ca: pair.cert }, () => {
          resolve(socket.getPeerX509Certificate()!.toString());
          socket.end();
        }).on('error', reject);
      });
      expect(served.trim()).toBe(pair.cert.trim());
    } finally {
      await own.close();
    }
  });
});

// The broker's state survives its process: retained messages and a persistent session (its
// subscription and a QoS 1 message sent but not yet acknowledged) are there after a restart
// (SIGTERM) and after a kill -9, on whichever store this run uses.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, expect, it } from 'vitest';
import { freshTestStore, type TestStoreHandle } from '../helpers/store.js';

const FJORD = join(import.meta.dirname, '../../bin/fjord.js');
const stores: TestStoreHandle[] = [];
const children = new Set<ChildProcess>();
const clients: MqttClient[] = [];

afterAll(async () => {
  for (const c of clients) c.end(true);
  for (const child of children) child.kill('SIGKILL');
  for (const s of stores) await s.drop();
});

const envOf = (store: TestStoreHandle): Record<string, string> => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '/root',
  FJORD_DATA_DIR: store.dataDir,
  FJORD_API_PORT: '0',
  FJORD_MQTT_PORT: '0',
  FJORD_LOG_LEVEL: 'warn',
  FJORD_DEV_CREDENTIALS: '0',
  ...(store.databaseUrl ? { FJORD_DATABASE_URL: store.databaseUrl } : {}),
});

/** `fjord start --roles api,mqtt`; resolves with its API address and MQTT port from the banner. */
function startFjord(store: TestStoreHandle): Promise<{ child: ChildProcess; url: string; mqttPort: number }> {
  const child = spawn(process.execPath, [FJORD, 'start', '--roles', 'api,mqtt'], {
    env: envOf(store),
    stdio: 'pipe',
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk;
      const api = /^\s*api\s+http\s+(http:\/\/\S+)\s*$/m.exec(out)?.[1];
      const port = /^\s*mqtt\s+mqtt \(tcp\)\s+[\d.]+:(\d+)/m.exec(out)?.[1];
      if (api && port) resolve({ child, url: api, mqttPort: Number(port) });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => (out += c));
    child.once('exit', (code) => reject(new Error(`fjord exited (${code}) before listening:\n${out}`)));
  });
}

for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
  it(`keeps retained messages and a persistent session across a ${signal === 'SIGKILL' ? 'kill -9' : 'restart'}`, {
    timeout: 120_000,
  }, async () => {
    const store = await freshTestStore();
    stores.push(store);
    const first = await startFjord(store);
    const { pat } = JSON.parse(
      execFileSync(
        process.execPath,
        [FJORD, 'admin', 'customer', 'create', '--email', `mqtt-${signal}@example.test`],
        {
          env: envOf(store),
          encoding: 'utf8',
        },
      ),
    );
    const r = await fetch(`${first.url}/v1/iot/devices`, {
      method: 'POST',
      headers: { 'x-api-key': pat, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'keeper', device_id: 'keeper' }),
    });
    expect(r.status).toBe(201);
    const d = (
      (await r.json()) as {
        mqtt_credentials: { username: string; password: string; client_id: string; topic_root: string };
      }
    ).mqtt_credentials;
    const login = {
      username: d.username,
      password: d.password,
      clientId: d.client_id,
      reconnectPeriod: 0,
      protocolVersion: 4 as const,
      clean: false,
    };

    const before = await mqtt.connectAsync(`mqtt://127.0.0.1:${first.mqttPort}`, login);
    clients.push(before);
    await before.subscribeAsync(`${d.topic_root}/inbox`, { qos: 1 });
    await before.publishAsync(`${d.topic_root}/state`, 'on', { qos: 1, retain: true });
    // Received, never acknowledged: it stays in the session, under the packet id it was sent with.
    const held = new Promise<void>((resolve) => {
      before.handleMessage = () => resolve();
    });
    await before.publishAsync(`${d.topic_root}/inbox`, 'wake up', { qos: 1 });
    await held;

    first.child.kill(signal);
    await new Promise((r) => first.child.once('exit', r));
    before.end(true);

    const second = await startFjord(store);
    const after = mqtt.connect(`mqtt://127.0.0.1:${second.mqttPort}`, login);
    clients.push(after);
    const messages: { topic: string; payload: string; dup: boolean; retain: boolean }[] = [];
    const inbox = new Promise<void>((resolve) =>
      after.on('message', (topic, payload, packet) => {
        messages.push({ topic, payload: payload.toString(), dup: packet.dup, retain: packet.retain });
        if (topic.endsWith('/inbox')) resolve();
      }),
    );
    const connack = await new Promise<{ sessionPresent: boolean }>((resolve, reject) => {
      after.once('connect', resolve);
      after.once('error', reject);
    });
    expect(connack.sessionPresent).toBe(true);
    await inbox;
    expect(messages).toContainEqual({
      topic: `${d.topic_root}/inbox`,
      payload: 'wake up',
      dup: true,
      retain: false,
    });

    const retained = new Promise<{ payload: string; retain: boolean }>((resolve) =>
      after.on('message', (topic, payload, packet) => {
        if (topic.endsWith('/state')) resolve({ payload: payload.toString(), retain: packet.retain });
      }),
    );
    await after.subscribeAsync(`${d.topic_root}/state`, { qos: 1 });
    expect(await retained).toEqual({ payload: 'on', retain: true });
    after.end(true);
    second.child.kill('SIGTERM');
    await new Promise((r) => second.child.once('exit', r));
  });
}

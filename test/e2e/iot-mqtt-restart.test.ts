// The broker's state survives its process: retained messages and a persistent session (its
// subscription and a QoS 1 message sent but not yet acknowledged) are there after a restart
// (SIGTERM) and after a kill -9, on whichever store this run uses, and with Redis (scaled out:
// FJORD_REDIS_URL) keeping them instead. Scaled out, two processes on one Redis serve the same
// devices: a subscriber on one receives what is published to the other.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, expect, it } from 'vitest';
import { startThrowawayRedis } from '../helpers/redis.js';
import { freshTestStore, type TestStoreHandle } from '../helpers/store.js';

const FJORD = join(import.meta.dirname, '../../bin/fjord.js');
const stores: TestStoreHandle[] = [];
const redises: Awaited<ReturnType<typeof startThrowawayRedis>>[] = [];
const children = new Set<ChildProcess>();
const clients: MqttClient[] = [];

afterAll(async () => {
  for (const c of clients) c.end(true);
  for (const child of children) child.kill('SIGKILL');
  for (const s of stores) await s.drop();
  for (const r of redises) await r.stop();
});

/** Where the broker keeps its state: the store, or a throwaway Redis. */
type Mode = 'store' | 'redis';

interface Install {
  store: TestStoreHandle;
  redisUrl: string | null;
}

async function freshInstall(mode: Mode): Promise<Install> {
  const store = await freshTestStore();
  stores.push(store);
  if (mode === 'store') return { store, redisUrl: null };
  const redis = await startThrowawayRedis();
  redises.push(redis);
  return { store, redisUrl: redis.url };
}

const envOf = ({ store, redisUrl }: Install): Record<string, string> => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '/root',
  FJORD_DATA_DIR: store.dataDir,
  FJORD_API_PORT: '0',
  FJORD_MQTT_PORT: '0',
  FJORD_LOG_LEVEL: 'warn',
  FJORD_DEV_CREDENTIALS: '0',
  ...(store.databaseUrl ? { FJORD_DATABASE_URL: store.databaseUrl } : {}),
  ...(redisUrl ? { FJORD_REDIS_URL: redisUrl } : {}),
});

/** `fjord start --roles …`; resolves with its API address (when it serves one) and MQTT port from the banner. */
function startFjord(
  install: Install,
  roles = 'api,mqtt',
): Promise<{ child: ChildProcess; url: string | null; mqttPort: number; out: () => string }> {
  const child = spawn(process.execPath, [FJORD, 'start', '--roles', roles], {
    env: envOf(install),
    stdio: 'pipe',
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk;
      const api = /^\s*api\s+http\s+(http:\/\/\S+)\s*$/m.exec(out)?.[1] ?? null;
      const port = /^\s*mqtt\s+mqtt \(tcp\)\s+[\d.]+:(\d+)/m.exec(out)?.[1];
      if ((api || !roles.includes('api')) && port)
        resolve({ child, url: api, mqttPort: Number(port), out: () => out.slice(-4000) });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => (out += c));
    child.once('exit', (code) => reject(new Error(`fjord exited (${code}) before listening:\n${out}`)));
  });
}

/** `promise`, or a failure that says `what` went wrong once `ms` have passed. */
function within<T>(promise: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(what())), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

interface DeviceLogin {
  username: string;
  password: string;
  client_id: string;
  topic_root: string;
}

/** A customer and one device, made through the API of a running Fjord. */
async function deviceOn(install: Install, apiUrl: string, name: string): Promise<DeviceLogin> {
  const { pat } = JSON.parse(
    execFileSync(
      process.execPath,
      [FJORD, 'admin', 'customer', 'create', '--email', `${name}@example.test`],
      {
        env: envOf(install),
        encoding: 'utf8',
      },
    ),
  );
  const r = await fetch(`${apiUrl}/v1/iot/devices`, {
    method: 'POST',
    headers: { 'x-api-key': pat, 'content-type': 'application/json' },
    body: JSON.stringify({ name, device_id: name }),
  });
  expect(r.status).toBe(201);
  return ((await r.json()) as { mqtt_credentials: DeviceLogin }).mqtt_credentials;
}

async function stopped(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  const exit = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exit;
}

for (const mode of ['store', 'redis'] as const)
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    const what = signal === 'SIGKILL' ? 'kill -9' : 'restart';
    const where = mode === 'redis' ? 'in Redis (scaled out)' : 'in the store';
    it(`keeps retained messages and a persistent session across a ${what}, ${where}`, {
      timeout: 120_000,
    }, async () => {
      const install = await freshInstall(mode);
      const first = await startFjord(install);
      const d = await deviceOn(install, first.url!, `keeper-${mode}-${signal.toLowerCase()}`);
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

      await stopped(first.child, signal);
      before.end(true);

      const second = await startFjord(install);
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
        after.once('close', () =>
          reject(new Error(`closed before its CONNACK; the broker said:\n${second.out()}`)),
        );
      });
      expect(connack.sessionPresent).toBe(true);
      // Bounded, so that a message that never comes says what came instead of timing the test out.
      await within(
        inbox,
        30_000,
        () => `no redelivery: ${JSON.stringify(messages)}; broker:\n${second.out()}`,
      );
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
      expect(await within(retained, 30_000, () => `no retained message; broker:\n${second.out()}`)).toEqual({
        payload: 'on',
        retain: true,
      });
      after.end(true);
      await stopped(second.child, 'SIGTERM');
    });
  }

it('scaled out, a subscriber on one mqtt process receives what a device publishes to another', {
  timeout: 120_000,
}, async () => {
  const install = await freshInstall('redis');
  const a = await startFjord(install);
  const b = await startFjord(install, 'mqtt');
  const d = await deviceOn(install, a.url!, 'fanout');
  const as = (clientId: string) => ({
    username: d.username,
    password: d.password,
    clientId,
    reconnectPeriod: 0,
    protocolVersion: 5 as const,
  });

  const subscriber = await mqtt.connectAsync(`mqtt://127.0.0.1:${a.mqttPort}`, as(`${d.client_id}-sub`));
  clients.push(subscriber);
  const received = new Promise<{ topic: string; payload: string; qos: number }>((resolve) =>
    subscriber.on('message', (topic, payload, packet) =>
      resolve({ topic, payload: payload.toString(), qos: packet.qos }),
    ),
  );
  await subscriber.subscribeAsync(`${d.topic_root}/events`, { qos: 1 });

  const publisher = await mqtt.connectAsync(`mqtt://127.0.0.1:${b.mqttPort}`, as(d.client_id));
  clients.push(publisher);
  await publisher.publishAsync(`${d.topic_root}/events`, 'door open', { qos: 1 });
  expect(await received).toEqual({ topic: `${d.topic_root}/events`, payload: 'door open', qos: 1 });

  // A retained message published to one process is there for a new subscriber on the other.
  await subscriber.publishAsync(`${d.topic_root}/mode`, 'away', { qos: 1, retain: true });
  const late = await mqtt.connectAsync(`mqtt://127.0.0.1:${b.mqttPort}`, as(`${d.client_id}-late`));
  clients.push(late);
  const retained = new Promise<string>((resolve) =>
    late.on('message', (_t, payload) => resolve(payload.toString())),
  );
  await late.subscribeAsync(`${d.topic_root}/mode`, { qos: 1 });
  expect(await retained).toBe('away');
  for (const c of [subscriber, publisher, late]) c.end(true);
  await Promise.all([stopped(a.child, 'SIGTERM'), stopped(b.child, 'SIGTERM')]);
});

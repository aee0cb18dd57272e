// MQTT load for the IoT benchmarks: Fjord with the broker in a child process, devices made
// through its API, and MQTT.js publishers run from the bench process.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { cleanEnv, FJORD, runFjord, startServer } from './child-servers.js';

export interface Device {
  device_id: string;
  username: string;
  password: string;
  client_id: string;
  topic_root: string;
}

export interface FjordIot {
  child: ChildProcess;
  api: string;
  mqttPort: number;
  pat: string;
  dataDir: string;
  // biome-ignore lint/suspicious/noExplicitAny: the bench reads arbitrary JSON answers
  request(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  device(id: string): Promise<Device>;
}

const UNLIMITED = 100_000_000;

/** Fjord (`--roles` given) on a fresh SQLite data dir, or on FJORD_DATABASE_URL when given. */
export async function startFjordIot(
  roles: string,
  extra: Record<string, string> = {},
  nodeArgs: string[] = [],
): Promise<FjordIot> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fjord-mqtt-bench-'));
  const env = cleanEnv({
    FJORD_DATA_DIR: dataDir,
    FJORD_API_PORT: '0',
    FJORD_MQTT_PORT: '0',
    FJORD_LOG_LEVEL: 'warn',
    FJORD_DEV_CREDENTIALS: '0',
    // The api role would start embedded database engines that a killed bench leaves running.
    FJORD_DATABASE_ENGINES: 'simulated',
    FJORD_RATE_LIMITS: JSON.stringify({ iot: { points: UNLIMITED, duration: 60 } }),
    // One customer holds every load device, the probe and the Paho suites' clients: the free
    // plan's 20 connections (iot.mqtt_connections) would refuse the 21st with CONNACK 3.
    FJORD_LIMITS: JSON.stringify({ 'iot.devices': null, 'iot.rules': null, 'iot.mqtt_connections': null }),
    ...extra,
  });
  const started = await startServer(
    'fjord',
    [...nodeArgs, FJORD, 'start', '--roles', roles],
    env,
    /^\s*mqtt\s+mqtt \(tcp\)\s+\S+:(\d+)\s*$/m,
  );
  const api = /^\s*api\s+https?\s+(https?:\/\/\S+)\s*$/m.exec(started.stdout())?.[1];
  if (!api) throw new Error(`no API address in\n${started.stdout()}`);
  const { pat } = JSON.parse(
    await runFjord(['admin', 'customer', 'create', '--email', 'iot@bench.test'], env),
  ) as {
    pat: string;
  };
  const request = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${api}${path}`, {
      method,
      headers: { 'x-api-key': pat, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : null };
  };
  return {
    child: started.child,
    api,
    mqttPort: Number(started.url),
    pat,
    dataDir,
    request,
    async device(id) {
      const r = await request('POST', '/v1/iot/devices', { name: id, device_id: id });
      if (r.status !== 201) throw new Error(`device ${id}: ${r.status} ${JSON.stringify(r.body)}`);
      return { ...(r.body.mqtt_credentials as Omit<Device, 'device_id'>), device_id: id };
    },
  };
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Debian's mosquitto on its own port: anonymous, no persistence, queues unbounded (it only forwards). */
export async function startMosquitto(): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'mosquitto-bench-'));
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(
    conf,
    [
      `listener ${port} 127.0.0.1`,
      'allow_anonymous true',
      'persistence false',
      'max_inflight_messages 0',
      'max_queued_messages 0',
      'set_tcp_nodelay true',
      'log_dest stderr',
      'log_type error',
      '',
    ].join('\n'),
  );
  const child = spawn('mosquitto', ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.on('data', (d) => process.stderr.write(`[mosquitto] ${d}`));
  process.once('exit', () => child.kill('SIGKILL'));
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      const probe = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, { reconnectPeriod: 0 });
      await probe.endAsync();
      return { child, port };
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`mosquitto did not start: ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

export function connectDevice(port: number, d: Device | null, id: string): Promise<MqttClient> {
  return mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, {
    ...(d ? { username: d.username, password: d.password, clientId: d.client_id } : { clientId: id }),
    reconnectPeriod: 0,
    protocolVersion: 4,
    keepalive: 60,
  });
}

export interface LoadResult {
  /** Messages handed to the sockets (QoS 0) or acknowledged (QoS 1). */
  sent: number;
  acked: number;
  /** ms from the start to the last acknowledgement (QoS 1). */
  lastAckMs: number;
}

/**
 * Every client publishes `payload(n)` on its topic for `seconds`, keeping `window` messages
 * outstanding (QoS 1: unacknowledged; QoS 0: not yet written to the socket).
 */
export async function publishLoad(
  clients: { client: MqttClient; topic: string }[],
  opts: { qos: 0 | 1; seconds: number; window: number; payload: (n: number) => string; start?: number },
): Promise<LoadResult> {
  const start = opts.start ?? performance.now();
  const end = start + opts.seconds * 1000;
  let sent = 0;
  let acked = 0;
  let lastAck = start;
  let failed: Error | null = null;
  await Promise.all(
    clients.map(
      ({ client, topic }) =>
        new Promise<void>((resolve) => {
          let outstanding = 0;
          const pump = () => {
            while (!failed && outstanding < opts.window && performance.now() < end) {
              outstanding++;
              sent++;
              client.publish(topic, opts.payload(sent), { qos: opts.qos }, (err) => {
                outstanding--;
                if (err) failed = err;
                else {
                  acked++;
                  lastAck = performance.now();
                }
                setImmediate(pump);
              });
            }
            if (outstanding === 0 && (failed || performance.now() >= end)) resolve();
          };
          pump();
        }),
    ),
  );
  if (failed) throw failed;
  return { sent, acked, lastAckMs: lastAck - start };
}

export function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

export async function until(probe: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 1) {
  const deadline = performance.now() + timeoutMs;
  while (!(await probe())) {
    if (performance.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

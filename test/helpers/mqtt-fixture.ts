import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { afterAll, beforeAll } from 'vitest';
import type { IotEvent } from '../../src/areas/iot/index.js';
import type { IotService } from '../../src/areas/iot/service.js';
import { type TestCustomer, TestFjord } from './fjord.js';
import { type DeviceCreds, registerDevice } from './iot.js';
import type { RawMqtt } from './mqtt-raw.js';
import type { TestStoreHandle } from './store.js';

/**
 * One Fjord with the `api` and `mqtt` roles and one customer for an MQTT test file, and the
 * clients it opens, all ended after the file. `env` adds listeners (`FJORD_MQTT_TLS_PORT`…) or
 * limits; the fields are set once `beforeAll` has run.
 */
export class BrokerFixture {
  t!: TestFjord;
  a!: TestCustomer;
  /** Clients and raw connections to end after the file. */
  readonly opened: MqttClient[] = [];
  readonly raws: RawMqtt[] = [];

  iot(): IotService {
    return this.t.fjord.areas.get('iot')!.service as IotService;
  }

  /** Registers a device for the customer (or the customer of `key`) and answers its login. */
  device(deviceId: string, key = this.a.pat): Promise<DeviceCreds> {
    return registerDevice(this.t, key, deviceId);
  }

  /** Connects MQTT.js with the device's login: 3.1.1 over TCP unless `options` say otherwise. */
  async connect(c: DeviceCreds, options: IClientOptions & { url?: string } = {}): Promise<MqttClient> {
    const { url = `mqtt://127.0.0.1:${c.port}`, ...rest } = options;
    const client = await mqtt.connectAsync(url, {
      username: c.username,
      password: c.password,
      clientId: c.client_id,
      reconnectPeriod: 0,
      protocolVersion: 4,
      ...rest,
    });
    this.opened.push(client);
    return client;
  }

  /** The next event of `kind` for the device, from now on. */
  nextEvent(kind: IotEvent['kind'], deviceId: string): Promise<IotEvent> {
    return new Promise((resolve) => {
      const stop = this.iot().stream.subscribe((e) => {
        if (e.kind === kind && e.device_id === deviceId) {
          stop();
          resolve(e);
        }
      });
    });
  }
}

export function useBroker(env: Record<string, string> = {}): BrokerFixture {
  const f = new BrokerFixture();
  beforeAll(async () => {
    f.t = await TestFjord.create({ FJORD_API_PORT: '0', FJORD_MQTT_PORT: '0', ...env });
    await f.t.fjord.start(['api', 'mqtt']);
    f.a = await f.t.customer();
  });
  afterAll(async () => {
    for (const c of f.opened) c.end(true);
    for (const r of f.raws) r.close();
    await f.t?.close();
  });
  return f;
}

/** A Fjord started as its own process (`fjord start --roles api,mqtt`), for restarts and kill -9. */
export interface FjordProcess {
  child: ChildProcess;
  url: string;
  mqttPort: number;
}

const FJORD_BIN = join(import.meta.dirname, '../../bin/fjord.js');

/** The environment of a Fjord process on `store`: nothing of the caller's FJORD_* leaks in. */
export function processEnv(store: TestStoreHandle): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/root',
    FJORD_DATA_DIR: store.dataDir,
    FJORD_API_PORT: '0',
    FJORD_MQTT_PORT: '0',
    FJORD_LOG_LEVEL: 'warn',
    FJORD_DEV_CREDENTIALS: '0',
    ...(store.databaseUrl ? { FJORD_DATABASE_URL: store.databaseUrl } : {}),
  };
}

/**
 * Starts Fjord with the api and mqtt roles on `store`; resolves with its API address and MQTT
 * port from the banner. `children` collects it, for the file's afterAll to kill.
 */
export function startFjordProcess(
  store: TestStoreHandle,
  children: Set<ChildProcess>,
): Promise<FjordProcess> {
  const child = spawn(process.execPath, [FJORD_BIN, 'start', '--roles', 'api,mqtt'], {
    env: processEnv(store),
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

/** Stops a Fjord process with `signal` (SIGKILL: as a crash would) and waits for it to exit. */
export async function stopFjordProcess(p: FjordProcess, signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
  const exited = new Promise((r) => p.child.once('exit', r));
  p.child.kill(signal);
  await exited;
}

/** A customer (through `fjord admin customer create`) and a device of it, on a running Fjord process. */
export async function processDevice(
  store: TestStoreHandle,
  p: FjordProcess,
  deviceId: string,
): Promise<DeviceCreds> {
  const { pat } = JSON.parse(
    execFileSync(
      process.execPath,
      [FJORD_BIN, 'admin', 'customer', 'create', '--email', `${deviceId}@example.test`],
      {
        env: processEnv(store),
        encoding: 'utf8',
      },
    ),
  ) as { pat: string };
  const r = await fetch(`${p.url}/v1/iot/devices`, {
    method: 'POST',
    headers: { 'x-api-key': pat, 'content-type': 'application/json' },
    body: JSON.stringify({ name: deviceId, device_id: deviceId }),
  });
  if (r.status !== 201) throw new Error(`device ${deviceId}: ${r.status} ${await r.text()}`);
  return ((await r.json()) as { mqtt_credentials: DeviceCreds }).mqtt_credentials;
}

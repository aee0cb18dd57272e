import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { afterAll, beforeAll } from 'vitest';
import type { IotEvent } from '../../src/areas/iot/index.js';
import type { IotService } from '../../src/areas/iot/service.js';
import { type TestCustomer, TestFjord } from './fjord.js';
import { type DeviceCreds, registerDevice } from './iot.js';
import type { RawMqtt } from './mqtt-raw.js';

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

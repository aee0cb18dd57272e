import mqtt, { type MqttClient } from 'mqtt';
import { expect } from 'vitest';
import type { TestFjord } from './fjord.js';

/** A device's MQTT login, as `POST /v1/iot/devices` answers it. */
export interface DeviceCreds {
  username: string;
  password: string;
  client_id: string;
  port: number;
  topic_root: string;
}

/** Registers a device (expecting 201) and answers its MQTT credentials. */
export async function registerDevice(t: TestFjord, key: string, deviceId: string): Promise<DeviceCreds> {
  const r = await t.request('POST', '/v1/iot/devices', {
    key,
    body: { name: deviceId, device_id: deviceId },
  });
  expect(r.status, r.text).toBe(201);
  return r.body.mqtt_credentials;
}

/** Connects MQTT.js (3.1.1, no reconnects) with the device's login; `opened` collects clients to end. */
export async function connectDevice(c: DeviceCreds, opened: MqttClient[], password = c.password) {
  const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${c.port}`, {
    username: c.username,
    password,
    clientId: c.client_id,
    reconnectPeriod: 0,
    protocolVersion: 4,
  });
  opened.push(client);
  return client;
}

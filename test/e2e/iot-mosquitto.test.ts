import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IotService } from '../../src/areas/iot/service.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

/**
 * The broker with Mosquitto's own clients, using the credentials device creation hands out:
 * telemetry published with mosquitto_pub is read back through the API, a wrong password and
 * another device's tree are refused, and deleting a device ends its live mosquitto_sub.
 */
const run = promisify(execFile);
let t: TestFjord;
let a: TestCustomer;
beforeAll(async () => {
  t = await TestFjord.create({ FJORD_API_PORT: '0', FJORD_MQTT_PORT: '0' });
  await t.fjord.start(['api', 'mqtt']);
  a = await t.customer();
});
afterAll(() => t.close());

interface Creds {
  username: string;
  password: string;
  client_id: string;
  port: number;
  topic_root: string;
}
async function device(id: string): Promise<Creds> {
  const r = await t.request('POST', '/v1/iot/devices', { key: a.pat, body: { name: id, device_id: id } });
  expect(r.status).toBe(201);
  return r.body.mqtt_credentials;
}
const login = (c: Creds, password = c.password) => [
  ...['-h', '127.0.0.1', '-p', String(c.port), '-V', 'mqttv311'],
  ...['-i', c.client_id, '-u', c.username, '-P', password],
];

describe('the broker with mosquitto clients', () => {
  it('takes telemetry, refuses what it must and drops a deleted device’s subscriber', async () => {
    const c = await device('mosq-1');
    await run('mosquitto_pub', [
      ...login(c),
      '-q',
      '1',
      '-t',
      `${c.topic_root}/telemetry`,
      '-m',
      '{"rssi": -61}',
    ]);
    const latest = await t.request('GET', '/v1/iot/devices/mosq-1/telemetry/latest', { key: a.pat });
    expect(latest.body.values.rssi.value).toBe(-61);

    const wrong = run('mosquitto_pub', [...login(c, 'nope'), '-t', `${c.topic_root}/telemetry`, '-m', '{}']);
    await expect(wrong).rejects.toMatchObject({
      stderr: expect.stringMatching(/not authori[sz]ed|bad user/i),
    });

    const other = await device('mosq-2');
    // mosquitto_sub ends (status 0) saying so when every subscription it asked for was refused.
    const denied = await run('mosquitto_sub', [
      ...login(c),
      '-q',
      '1',
      '-t',
      `${other.topic_root}/#`,
      '-C',
      '1',
    ]);
    expect(denied.stderr).toMatch(/All subscription requests were denied/);

    // A live subscriber: once the broker has it connected, delete the device and wait for the
    // process to end (its output is buffered in a pipe, so the broker's event is what we wait on).
    const iot = t.fjord.areas.get('iot')!.service as IotService;
    const connected = new Promise<void>((resolve) => {
      const stop = iot.stream.subscribe((e) => {
        if (e.kind === 'connected' && e.device_id === 'mosq-1') {
          stop();
          resolve();
        }
      });
    });
    const sub = spawn('mosquitto_sub', [...login(c), '-q', '1', '-t', `${c.topic_root}/commands`], {
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => sub.once('exit', (code) => resolve(code)));
    await connected;
    expect((await t.request('DELETE', '/v1/iot/devices/mosq-1', { key: a.pat })).status).toBe(204);
    // Reconnecting with the revoked login is refused, so mosquitto_sub gives up.
    expect(await exited).not.toBe(0);
  });
});

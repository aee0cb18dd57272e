// MQTT 5 Session Expiry Interval holds across a kill -9: a session that expired while no broker
// ran is gone at the next start, one whose connection died with the broker runs out its interval
// from the restart, and one with a long interval is still resumed — on whichever store this run uses.
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import type { DeviceCreds } from '../helpers/iot.js';
import { processDevice, startFjordProcess, stopFjordProcess } from '../helpers/mqtt-fixture.js';
import { freshTestStore, type TestStoreHandle } from '../helpers/store.js';

const stores: TestStoreHandle[] = [];
const children = new Set<ChildProcess>();
const clients: MqttClient[] = [];

afterAll(async () => {
  for (const c of clients) c.end(true);
  for (const child of children) child.kill('SIGKILL');
  for (const s of stores) await s.drop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The broker's expiry rows (client id → deadline, null while connected), read from the store itself. */
async function expiryRows(store: TestStoreHandle): Promise<Map<string, number | null>> {
  const query = 'SELECT client_id, expires_at FROM iot_mqtt_session_expiry';
  let rows: { client_id: string; expires_at: number | string | null }[];
  if (store.databaseUrl) {
    const client = new pg.Client({ connectionString: store.databaseUrl });
    await client.connect();
    try {
      rows = (await client.query(query)).rows;
    } finally {
      await client.end();
    }
  } else {
    const db = new Database(join(store.dataDir, 'fjord.sqlite'), { fileMustExist: true });
    try {
      rows = db.prepare(query).all() as typeof rows;
    } finally {
      db.close();
    }
  }
  return new Map(rows.map((r) => [r.client_id, r.expires_at === null ? null : Number(r.expires_at)]));
}

/** An MQTT 5 session of the device under `suffix`, with its expiry interval; answers sessionPresent. */
async function session(
  port: number,
  d: DeviceCreds,
  suffix: string,
  expiry: number,
): Promise<{ client: MqttClient; present: boolean }> {
  const options: IClientOptions = {
    username: d.username,
    password: d.password,
    clientId: `${d.client_id}-${suffix}`,
    reconnectPeriod: 0,
    protocolVersion: 5,
    clean: false,
    properties: { sessionExpiryInterval: expiry },
  };
  const client = mqtt.connect(`mqtt://127.0.0.1:${port}`, options);
  clients.push(client);
  const connack = await new Promise<{ sessionPresent: boolean }>((resolve, reject) => {
    client.once('connect', resolve);
    client.once('error', reject);
  });
  return { client, present: connack.sessionPresent };
}

it('honours MQTT 5 session expiry across a kill -9', { timeout: 120_000 }, async () => {
  const store = await freshTestStore();
  stores.push(store);
  const first = await startFjordProcess(store, children);
  const d = await processDevice(store, first, 'expiring');

  // `gone`: disconnected with 2 s left, and the broker down for longer than that.
  // `short`: connected when the broker dies, 3 s interval. `long`: connected, an hour.
  for (const [suffix, expiry] of [
    ['gone', 2],
    ['short', 3],
    ['long', 3600],
  ] as const) {
    const { client, present } = await session(first.mqttPort, d, suffix, expiry);
    expect(present).toBe(false);
    await client.subscribeAsync(`${d.topic_root}/${suffix}`, { qos: 1 });
    if (suffix === 'gone') await client.endAsync();
  }
  // The broker writes the rows after its CONNACKs, and the deadline of `gone` once it has seen
  // its DISCONNECT: the kill waits for all three, which a loaded machine may take a while to write.
  await eventually(async () => {
    const rows = await expiryRows(store);
    expect(rows.get(`${d.client_id}-gone`)).toEqual(expect.any(Number));
    expect(rows.get(`${d.client_id}-short`)).toBeNull();
    expect(rows.get(`${d.client_id}-long`)).toBeNull();
  }, 10_000);
  await stopFjordProcess(first, 'SIGKILL');
  for (const c of clients) c.end(true);
  await sleep(2_500);

  const second = await startFjordProcess(store, children);
  // Expired while no broker ran: ended at the start.
  const gone = await session(second.mqttPort, d, 'gone', 2);
  expect(gone.present).toBe(false);
  await gone.client.endAsync();
  // Cut by the crash: 3 s counted from the restart, so it has run out after waiting longer.
  await sleep(3_500);
  const short = await session(second.mqttPort, d, 'short', 3);
  expect(short.present).toBe(false);
  const long = await session(second.mqttPort, d, 'long', 3600);
  expect(long.present).toBe(true);

  // The long session kept its subscription: a message to it arrives.
  const got = new Promise<string>((resolve) =>
    long.client.on('message', (_t, payload) => resolve(String(payload))),
  );
  await short.client.publishAsync(`${d.topic_root}/long`, 'still here', { qos: 1 });
  expect(await got).toBe('still here');
  await stopFjordProcess(second, 'SIGTERM');
});

// `npm run bench:mqtt`: telemetry accepted and stored by Fjord's broker against Debian's
// mosquitto only forwarding the same load, and publish → readable through the API latency.
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { MqttClient } from 'mqtt';
import { cpuSeconds, stopServer } from './lib/child-servers.js';
import {
  connectDevice,
  type Device,
  percentile,
  publishLoad,
  startFjordIot,
  startMosquitto,
  until,
} from './lib/mqtt-load.js';

const { values: args } = parseArgs({
  options: {
    clients: { type: 'string', default: '20' },
    duration: { type: 'string', default: '10' },
    window: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '1' },
    'latency-samples': { type: 'string', default: '200' },
    // A PostgreSQL URL: Fjord stores on it instead of SQLite (the stored-points figure per store).
    postgres: { type: 'string' },
    // Runs Fjord under `node --cpu-prof`, writing its .cpuprofile here when it stops.
    'cpu-prof-dir': { type: 'string' },
  },
});
const CLIENTS = Number(args.clients);
const SECONDS = Number(args.duration);
const WINDOW = Number(args.window);
const ROUNDS = Math.max(1, Number(args.rounds));
const SAMPLES = Number(args['latency-samples']);
const payload = (n: number) => `{"temp":${(n % 400) / 10}}`;

interface Figure {
  rate: number;
  cpuUsPerMsg: number | null;
  messages: number;
}

/** Fjord: stored points counted through the API until every message sent is in the store. */
async function fjordRound(
  fjord: Awaited<ReturnType<typeof startFjordIot>>,
  clients: { client: MqttClient; topic: string }[],
  qos: 0 | 1,
): Promise<Figure> {
  // The stats' hourly counters are written in the same transaction as the points, and read
  // cheaply (usage's stored_points counts the whole table, which would load what it measures).
  const stored = async () => (await fjord.request('GET', '/v1/iot/stats')).body.last_24h.points as number;
  const before = await stored();
  const cpu0 = cpuSeconds(fjord.child.pid);
  const t0 = performance.now();
  const load = await publishLoad(clients, { qos, seconds: SECONDS, window: WINDOW, payload, start: t0 });
  // QoS 1 is acknowledged only once stored; QoS 0 is counted in the store until all of it is there
  // (or nothing more arrives for 3 s: then the missing messages were dropped, and it says so).
  let last = before;
  let lastAt = performance.now();
  await until(
    async () => {
      const n = await stored();
      if (n !== last) {
        last = n;
        lastAt = performance.now();
      }
      return n - before >= load.sent || performance.now() - lastAt > 3000;
    },
    600_000,
    qos === 0 ? 50 : 1,
  );
  const elapsed = qos === 1 ? load.lastAckMs : lastAt - t0;
  const messages = last - before;
  if (messages < load.sent) console.log(`    Fjord stored ${messages} of ${load.sent} QoS ${qos} messages`);
  const cpu1 = cpuSeconds(fjord.child.pid);
  return {
    rate: messages / (elapsed / 1000),
    messages,
    cpuUsPerMsg: cpu0 === null || cpu1 === null ? null : ((cpu1 - cpu0) * 1e6) / messages,
  };
}

/** mosquitto: messages forwarded to one subscriber of every publisher's topic. */
async function mosquittoRound(
  mosq: Awaited<ReturnType<typeof startMosquitto>>,
  clients: { client: MqttClient; topic: string }[],
  subscriber: MqttClient,
  qos: 0 | 1,
): Promise<Figure> {
  let received = 0;
  let lastAt = 0;
  const onMessage = () => {
    received++;
    lastAt = performance.now();
  };
  await subscriber.subscribeAsync('devices/#', { qos });
  subscriber.on('message', onMessage);
  const cpu0 = cpuSeconds(mosq.child.pid);
  const t0 = performance.now();
  const load = await publishLoad(clients, { qos, seconds: SECONDS, window: WINDOW, payload, start: t0 });
  let seen = -1;
  let seenAt = performance.now();
  await until(
    () => {
      if (received !== seen) {
        seen = received;
        seenAt = performance.now();
      }
      return received >= load.sent || performance.now() - seenAt > 3000;
    },
    600_000,
    10,
  );
  subscriber.off('message', onMessage);
  await subscriber.unsubscribeAsync('devices/#');
  if (received < load.sent)
    console.log(`    mosquitto forwarded ${received} of ${load.sent} QoS ${qos} messages`);
  const cpu1 = cpuSeconds(mosq.child.pid);
  return {
    rate: received / ((lastAt - t0) / 1000),
    messages: received,
    cpuUsPerMsg: cpu0 === null || cpu1 === null ? null : ((cpu1 - cpu0) * 1e6) / received,
  };
}

/** publish (QoS 0) → the value readable in GET …/telemetry/latest, polled back to back. */
async function readableLatency(
  fjord: Awaited<ReturnType<typeof startFjordIot>>,
  d: Device,
  client: MqttClient,
) {
  const samples: number[] = [];
  for (let i = 1; i <= SAMPLES; i++) {
    const t0 = performance.now();
    client.publish(`${d.topic_root}/telemetry`, `{"probe":${i}}`, { qos: 0 });
    await until(async () => {
      const r = await fjord.request('GET', `/v1/iot/devices/${d.device_id}/telemetry/latest`);
      return r.body.values?.probe?.value === i;
    }, 10_000);
    samples.push(performance.now() - t0);
  }
  return samples;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const us = (x: number | null) => (x === null ? '—' : x.toFixed(1));

async function main() {
  const fjord = await startFjordIot(
    'api,mqtt',
    args.postgres ? { FJORD_DATABASE_URL: args.postgres } : {},
    args['cpu-prof-dir'] ? ['--cpu-prof', `--cpu-prof-dir=${args['cpu-prof-dir']}`] : [],
  );
  const mosq = await startMosquitto();
  try {
    const devices: Device[] = [];
    for (let i = 0; i < CLIENTS; i++) devices.push(await fjord.device(`bench-${i}`));
    const probe = await fjord.device('probe');
    const fjordClients = await Promise.all(
      devices.map(async (d) => ({
        client: await connectDevice(fjord.mqttPort, d, d.client_id),
        topic: `${d.topic_root}/telemetry`,
      })),
    );
    const mosqClients = await Promise.all(
      devices.map(async (d) => ({
        client: await connectDevice(mosq.port, null, d.client_id),
        topic: `${d.topic_root}/telemetry`,
      })),
    );
    const subscriber = await connectDevice(mosq.port, null, 'bench-subscriber');
    const store = args.postgres ? 'PostgreSQL' : 'SQLite';
    console.log(
      `node ${process.version}, ${CLIENTS} clients, ${WINDOW} messages outstanding each, ${ROUNDS} round(s) of ${SECONDS} s, Fjord on ${store}`,
    );
    // Warm-up: JIT, SQLite pages, connections.
    await publishLoad(fjordClients, { qos: 1, seconds: 2, window: WINDOW, payload });
    await publishLoad(mosqClients, { qos: 1, seconds: 2, window: WINDOW, payload });

    const rows: string[] = [];
    for (const qos of [0, 1] as const) {
      const f: Figure[] = [];
      const m: Figure[] = [];
      const ratios: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const fr = await fjordRound(fjord, fjordClients, qos);
        const mr = await mosquittoRound(mosq, mosqClients, subscriber, qos);
        f.push(fr);
        m.push(mr);
        ratios.push(fr.rate / mr.rate);
        console.log(
          `  QoS ${qos} round ${round + 1}: Fjord stored ${fr.rate.toFixed(0)} msg/s (${us(fr.cpuUsPerMsg)} µs CPU/msg), mosquitto forwarded ${mr.rate.toFixed(0)} msg/s (${us(mr.cpuUsPerMsg)} µs CPU/msg), ratio ${(fr.rate / mr.rate).toFixed(2)}`,
        );
      }
      const pick = (xs: Figure[]) => xs[xs.length >> 1]!;
      rows.push(
        `| QoS ${qos} | ${median(f.map((x) => x.rate)).toFixed(0)} | ${us(pick(f).cpuUsPerMsg)} | ${median(m.map((x) => x.rate)).toFixed(0)} | ${us(pick(m).cpuUsPerMsg)} | **${median(ratios).toFixed(2)}×** |`,
      );
    }
    const probeClient = await connectDevice(fjord.mqttPort, probe, probe.client_id);
    const latency = await readableLatency(fjord, probe, probeClient);
    for (const c of [...fjordClients, ...mosqClients]) c.client.end(true);
    subscriber.end(true);
    probeClient.end(true);

    console.log('');
    console.log(
      `| load | Fjord stored (msg/s) | Fjord CPU µs/msg | mosquitto forwarded (msg/s) | mosquitto CPU µs/msg | ratio |`,
    );
    console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
    for (const r of rows) console.log(r);
    console.log('');
    console.log(
      `publish (QoS 0) → readable in GET …/telemetry/latest, ${SAMPLES} samples, no other load: p50 ${percentile(latency, 50).toFixed(2)} ms, p99 ${percentile(latency, 99).toFixed(2)} ms`,
    );
  } finally {
    await stopServer(fjord.child);
    mosq.child.kill('SIGTERM');
    rmSync(fjord.dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);

// `npm run bench:iot-alarms`: telemetry ingest with 100 alarm rules against none, in the same
// run, and publish → alarm open → webhook received latency under background load.
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { MqttClient } from 'mqtt';
import { cpuSeconds, stopServer } from './lib/child-servers.js';
import {
  connectDevice,
  type Device,
  percentile,
  publishLoad,
  startFjordIot,
  until,
} from './lib/mqtt-load.js';

const { values: args } = parseArgs({
  options: {
    clients: { type: 'string', default: '20' },
    duration: { type: 'string', default: '10' },
    window: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '2' },
    rules: { type: 'string', default: '100' },
    samples: { type: 'string', default: '30' },
    // Background telemetry (msg/s) under which latency is measured.
    rates: { type: 'string', default: '1,100,1000' },
    // Without clear conditions on the load rules (they hold for every message of the load).
    'no-clear': { type: 'boolean', default: false },
    // Writes a V8 CPU profile of Fjord's process into this directory (node --cpu-prof).
    'cpu-prof': { type: 'string' },
  },
});
const CLIENTS = Number(args.clients);
const SECONDS = Number(args.duration);
const WINDOW = Number(args.window);
const ROUNDS = Math.max(1, Number(args.rounds));
const RULES = Number(args.rules);
const SAMPLES = Number(args.samples);
const RATES = args.rates.split(',').map(Number);
const payload = (n: number) => `{"temp":${(n % 400) / 10}}`;
/** A channel takes 10 notifications per device in 10 minutes (docs/iot.md): fewer per probe device. */
const ALARMS_PER_PROBE = 9;

const pct = (x: number | null) => (x === null ? '—' : `${(100 * x).toFixed(0)} %`);
const us = (x: number | null) => (x === null ? '—' : x.toFixed(0));

type Fjord = Awaited<ReturnType<typeof startFjordIot>>;

/**
 * `RULES` rules targeting every device: simple, repeating and duration conditions on `temp` that
 * the load never meets (what is measured is judging them, not raising alarms), plus the probe rule.
 */
async function createRules(fjord: Fjord): Promise<string[]> {
  const ids: string[] = [];
  const post = async (body: unknown) => {
    const r = await fjord.request('POST', '/v1/iot/rules', body);
    if (r.status !== 201) throw new Error(`rule: ${r.status} ${JSON.stringify(r.body)}`);
    ids.push(r.body.id);
  };
  await post({
    name: 'probe',
    target: { type: 'all' },
    severities: { major: { type: 'simple', filters: [{ key: 'alarm_probe', operator: '>', value: 100 }] } },
    clear_condition: { type: 'simple', filters: [{ key: 'alarm_probe', operator: '<', value: 50 }] },
  });
  for (let i = 1; i < RULES; i++) {
    const kind = i % 10 === 0 ? 'duration' : i % 10 === 5 ? 'repeating' : 'simple';
    await post({
      name: `load ${i}`,
      target: { type: 'all' },
      severities: {
        [['critical', 'major', 'minor', 'warning'][i % 4]!]: {
          type: kind,
          filters: [
            { key: 'temp', operator: '>', value: 1000 + i },
            ...(i % 3 === 0 ? [{ key: 'temp', operator: 'between', min: -500, max: 5000 }] : []),
          ],
          ...(kind === 'duration' ? { duration_seconds: 60 } : {}),
          ...(kind === 'repeating' ? { count: 3 } : {}),
        },
      },
      clear_condition:
        i % 2 === 0 && !args['no-clear']
          ? { type: 'simple', filters: [{ key: 'temp', operator: '<', value: 900 }] }
          : null,
    });
  }
  return ids;
}

/**
 * Resolves once Fjord's process has used under 10 % of a CPU for 300 ms; answers when that quiet
 * spell began (performance.now()).
 */
async function idle(pid: number | undefined): Promise<number> {
  for (;;) {
    const at = performance.now();
    const before = cpuSeconds(pid);
    await new Promise((r) => setTimeout(r, 300));
    const after = cpuSeconds(pid);
    if (before === null || after === null || after - before < 0.03) return at;
  }
}

/**
 * QoS 1 messages per second, from the first publish until Fjord is idle again: a message is
 * acknowledged once stored, and judged by the rules right after, so the time the rules take to
 * catch up with the acknowledged messages counts too.
 */
async function ingestRate(pid: number | undefined, clients: { client: MqttClient; topic: string }[]) {
  await idle(pid);
  const cpu0 = cpuSeconds(pid);
  const t0 = performance.now();
  const load = await publishLoad(clients, { qos: 1, seconds: SECONDS, window: WINDOW, payload, start: t0 });
  const cpu1 = cpuSeconds(pid);
  const loadEnd = performance.now();
  const end = await idle(pid);
  return {
    rate: load.acked / ((end - t0) / 1000),
    acked: load.acked / (load.lastAckMs / 1000),
    /** Share of one CPU Fjord used while the load ran. */
    busy: cpu0 === null || cpu1 === null ? null : (cpu1 - cpu0) / ((loadEnd - t0) / 1000),
    cpuUsPerMsg: cpu0 === null || cpu1 === null ? null : ((cpu1 - cpu0) * 1e6) / load.acked,
  };
}

/** Background telemetry at `rate` msg/s spread over the clients, in 10 ms ticks. */
function background(clients: { client: MqttClient; topic: string }[], rate: number): () => void {
  let n = 0;
  let owed = 0;
  const timer = setInterval(() => {
    owed += rate / 100;
    while (owed >= 1) {
      owed--;
      const c = clients[n++ % clients.length]!;
      c.client.publish(c.topic, payload(n), { qos: 0 });
    }
  }, 10);
  return () => clearInterval(timer);
}

async function main() {
  const waiting = new Map<string, (hook: { at: number; alarm: { created_at: string } }) => void>();
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      res.end('ok');
      const body = JSON.parse(Buffer.concat(chunks).toString()) as {
        type: string;
        alarm?: { device_id: string; created_at: string };
      };
      if (body.type === 'iot.alarm.created' && body.alarm)
        waiting.get(body.alarm.device_id)?.({ at, alarm: body.alarm });
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
  const fjord = await startFjordIot(
    'api,mqtt,worker',
    { FJORD_WEBHOOK_ALLOW_PRIVATE: '1' },
    args['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${resolve(args['cpu-prof'])}`] : [],
  );
  try {
    const devices: Device[] = [];
    for (let i = 0; i < CLIENTS; i++) devices.push(await fjord.device(`load-${i}`));
    const clients = await Promise.all(
      devices.map(async (d) => ({
        client: await connectDevice(fjord.mqttPort, d, d.client_id),
        topic: `${d.topic_root}/telemetry`,
      })),
    );
    console.log(
      `node ${process.version}, ${CLIENTS} clients at QoS 1 with ${WINDOW} outstanding each, ${ROUNDS} round(s) of ${SECONDS} s per side, ${RULES} rules`,
    );
    await publishLoad(clients, { qos: 1, seconds: 2, window: WINDOW, payload }); // warm-up

    const none: number[] = [];
    const withRules: number[] = [];
    const ratios: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const a = await ingestRate(fjord.child.pid, clients);
      const ids = await createRules(fjord);
      const b = await ingestRate(fjord.child.pid, clients);
      for (const id of ids) await fjord.request('DELETE', `/v1/iot/rules/${id}`);
      none.push(a.rate);
      withRules.push(b.rate);
      ratios.push(b.rate / a.rate);
      console.log(
        `  round ${round + 1}: no rules ${a.rate.toFixed(0)} msg/s (acknowledged at ${a.acked.toFixed(0)}/s, ${pct(a.busy)} CPU, ${us(a.cpuUsPerMsg)} µs/msg), ${RULES} rules ${b.rate.toFixed(0)} msg/s (acknowledged at ${b.acked.toFixed(0)}/s, ${pct(b.busy)} CPU, ${us(b.cpuUsPerMsg)} µs/msg), ratio ${(b.rate / a.rate).toFixed(2)}`,
      );
    }

    // Latency: the rules again, a webhook channel and a policy for created alarms.
    await createRules(fjord);
    const channel = await fjord.request('POST', '/v1/iot/notifications/channels', {
      name: 'bench',
      channel_type: 'webhook',
      config: { url: hookUrl },
    });
    if (channel.status !== 201) throw new Error(`channel: ${channel.status} ${JSON.stringify(channel.body)}`);
    const policy = await fjord.request('POST', '/v1/iot/notifications/policies', {
      name: 'bench',
      channel_ids: [channel.body.id],
      events: ['created'],
    });
    if (policy.status !== 201) throw new Error(`policy: ${policy.status} ${JSON.stringify(policy.body)}`);
    const probes: { d: Device; client: MqttClient; used: number }[] = [];
    const probe = async () => {
      let p = probes.find((x) => x.used < ALARMS_PER_PROBE);
      if (!p) {
        const d = await fjord.device(`probe-${probes.length}`);
        p = { d, client: await connectDevice(fjord.mqttPort, d, d.client_id), used: 0 };
        probes.push(p);
      }
      p.used++;
      return p;
    };
    const latencyRows: string[] = [];
    for (const rate of RATES) {
      const stop = background(clients, rate);
      const open: number[] = [];
      const hook: number[] = [];
      let failure: string | null = null;
      try {
        await new Promise((r) => setTimeout(r, 1000));
        for (let s = 0; s < SAMPLES; s++) {
          const p = await probe();
          const got = new Promise<{ at: number; alarm: { created_at: string } }>((resolve) =>
            waiting.set(p.d.device_id, resolve),
          );
          const t0 = Date.now();
          p.client.publish(`${p.d.topic_root}/telemetry`, '{"alarm_probe":150}', { qos: 0 });
          const h = await Promise.race([
            got,
            new Promise<never>((_, reject) =>
              setTimeout(() => reject(new Error('no webhook in 30 s')), 30_000),
            ),
          ]);
          waiting.delete(p.d.device_id);
          open.push(Date.parse(h.alarm.created_at) - t0);
          hook.push(h.at - t0);
          // Cleared by the rule's clear condition before the next sample.
          await p.client.publishAsync(`${p.d.topic_root}/telemetry`, '{"alarm_probe":0}', { qos: 1 });
          await until(
            async () =>
              (await fjord.request('GET', `/v1/iot/alarms?device_id=${p.d.device_id}&status=active`)).body
                .alarms.length === 0,
            10_000,
            5,
          );
        }
      } catch (err) {
        // Past what the rules can judge, the backlog grows until clients time out.
        failure = `${(err as Error).message} after ${open.length} of ${SAMPLES} samples`;
      } finally {
        stop();
      }
      const ms = (xs: number[], q: number) => (xs.length ? percentile(xs, q).toFixed(0) : '—');
      latencyRows.push(
        `| ${rate} msg/s | ${ms(open, 50)} | ${ms(open, 99)} | ${ms(hook, 50)} | ${ms(hook, 99)} |${failure ? ` overloaded: ${failure}` : ''}`,
      );
      console.log(`  latency at ${rate} msg/s: ${failure ?? 'done'}`);
      if (failure) break;
    }
    for (const c of clients) c.client.end(true);
    for (const p of probes) p.client.end(true);

    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    console.log('');
    console.log(
      `| ingest (QoS 1, stored and judged, until Fjord is idle) | no rules | ${RULES} rules | ratio |`,
    );
    console.log('| --- | ---: | ---: | ---: |');
    console.log(
      `| msg/s, median of ${ROUNDS} round(s) | ${median(none).toFixed(0)} | ${median(withRules).toFixed(0)} | **${median(ratios).toFixed(2)}×** |`,
    );
    console.log('');
    console.log(
      `| background load (${RULES} rules, ${SAMPLES} samples) | publish → alarm open p50 ms | p99 ms | publish → webhook received p50 ms | p99 ms |`,
    );
    console.log('| --- | ---: | ---: | ---: | ---: |');
    for (const r of latencyRows) console.log(r);
  } finally {
    await stopServer(fjord.child);
    receiver.close();
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

// Dynamic DNS propagation: time from `/nic/update` answering `good` to Fjord's DNS server
// answering the new address, over many updates. Reference: a plain query round trip to the same
// server in the same run (the floor any propagation time sits on).
//
//   npm run bench:dyn [-- --updates 1000 --split]
//
// Default: one `fjord start --roles api,dns,worker` process on SQLite. `--split` runs the API and
// the DNS server as two processes sharing the store, so the change crosses processes (the
// scaled-out shape). Prints median, p90, p99 and max in milliseconds, and the median as a ratio
// of the query round trip. See bench/README.md.
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import dnsPacket from 'dns-packet';
import { cleanEnv, FJORD, killAll, runFjord, startServer, stopServer } from './lib/child-servers.js';

const { values: args } = parseArgs({
  options: { updates: { type: 'string', default: '1000' }, split: { type: 'boolean', default: false } },
});
const UPDATES = Number(args.updates);
const TARGET_MS = 100;
const HOSTNAME = 'bench.dyn.fjord.test';
const API_LINE = /^\s*api\s+http\s+(http:\/\/\S+)\s*$/m;
const DNS_LINE = /^\s*dns\s+dns \(udp\+tcp\)\s+\S+:(\d+)\s*$/m;

const socket = createSocket('udp4');
await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
let nextId = 1;
const pending = new Map<number, (answers: string[]) => void>();
socket.on('message', (msg) => {
  const p = dnsPacket.decode(msg);
  const done = pending.get(p.id ?? -1);
  if (!done) return;
  pending.delete(p.id!);
  done((p.answers ?? []).flatMap((a) => (a.type === 'A' ? [String(a.data)] : [])));
});

/** One A query over UDP; resolves with the addresses (a lost datagram is sent again after 200 ms). */
function queryA(port: number): Promise<string[]> {
  return new Promise((resolve) => {
    const id = nextId++ & 0xffff;
    const packet = dnsPacket.encode({ type: 'query', id, questions: [{ type: 'A', name: HOSTNAME }] });
    const send = () => socket.send(packet, port, '127.0.0.1');
    const retry = setInterval(send, 200);
    pending.set(id, (answers) => {
      clearInterval(retry);
      resolve(answers);
    });
    send();
  });
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const ms = (n: number) => n.toFixed(2);

const dataDir = mkdtempSync(join(tmpdir(), 'fjord-dyn-bench-'));
const env = cleanEnv({
  FJORD_DATA_DIR: dataDir,
  FJORD_API_PORT: '0',
  FJORD_DNS_PORT: '0',
  FJORD_LOG_LEVEL: 'warn',
  FJORD_DEV_CREDENTIALS: '0',
  // The poll below asks the same question from one address hundreds of times a second: response
  // rate limiting would (rightly) drop most of those answers.
  FJORD_DNS_RRL_RATE: '0',
  FJORD_DYN_FLEET_LIMITS: 'hostnames=500,updates_per_hour=1000000,sources=10',
  FJORD_RATE_LIMITS: JSON.stringify({
    'dyn.update': { points: 100_000_000, duration: 60 },
    dyn: { points: 100_000_000, duration: 60 },
  }),
});

try {
  await runFjord(['migrate'], env);
  const roles = args.split ? 'api,worker' : 'api,dns,worker';
  const api = await startServer('fjord', [FJORD, 'start', '--roles', roles], env, API_LINE);
  const dns = args.split
    ? await startServer('fjord-dns', [FJORD, 'start', '--roles', 'dns'], env, DNS_LINE)
    : null;
  const dnsPort = Number(DNS_LINE.exec((dns ?? api).stdout())?.[1]);
  if (!dnsPort) throw new Error('no DNS listener in the banner');

  const customer = JSON.parse(
    await runFjord(
      ['admin', 'customer', 'create', '--email', 'dyn-bench@example.test', '--type', 'business'],
      env,
    ),
  ) as { pat: string };
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${api.url}${path}`, {
      method,
      headers: { 'x-api-key': customer.pat, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
    return (await r.json()) as Record<string, string>;
  };
  const hostname = await call('POST', '/v1/dyn/hostnames', { hostname: HOSTNAME });
  const token = await call('POST', `/v1/dyn/hostnames/${hostname.id}/router-tokens`);
  const headers = {
    authorization: `Basic ${Buffer.from(`${token.username}:${token.password}`).toString('base64')}`,
    'user-agent': 'fjord-bench/1.0',
  };

  // Reference: the plain query round trip.
  for (let i = 0; i < 200; i++) await queryA(dnsPort);
  const rtts: number[] = [];
  for (let i = 0; i < 1000; i++) {
    const t0 = performance.now();
    await queryA(dnsPort);
    rtts.push(performance.now() - t0);
  }
  rtts.sort((a, b) => a - b);

  const lags: number[] = [];
  for (let i = 0; i < UPDATES; i++) {
    const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    const r = await fetch(`${api.url}/nic/update?hostname=${HOSTNAME}&myip=${ip}`, { headers });
    const text = await r.text();
    if (text !== `good ${ip}`) throw new Error(`update ${i}: ${r.status} ${text}`);
    const answered = performance.now();
    while (!(await queryA(dnsPort)).includes(ip)) {
      if (performance.now() - answered > 10_000) throw new Error(`update ${i}: not served after 10 s`);
    }
    lags.push(performance.now() - answered);
  }
  lags.sort((a, b) => a - b);

  const median = percentile(lags, 50);
  console.log(
    `\nDynamic DNS propagation (${args.split ? 'API and DNS in two processes' : 'one process'}), ${UPDATES} updates`,
  );
  console.table({
    'update → served (ms)': {
      median: ms(median),
      p90: ms(percentile(lags, 90)),
      p99: ms(percentile(lags, 99)),
      max: ms(lags.at(-1)!),
    },
    'query round trip (ms, reference)': {
      median: ms(percentile(rtts, 50)),
      p90: ms(percentile(rtts, 90)),
      p99: ms(percentile(rtts, 99)),
      max: ms(rtts.at(-1)!),
    },
  });
  console.log(`median propagation = ${(median / percentile(rtts, 50)).toFixed(1)}× a query round trip`);
  const p99 = percentile(lags, 99);
  console.log(
    p99 < TARGET_MS
      ? `target met: p99 ${ms(p99)} ms < ${TARGET_MS} ms`
      : `target NOT met: p99 ${ms(p99)} ms ≥ ${TARGET_MS} ms`,
  );
  await Promise.all([stopServer(api.child), dns ? stopServer(dns.child) : null]);
} finally {
  killAll();
  socket.close();
  rmSync(dataDir, { recursive: true, force: true });
}

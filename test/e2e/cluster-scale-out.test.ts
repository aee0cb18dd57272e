// Scaled out as DESIGN.md promises: every role as separate OS processes on one PostgreSQL and one
// Redis — 2 × api behind a round-robin balancer, 2 × s3, 2 × dns, 2 × worker, 2 × mqtt, 1 × rtmp —
// giving the same results as one process. Runs in the PostgreSQL pass of the suite (`npm run test:cluster` runs
// it alone).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { HttpsReceiver } from '../helpers/https-receiver.js';
import { hasRedisServer, startThrowawayRedis } from '../helpers/redis.js';
import { s3ClientFor } from '../helpers/s3.js';
import { freshTestStore, TEST_STORE, type TestStoreHandle } from '../helpers/store.js';
import { dig } from './dns-fixtures.js';

const FJORD = join(import.meta.dirname, '../../bin/fjord.js');
const OPERATOR = 'cluster-operator-token-0123456789abcdef';

interface Proc {
  roles: string;
  child: ChildProcess;
  api?: string;
  s3?: string;
  dns?: number;
  mqtt?: number;
}

describe.skipIf(TEST_STORE !== 'postgres' || !hasRedisServer)('scaled out on PostgreSQL and Redis', () => {
  let store: TestStoreHandle;
  let redis: Awaited<ReturnType<typeof startThrowawayRedis>>;
  let dataDir: string;
  const procs: Proc[] = [];
  let balancer: Server;
  let lb: string;
  let pat: string;
  let hooks: HttpsReceiver;

  const env = (roles: string): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    FJORD_DATA_DIR: dataDir, // one data key for all (sealed secrets), one object directory
    FJORD_DATABASE_URL: store.databaseUrl,
    FJORD_REDIS_URL: redis.url,
    FJORD_OPERATOR_TOKEN: OPERATOR,
    FJORD_ROLES: roles,
    FJORD_API_PORT: '0',
    FJORD_S3_PORT: '0',
    FJORD_DNS_PORT: '0',
    FJORD_MQTT_PORT: '0',
    FJORD_DNS_RRL_RATE: '0',
    FJORD_DEV_CREDENTIALS: '0',
    FJORD_LOG_LEVEL: 'warn',
    FJORD_DATABASE_ENGINES: 'simulated', // embedded engines belong to one process (docs/operations.md)
    FJORD_RATE_LIMITS: JSON.stringify({
      regions: { points: 10, duration: 60 },
      gpu: { points: 10_000, duration: 60 },
    }),
    FJORD_EMULATOR: '1',
    // A worker killed mid-job gives its jobs back after 5 s (the default is 5 minutes).
    FJORD_JOB_LEASE_SECONDS: '5',
    // Webhooks go to the test's HTTPS receiver on 127.0.0.1, whose certificate every process trusts.
    FJORD_WEBHOOK_ALLOW_PRIVATE: '1',
    NODE_EXTRA_CA_CERTS: hooks.caFile,
  });

  function start(roles: string): Promise<Proc> {
    const child = spawn(process.execPath, [FJORD, 'start', '--roles', roles], {
      env: env(roles),
      stdio: 'pipe',
    });
    return new Promise((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (c: Buffer) => {
        out += c;
        if (!/Listeners/.test(out) || !/Back ends|Development/.test(out)) return;
        const p: Proc = {
          roles,
          child,
          api: /^\s*api\s+http\s+(http:\S+)/m.exec(out)?.[1],
          s3: /^\s*s3\s+http\s+(http:\S+)/m.exec(out)?.[1],
          dns: Number(/^\s*dns\s+dns \(udp\+tcp\) [\d.]+:(\d+)/m.exec(out)?.[1]) || undefined,
          mqtt: Number(/^\s*mqtt\s+mqtt \(tcp\)\s+[\d.]+:(\d+)/m.exec(out)?.[1]) || undefined,
        };
        procs.push(p);
        resolve(p);
      });
      child.stderr!.on('data', (c: Buffer) => (out += c));
      child.once('exit', (code) => reject(new Error(`fjord --roles ${roles} exited (${code}):\n${out}`)));
    });
  }

  /** Round-robin over the live api processes; a refused connection goes to the next one. */
  function startBalancer(targets: () => string[]): Promise<string> {
    let next = 0;
    balancer = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const tryAt = (attempt: number) => {
          const all = targets();
          const target = new URL(all[next++ % all.length]!);
          const up = request(
            {
              host: target.hostname,
              port: target.port,
              method: req.method,
              path: req.url,
              headers: req.headers,
            },
            (r) => {
              res.writeHead(r.statusCode!, r.headers);
              r.pipe(res);
            },
          );
          up.on('error', () => (attempt < all.length ? tryAt(attempt + 1) : res.writeHead(502).end()));
          up.end(body);
        };
        tryAt(1);
      });
    });
    return new Promise((resolve) =>
      balancer.listen(0, '127.0.0.1', () =>
        resolve(`http://127.0.0.1:${(balancer.address() as { port: number }).port}`),
      ),
    );
  }

  const call = async (
    base: string,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const r = await fetch(`${base}${path}`, {
      method,
      headers: {
        'x-api-key': pat,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, headers: r.headers, text, body: text ? JSON.parse(text) : null };
  };
  const apis = () =>
    procs.filter((p) => p.api && p.child.exitCode === null && !p.child.killed).map((p) => p.api!);

  beforeAll(async () => {
    store = await freshTestStore();
    redis = await startThrowawayRedis();
    hooks = new HttpsReceiver();
    await hooks.listen();
    dataDir = mkdtempSync(join(tmpdir(), 'fjord-cluster-'));
    // The first process migrates the store; the others start on it.
    await start('api');
    await Promise.all([
      start('api'),
      start('s3'),
      start('s3'),
      start('dns'),
      start('dns'),
      start('worker'),
      start('worker'),
      start('mqtt'),
      start('mqtt'),
      start('rtmp'),
    ]);
    lb = await startBalancer(apis);
    const created = JSON.parse(
      execFileSync(
        process.execPath,
        [FJORD, 'admin', 'customer', 'create', '--email', 'cluster@example.test', '--plan', 'pro'],
        {
          env: env('api'),
          encoding: 'utf8',
        },
      ),
    );
    pat = created.pat;
  }, 120_000);

  afterAll(async () => {
    const running = procs.filter((p) => p.child.exitCode === null && p.child.signalCode === null);
    for (const p of running) p.child.kill('SIGTERM');
    const kill = setTimeout(() => {
      for (const p of running) p.child.kill('SIGKILL');
    }, 10_000);
    await Promise.all(running.map((p) => new Promise((r) => p.child.once('exit', r))));
    clearTimeout(kill);
    balancer?.close();
    await hooks?.close();
    await redis?.stop();
    await store?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('writes an object through one s3 process and reads it through the other', async () => {
    const bucket = await call(lb, 'POST', '/v1/storage/buckets', {
      bucket_name: `cluster-${Date.now().toString(36)}`,
    });
    expect(bucket.status, bucket.text).toBe(201);
    const [a, b] = procs.filter((p) => p.s3);
    const client = (endpoint: string) => s3ClientFor(bucket.body, endpoint);
    await client(a!.s3!).send(
      new PutObjectCommand({ Bucket: bucket.body.bucket_name, Key: 'hello.txt', Body: 'from process a' }),
    );
    const got = await client(b!.s3!).send(
      new GetObjectCommand({ Bucket: bucket.body.bucket_name, Key: 'hello.txt' }),
    );
    expect(await got.Body!.transformToString()).toBe('from process a');
  });

  it('serves a record made through the balancer from both dns processes', async () => {
    const zone = 'cluster-zone.example';
    expect((await call(lb, 'POST', '/v1/dns/zones', { domain: zone })).status).toBe(201);
    const rec = await call(lb, 'POST', `/v1/dns/zones/${zone}/records`, {
      record_type: 'A',
      host: 'www',
      record: '192.0.2.44',
    });
    expect(rec.status, rec.text).toBe(201);
    for (const p of procs.filter((x) => x.dns)) {
      let out = '';
      for (let i = 0; i < 100 && !/192\.0\.2\.44/.test(out); i++) {
        out = await dig(p.dns!, `www.${zone}`, 'A', '+short');
        if (!/192\.0\.2\.44/.test(out)) await new Promise((r) => setTimeout(r, 50));
      }
      expect(out.trim(), `dns process on ${p.dns}`).toBe('192.0.2.44');
    }
  });

  it('counts a rate limit once across api processes (Redis)', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 14; i++) statuses.push((await call(lb, 'GET', '/v1/regions')).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.slice(10)).toEqual([429, 429, 429, 429]);
  });

  it('replays an idempotent request sent to the other process', async () => {
    const [a, b] = apis();
    const body = { service: 'dns', description: 'cluster-idem' };
    const headers = { 'idempotency-key': 'cluster-idem-1' };
    const first = await call(a!, 'POST', '/v1/account/api-keys/service', body, headers);
    expect(first.status, first.text).toBe(201);
    const second = await call(b!, 'POST', '/v1/account/api-keys/service', body, headers);
    expect(second.text).toBe(first.text);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
  });

  it('refuses a key revoked through one process on the next request to the other', async () => {
    const [a, b] = apis();
    const made = await call(a!, 'POST', '/v1/account/api-keys/pat', {
      scopes: ['account:read'],
      description: 'revoke-me',
    });
    expect(made.status, made.text).toBe(201);
    const key = made.body.key ?? made.body.token ?? made.body.api_key;
    const as = (base: string) => fetch(`${base}/v1/account/profile`, { headers: { 'x-api-key': key } });
    expect((await as(a!)).status).toBe(200);
    expect((await as(b!)).status).toBe(200);
    expect((await call(a!, 'DELETE', `/v1/account/api-keys/${made.body.id}`)).status).toBe(200);
    expect((await as(b!)).status).toBe(401);
  });

  it('holds a plan limit when creates arrive at both api processes together', async () => {
    const free = JSON.parse(
      execFileSync(
        process.execPath,
        [FJORD, 'admin', 'customer', 'create', '--email', 'cluster-free@example.test', '--plan', 'free'],
        { env: env('api'), encoding: 'utf8' },
      ),
    ) as { pat: string };
    const [a, b] = apis();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call(
          i % 2 ? a! : b!,
          'POST',
          '/v1/dns/zones',
          { domain: `race-${i}.cluster.example` },
          {
            'x-api-key': free.pat,
          },
        ),
      ),
    );
    // The free plan's 3 zones, whichever process each request reached (10: the hourly creation
    // rate limit, itself counted once across processes, would answer an 11th with 429).
    expect(results.filter((r) => r.status === 201)).toHaveLength(3);
    expect(new Set(results.filter((r) => r.status !== 201).map((r) => r.status))).toEqual(new Set([403]));
  });

  it('runs every job once and delivers every webhook once, with two worker processes', async () => {
    const worker = await call(
      lb,
      'POST',
      '/admin/v1/gpu/workers',
      { name: 'cluster', engines: ['reference-video'] },
      { authorization: `Bearer ${OPERATOR}`, 'x-api-key': '' },
    );
    expect(worker.status, worker.text).toBe(201);
    const asWorker = { authorization: `Bearer ${worker.body.token}`, 'x-api-key': '' };
    const ids: string[] = [];
    // Ten: the limit of jobs queued or processing per key.
    for (let i = 0; i < 10; i++) {
      const job = await call(lb, 'POST', '/v1/gpu/jobs', {
        type: 'video',
        engine: 'reference-video',
        inputs: { prompt: `cluster ${i}`, duration_sec: 1 },
        webhook_url: `${hooks.base}/gpu`,
      });
      expect(job.status, job.text).toBe(201);
      ids.push(job.body.id);
    }
    // Two api processes hand out leases at once: each job goes to exactly one lease.
    const leases = await Promise.all(
      Array.from({ length: 14 }, (_, i) =>
        call(apis()[i % 2]!, 'POST', '/v1/gpu/worker/lease', { engines: ['reference-video'] }, asWorker),
      ),
    );
    const leased = leases.filter((l) => l.status === 200).map((l) => l.body.id as string);
    expect(leased.sort()).toEqual([...ids].sort());
    for (const id of leased)
      expect(
        (await call(lb, 'POST', `/v1/gpu/worker/jobs/${id}/fail`, { error_message: 'cluster' }, asWorker))
          .status,
      ).toBe(204);
    // Each final state is one webhook, delivered by one of the two worker processes, once.
    // Wait until the store records every delivery as made: after that no run of a delivery job is left.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const list = await call(lb, 'GET', '/v1/webhooks/deliveries?limit=100');
      const gpu = (list.body.deliveries as { url: string; status: string; attempts: number }[]).filter((d) =>
        d.url.endsWith('/gpu'),
      );
      if (gpu.length === ids.length && gpu.every((d) => d.status === 'delivered')) {
        expect(gpu.every((d) => d.attempts === 1)).toBe(true);
        break;
      }
      if (Date.now() > deadline) throw new Error(`deliveries not all made: ${list.text}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const delivered = hooks.to('/gpu').map((h) => h.json.id as string);
    expect(delivered.sort()).toEqual([...ids].sort());
  });

  it('shares the emulator clock: an advance through one process is the time of the other', async () => {
    const [a, b] = apis();
    const op = { authorization: `Bearer ${OPERATOR}`, 'x-api-key': '' };
    const before = await call(b!, 'GET', '/admin/v1/clock', undefined, op);
    expect((await call(a!, 'POST', '/admin/v1/clock/advance', { seconds: 3600 }, op)).status).toBe(200);
    // The other process hears of it by LISTEN/NOTIFY.
    const deadline = Date.now() + 10_000;
    let after = await call(b!, 'GET', '/admin/v1/clock', undefined, op);
    while (after.body.offset_seconds < before.body.offset_seconds + 3600 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      after = await call(b!, 'GET', '/admin/v1/clock', undefined, op);
    }
    expect(after.body.offset_seconds).toBeGreaterThanOrEqual(before.body.offset_seconds + 3600);
  });

  it('sends commands through the api processes to devices on either mqtt process; a delete drops them', async () => {
    const brokers = procs.filter((p) => p.mqtt);
    expect(brokers.map((p) => p.mqtt! > 0)).toEqual([true, true]);
    for (const [i, broker] of brokers.entries()) {
      const deviceId = `cluster-dev-${i}`;
      const d = await call(lb, 'POST', '/v1/iot/devices', { name: 'cluster device', device_id: deviceId });
      expect(d.status, d.text).toBe(201);
      const c = d.body.mqtt_credentials;
      const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${broker.mqtt}`, {
        username: c.username,
        password: c.password,
        clientId: c.client_id,
        reconnectPeriod: 0,
        protocolVersion: 4,
      });
      try {
        await client.subscribeAsync(`${c.topic_root}/commands`, { qos: 1 });
        const received = new Promise<string>((resolve) =>
          client.on('message', (_t, p) => resolve(p.toString())),
        );
        await eventually(async () => {
          expect((await call(lb, 'GET', `/v1/iot/devices/${deviceId}`)).body.is_online).toBe(true);
        }, 10_000);
        const cmd = await call(lb, 'POST', `/v1/iot/devices/${deviceId}/commands`, { name: 'open' });
        expect(cmd.status, cmd.text).toBe(202);
        expect(JSON.parse(await received)).toMatchObject({ name: 'open', id: cmd.body.command_id });
        const closed = new Promise<void>((resolve) => client.on('close', () => resolve()));
        expect((await call(lb, 'DELETE', `/v1/iot/devices/${deviceId}`)).status).toBe(204);
        await closed;
      } finally {
        client.end(true);
      }
    }
  });

  it('gives the jobs of a worker killed mid-job to another worker, and every delivery is made', async () => {
    const op = { authorization: `Bearer ${OPERATOR}`, 'x-api-key': '' };
    const worker = await call(
      lb,
      'POST',
      '/admin/v1/gpu/workers',
      { name: 'kill', engines: ['reference-video'] },
      op,
    );
    const asWorker = { authorization: `Bearer ${worker.body.token}`, 'x-api-key': '' };
    hooks.hold('/slow', 1500);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const job = await call(lb, 'POST', '/v1/gpu/jobs', {
        type: 'video',
        engine: 'reference-video',
        inputs: { prompt: `kill ${i}`, duration_sec: 1 },
        webhook_url: `${hooks.base}/slow`,
      });
      expect(job.status, job.text).toBe(201);
      ids.push(job.body.id);
      const lease = await call(
        lb,
        'POST',
        '/v1/gpu/worker/lease',
        { engines: ['reference-video'] },
        asWorker,
      );
      await call(
        lb,
        'POST',
        `/v1/gpu/worker/jobs/${lease.body.id}/fail`,
        { error_message: 'kill' },
        asWorker,
      );
    }
    // Deliveries are under way (the receiver holds each for 1.5 s): kill every worker process.
    const deadline = Date.now() + 20_000;
    while (hooks.to('/slow').length === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    const heldAtKill = hooks.to('/slow').length;
    expect(heldAtKill).toBeGreaterThan(0);
    for (const p of procs.filter((x) => x.roles === 'worker' && x.child.exitCode === null)) {
      p.child.kill('SIGKILL');
      await new Promise((r) => p.child.once('exit', r));
    }
    // A new worker takes the abandoned jobs once their 5 s leases run out.
    await start('worker');
    for (;;) {
      const list = await call(lb, 'GET', '/v1/webhooks/deliveries?limit=200');
      const mine = (list.body.deliveries as { url: string; status: string }[]).filter((d) =>
        d.url.endsWith('/slow'),
      );
      if (mine.length === ids.length && mine.every((d) => d.status === 'delivered')) break;
      if (Date.now() > deadline + 20_000) throw new Error(`deliveries not all made: ${list.text}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const received = hooks.to('/slow').map((h) => h.json.id as string);
    expect(new Set(received)).toEqual(new Set(ids));
    // At least once: only a delivery under way at the kill can have been sent twice.
    expect(received.length - ids.length).toBeLessThanOrEqual(heldAtKill);
  }, 60_000);

  it('keeps answering through the balancer when one api process is killed', async () => {
    const victim = procs.find((p) => p.api)!;
    victim.child.kill('SIGKILL');
    await new Promise((r) => victim.child.once('exit', r));
    for (let i = 0; i < 4; i++) expect((await call(lb, 'GET', '/v1/account/profile')).status).toBe(200);
  });
});

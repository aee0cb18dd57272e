// A whole Fjord killed with `kill -9`:
// - while it runs both embedded database engines: the next start on the same data dir stops or
//   adopts what the dead one left, serves the same databases on working ports with every
//   acknowledged write, and a graceful stop leaves no engine behind;
// - in the middle of many concurrent small S3 PUTs: after a restart every acknowledged object
//   reads back with its exact bytes, and no half-written object is listed.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { hasMariadbBinaries } from '../../src/areas/databases/engines/embedded-mariadb.js';
import { signRequest } from '../../src/areas/storage/s3/sigv4.js';
import { connectAs } from '../areas/databases-engines.js';
import { creds } from '../areas/databases-fixtures.js';
import { eventually } from '../helpers/eventually.js';
import { freshTestStore, type TestStoreHandle } from '../helpers/store.js';

const FJORD = join(import.meta.dirname, '../../bin/fjord.js');
const DB_TYPES = ['postgresql', 'mariadb'] as const;
let store: TestStoreHandle | undefined;
let running: ChildProcess | undefined;

afterAll(async () => {
  running?.kill('SIGKILL');
  // Whatever a failed run left: the engines are not this test's to keep.
  if (store) for (const pid of enginesOf(store.dataDir)) process.kill(pid, 'SIGKILL');
  await store?.drop();
});

const fjordEnv = (): Record<string, string> => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '/root',
  FJORD_DATA_DIR: store!.dataDir,
  FJORD_API_PORT: '0',
  FJORD_S3_PORT: '0',
  FJORD_LOG_LEVEL: 'warn',
  FJORD_DEV_CREDENTIALS: '0',
  FJORD_DATABASE_ENGINES: 'auto',
  ...(store!.databaseUrl ? { FJORD_DATABASE_URL: store!.databaseUrl } : {}),
});

/** Starts `fjord start --roles <roles>` on the test's store; resolves with its API (and S3) address. */
function startFjord(roles = 'api'): Promise<{ child: ChildProcess; url: string; s3: string | undefined }> {
  const child = spawn(process.execPath, [FJORD, 'start', '--roles', roles], {
    env: fjordEnv(),
    stdio: 'pipe',
  });
  running = child;
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk;
      const m = /^\s*api\s+http\s+(http:\/\/\S+)\s*$/m.exec(out);
      const s3 = /^\s*s3\s+http\s+(http:\/\/\S+)\s*$/m.exec(out)?.[1];
      if (m && (s3 || !roles.includes('s3'))) resolve({ child, url: m[1]!, s3 });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => (out += c));
    child.once('exit', (code) => reject(new Error(`fjord exited (${code}) before listening:\n${out}`)));
  });
}

/** Processes whose command line names this data dir (the engines Fjord started in it). */
function enginesOf(dataDir: string): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,stat=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((l) => l.includes(join(dataDir, 'databases')) && !/^\s*\d+\s+Z/.test(l))
    .filter((l) => /(postgres|mariadbd)\b/.test(l) && !/postgres: /.test(l)) // postmasters, not backends
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

it.runIf(hasMariadbBinaries())(
  'recovers both engines after kill -9 of the whole Fjord, keeps every write, and leaves nothing after a stop',
  { timeout: 240_000 },
  async () => {
    store = await freshTestStore();
    const first = await startFjord();
    const { pat } = JSON.parse(
      execFileSync(
        process.execPath,
        [FJORD, 'admin', 'customer', 'create', '--email', 'crash@example.test'],
        {
          env: fjordEnv(),
          encoding: 'utf8',
        },
      ),
    );
    const api = (url: string, method: string, path: string, body?: unknown) =>
      fetch(`${url}${path}`, {
        method,
        headers: { 'x-api-key': pat, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });

    const made: Record<string, ReturnType<typeof creds>> = {};
    for (const dbType of DB_TYPES) {
      const r = await api(first.url, 'POST', '/v1/databases', { db_type: dbType, db_name: 'crash' });
      const body = (await r.json()) as Parameters<typeof creds>[0];
      expect(r.status, JSON.stringify(body)).toBe(201);
      made[dbType] = creds(body);
      const conn = await connectAs(dbType, made[dbType]);
      await conn.query('CREATE TABLE kept (v integer)');
      await conn.query('INSERT INTO kept VALUES (42)');
      await conn.end();
    }
    const before = enginesOf(store.dataDir);
    expect(before).toHaveLength(2);

    // kill -9: no shutdown code runs; the engines are left running, re-parented.
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));
    expect(enginesOf(store.dataDir)).toEqual(before);

    const second = await startFjord();
    for (const dbType of DB_TYPES) {
      // The new Fjord replaces the servers it finds. An API call that needs the engine waits for
      // the replacement, so only then is a client sure to reach the new server (one reaching the
      // old one in between is cut off when it stops).
      const info = await api(second.url, 'GET', `/v1/databases/${dbType}/${made[dbType]!.database}`);
      expect(info.status).toBe(200);
      expect(((await info.json()) as { port: number }).port).toBe(made[dbType]!.port);
      // The same credentials and port, answered by exactly one server per engine.
      const conn = await eventually(() => connectAs(dbType, made[dbType]!), 60_000);
      expect(await conn.query('SELECT v FROM kept')).toEqual([{ v: 42 }]);
      await conn.end();
    }
    expect(enginesOf(store.dataDir)).toHaveLength(2);

    // A graceful stop stops the engines it runs, adopted or not.
    second.child.kill('SIGTERM');
    await new Promise((r) => second.child.once('exit', r));
    running = undefined;
    expect(enginesOf(store.dataDir)).toEqual([]);
  },
);

/** A SigV4-signed S3 request with the body's real digest; resolves with the status and body. */
function s3Call(
  endpoint: string,
  keys: { access: string; secret: string },
  method: 'PUT' | 'GET',
  path: string,
  body: Buffer | null,
  query = '',
): Promise<{ status: number; body: Buffer }> {
  const u = new URL(endpoint);
  const headers = signRequest({
    method,
    path,
    query,
    headers: { host: u.host, 'content-length': String(body?.length ?? 0) },
    accessKeyId: keys.access,
    secret: keys.secret,
    region: 'eu-north-1',
    nowMs: Date.now(),
    payloadHash: createHash('sha256')
      .update(body ?? Buffer.alloc(0))
      .digest('hex'),
  });
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: u.hostname, port: u.port, method, path: query ? `${path}?${query}` : path, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

it('keeps every acknowledged small S3 object, byte for byte, after kill -9 in the middle of concurrent PUTs', {
  timeout: 180_000,
}, async () => {
  if (store) {
    await store.drop();
    store = undefined;
  }
  store = await freshTestStore();
  const first = await startFjord('api,s3');
  const { pat } = JSON.parse(
    execFileSync(
      process.execPath,
      [FJORD, 'admin', 'customer', 'create', '--email', 's3crash@example.test'],
      {
        env: fjordEnv(),
        encoding: 'utf8',
      },
    ),
  );
  const bucket = `crash-${Date.now().toString(36)}`;
  const made = await fetch(`${first.url}/v1/storage/buckets`, {
    method: 'POST',
    headers: { 'x-api-key': pat, 'content-type': 'application/json' },
    body: JSON.stringify({ bucket_name: bucket }),
  });
  expect(made.status).toBe(201);
  const { access_key: access, secret_key: secret } = (await made.json()) as {
    access_key: string;
    secret_key: string;
  };
  const keys = { access, secret };

  // 16 clients PUT objects of 1-8 KiB (packed) and some of 200 KiB (a file each), overwriting
  // keys too, until Fjord is killed under them.
  const sent = new Map<string, Buffer[]>();
  const acknowledged = new Map<string, Buffer>();
  let killed = false;
  const clients = Array.from({ length: 16 }, async (_, c) => {
    for (let i = 0; !killed; i++) {
      const key = `c${c}/o${i % 40}`;
      const body = randomBytes(i % 10 === 9 ? 200 * 1024 : 1024 * (1 + (i % 8)));
      sent.set(key, [...(sent.get(key) ?? []), body]);
      try {
        const r = await s3Call(first.s3!, keys, 'PUT', `/${bucket}/${key}`, body);
        expect(r.status, r.body.toString()).toBe(200);
        // Answered before the kill (even if read after it): acknowledged.
        acknowledged.set(key, body);
      } catch (err) {
        if (!killed) throw err;
      }
    }
  });
  while (acknowledged.size < 300) await new Promise((r) => setTimeout(r, 20));
  killed = true;
  // Listened for before the kill: the 'exit' may come while the clients' requests fail, and a
  // SIGKILL sets signalCode, not exitCode, so a check of exitCode afterwards would wait forever.
  const exited = new Promise((r) => first.child.once('exit', r));
  first.child.kill('SIGKILL');
  await Promise.all(clients);
  await exited;

  const second = await startFjord('api,s3');
  // Every acknowledged object reads back with the bytes of its last acknowledged PUT, or of a PUT
  // sent after it (sent before the kill, not yet answered, but committed).
  for (const [key, body] of acknowledged) {
    const got = await s3Call(second.s3!, keys, 'GET', `/${bucket}/${key}`, null);
    expect(got.status, key).toBe(200);
    const candidates = sent.get(key)!.slice(sent.get(key)!.indexOf(body));
    expect(
      candidates.some((b) => b.equals(got.body)),
      `${key}: ${got.body.length} bytes, not what was acknowledged`,
    ).toBe(true);
  }
  // Nothing listed is torn: every object reads back as one of the bodies sent for its key.
  const listing = await s3Call(second.s3!, keys, 'GET', `/${bucket}`, null, 'list-type=2&max-keys=1000');
  const listed = [...listing.body.toString().matchAll(/<Key>([^<]+)<\/Key>/g)].map((m) => m[1]!);
  expect(listed.length).toBeGreaterThanOrEqual(new Set(acknowledged.keys()).size);
  for (const key of listed) {
    const got = await s3Call(second.s3!, keys, 'GET', `/${bucket}/${key}`, null);
    expect(
      sent.get(key)?.some((b) => b.equals(got.body)),
      `${key} is listed with bytes never sent`,
    ).toBe(true);
  }
  second.child.kill('SIGTERM');
  await new Promise((r) => second.child.once('exit', r));
  running = undefined;
});

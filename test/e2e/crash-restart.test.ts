// A whole Fjord killed with `kill -9` while it runs both embedded database engines: the next
// start on the same data dir stops or adopts what the dead one left, serves the same databases
// on working ports with every acknowledged write, and a graceful stop leaves no engine behind.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { hasMariadbBinaries } from '../../src/areas/databases/engines/embedded-mariadb.js';
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
  FJORD_LOG_LEVEL: 'warn',
  FJORD_DEV_CREDENTIALS: '0',
  FJORD_DATABASE_ENGINES: 'auto',
  ...(store!.databaseUrl ? { FJORD_DATABASE_URL: store!.databaseUrl } : {}),
});

/** Starts `fjord start --roles api` on the test's store; resolves with its API address. */
function startFjord(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [FJORD, 'start', '--roles', 'api'], {
    env: fjordEnv(),
    stdio: 'pipe',
  });
  running = child;
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk;
      const m = /^\s*api\s+http\s+(http:\/\/\S+)\s*$/m.exec(out);
      if (m) resolve({ child, url: m[1]! });
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

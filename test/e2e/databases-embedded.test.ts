import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectAs } from '../areas/databases-engines.js';
import { creds, dbCustomer } from '../areas/databases-fixtures.js';
import { eventually } from '../helpers/eventually.js';
import { TestFjord } from '../helpers/fjord.js';

// fjord-test: one store (sqlite). One pass runs it: the engines Fjord starts itself are its
// subject; the databases area's state is tested on both stores by test/areas/databases*.test.ts.

/** Fjord's own engines: started in its data dir on first use, stopped with it. */
describe('embedded database engines', () => {
  it('starts its own PostgreSQL and MariaDB on loopback ports, serves real databases, and stops them with itself', async () => {
    const t = await TestFjord.create({ FJORD_DATABASE_ENGINES: 'auto' });
    let pids: number[] = [];
    try {
      const backends = t.kernel.registry.backends.filter((b) => b.area === 'databases');
      expect(backends.map((b) => [b.name, b.driver, b.simulated])).toEqual([
        ['postgresql', 'embedded', false],
        ['mariadb', 'embedded', false],
        ['snapshots', 'object-storage', false],
      ]);
      const c = await dbCustomer(t);
      const made: Record<string, ReturnType<typeof creds>> = {};
      for (const dbType of ['postgresql', 'mariadb'] as const) {
        const r = await t.request('POST', '/v1/databases', {
          key: c.key,
          body: { db_type: dbType, db_name: 'emb' },
        });
        expect(r.status, r.text).toBe(201);
        expect(r.body.host).toBe('127.0.0.1');
        made[dbType] = creds(r.body);
        const conn = await connectAs(dbType, creds(r.body));
        expect((await conn.query('SELECT 1 AS one')).length).toBe(1);
        await conn.end();
      }
      const engines = await t.request('GET', '/v1/databases/engines', { key: c.key });
      expect(engines.body.engines.map((e: { driver: string }) => e.driver)).toEqual(['embedded', 'embedded']);
      const dir = join(t.kernel.config.dataDir, 'databases');
      expect(existsSync(join(dir, 'postgresql', 'data', 'PG_VERSION'))).toBe(true);
      expect(existsSync(join(dir, 'mariadb', 'data', 'mysql'))).toBe(true);
      pids = readPids(dir);
      for (const pid of pids) expect(isAlive(pid)).toBe(true);
      // Supervision: a server killed outright comes back on the same port, data intact.
      for (const pid of pids) process.kill(pid, 'SIGKILL');
      for (const dbType of ['postgresql', 'mariadb'] as const) {
        const conn = await eventually(() => connectAs(dbType, made[dbType]!), 60_000);
        expect((await conn.query('SELECT 1 AS one')).length).toBe(1);
        await conn.end();
      }
      pids = readPids(dir);
      // An emulator reset empties the servers Fjord owns along with the store.
      expect((await t.operator('POST', '/admin/v1/reset')).status).toBe(200);
      for (const dbType of ['postgresql', 'mariadb'] as const) {
        await expect(connectAs(dbType, made[dbType]!)).rejects.toThrow();
      }
    } finally {
      await t.close();
    }
    for (const pid of pids) expect(isAlive(pid), `server ${pid} stopped`).toBe(false);
  }, 120_000);

  it('says so when an engine is simulated, and still follows the contract', async () => {
    const t = await TestFjord.create({ FJORD_DATABASE_ENGINES: 'simulated' });
    try {
      const b = t.kernel.registry.backends.filter((x) => x.area === 'databases' && x.name !== 'snapshots');
      expect(b.map((x) => [x.name, x.driver, x.simulated])).toEqual([
        ['postgresql', 'simulated', true],
        ['mariadb', 'simulated', true],
      ]);
      const c = await dbCustomer(t);
      const r = await t.request('POST', '/v1/databases', {
        key: c.key,
        body: { db_type: 'postgresql', requested_name: 'sim' },
      });
      expect(r.status).toBe(201);
      const engines = await t.request('GET', '/v1/databases/engines', { key: c.key });
      expect(engines.body.engines[0]).toMatchObject({ driver: 'simulated', simulated: true });
      const d = await t.request('GET', `/v1/databases/postgresql/${r.body.db_name}`, { key: c.key });
      expect(d.body.status).toBe('running');
    } finally {
      await t.close();
    }
  });
});

function readPids(dir: string): number[] {
  return [
    Number(readFileSync(join(dir, 'postgresql', 'data', 'postmaster.pid'), 'utf8').split('\n')[0]),
    Number(readFileSync(join(dir, 'mariadb', 'mariadbd.pid'), 'utf8').trim()),
  ];
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // A zombie is not a running server.
    return !/^Z/.test(execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).trim());
  } catch {
    return false;
  }
}

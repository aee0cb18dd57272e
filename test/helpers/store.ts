import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { randomString } from '../../src/kernel/ids.js';

/** Which engine this run of the suite uses: `FJORD_TEST_STORE=postgres` with FJORD_TEST_DATABASE_URL, else SQLite. */
export const TEST_STORE: 'sqlite' | 'postgres' =
  process.env['FJORD_TEST_STORE'] === 'postgres' ? 'postgres' : 'sqlite';

export interface TestStoreHandle {
  /** The FJORD_DATABASE_URL for this store (undefined: SQLite in `dataDir`). */
  databaseUrl: string | undefined;
  dataDir: string;
  drop(): Promise<void>;
}

/** A fresh, empty store for one test Fjord: a temp SQLite file, or a new database on the test PostgreSQL. */
export async function freshTestStore(): Promise<TestStoreHandle> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fjord-test-'));
  if (TEST_STORE === 'sqlite') {
    return {
      databaseUrl: undefined,
      dataDir,
      drop: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const adminUrl = process.env['FJORD_TEST_DATABASE_URL'];
  if (!adminUrl) throw new Error('FJORD_TEST_STORE=postgres needs FJORD_TEST_DATABASE_URL');
  const name = `fjord_t_${randomString(12, 'abcdefghijklmnopqrstuvwxyz0123456789')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    databaseUrl: url.toString(),
    dataDir,
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

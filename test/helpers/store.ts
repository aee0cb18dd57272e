import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Migration } from 'kysely';
import pg from 'pg';
import { randomString } from '../../src/kernel/ids.js';
import { openStore } from '../../src/kernel/store/store.js';

/** Which engine this run of the suite uses: `FJORD_TEST_STORE=postgres` with FJORD_TEST_DATABASE_URL, else SQLite. */
export const TEST_STORE: 'sqlite' | 'postgres' =
  process.env['FJORD_TEST_STORE'] === 'postgres' ? 'postgres' : 'sqlite';

export interface TestStoreHandle {
  /** The FJORD_DATABASE_URL for this store (undefined: SQLite in `dataDir`). */
  databaseUrl: string | undefined;
  dataDir: string;
  drop(): Promise<void>;
}

/**
 * A fresh, empty store for one test Fjord: a temp SQLite file, or a new database on the test
 * PostgreSQL. With `migrations`, the store starts with them already run: a copy of a template this
 * process migrated once (running every migration was half of a TestFjord's start, paid per test).
 * Pass the same set every time in a process; the Fjord's own migrate then finds nothing to do.
 */
export async function freshTestStore(
  opts: { migrations?: () => Record<string, Migration> } = {},
): Promise<TestStoreHandle> {
  const template = opts.migrations ? await migratedTemplate(opts.migrations) : null;
  const dataDir = mkdtempSync(join(tmpdir(), 'fjord-test-'));
  if (TEST_STORE === 'sqlite') {
    if (template) {
      copyFileSync(template, join(dataDir, SQLITE_FILE));
      chmodSync(join(dataDir, SQLITE_FILE), 0o600); // as Fjord makes its own files
    }
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
  await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
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

/** The SQLite store's file in a data dir (FJORD_DATABASE_URL unset). */
const SQLITE_FILE = 'fjord.sqlite';

const templates = new Map<string, Promise<string>>();

/**
 * A store with every one of `migrations` run, to copy: a SQLite file in the temp dir, or a
 * database on the test PostgreSQL. Named by a hash of the migrations' names and code, so every
 * test process shares one per schema, and a changed migration gets a new one. Built under
 * another name and renamed into place, so no process ever copies a half-built one.
 */
function migratedTemplate(migrations: () => Record<string, Migration>): Promise<string> {
  const all = migrations();
  const hash = createHash('sha256');
  for (const name of Object.keys(all).sort()) hash.update(`${name}\0${String(all[name]?.up)}\0`);
  const key = `${TEST_STORE}:${hash.digest('hex').slice(0, 16)}`;
  let template = templates.get(key);
  if (!template) {
    const id = key.slice(key.indexOf(':') + 1);
    template = TEST_STORE === 'sqlite' ? sqliteTemplate(id, all) : postgresTemplate(id, all);
    templates.set(key, template);
  }
  return template;
}

async function sqliteTemplate(id: string, migrations: Record<string, Migration>): Promise<string> {
  const dir = join(tmpdir(), 'fjord-test-templates');
  const file = join(dir, `${id}.sqlite`);
  if (existsSync(file)) return file;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const building = mkdtempSync(join(dir, 'building-'));
  try {
    const path = join(building, SQLITE_FILE);
    const store = await openStore({ store: { kind: 'sqlite', path } });
    await store.migrate(migrations);
    await store.close();
    // Everything into the main file, so copying that one file copies the whole store.
    const db = new Database(path, { fileMustExist: true });
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    renameSync(path, file);
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return file;
}

async function postgresTemplate(id: string, migrations: Record<string, Migration>): Promise<string> {
  const adminUrl = process.env['FJORD_TEST_DATABASE_URL'];
  if (!adminUrl) throw new Error('FJORD_TEST_STORE=postgres needs FJORD_TEST_DATABASE_URL');
  const name = `fjord_template_${id}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    // One builder at a time across the suite's processes; the others then find it built.
    await admin.query(`SELECT pg_advisory_lock(hashtext($1))`, [name]);
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      const building = `${name}_building`;
      await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${building}`);
      const url = new URL(adminUrl);
      url.pathname = `/${building}`;
      const store = await openStore({ store: { kind: 'postgres', url: url.toString() } });
      await store.migrate(migrations);
      await store.close();
      // A renamed or copied database may have no sessions; a pool's last one may still be closing.
      for (let attempt = 1; ; attempt++) {
        await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [
          building,
        ]);
        try {
          await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
          break;
        } catch (err) {
          if (attempt === 50) throw err;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    }
  } finally {
    await admin.query(`SELECT pg_advisory_unlock(hashtext($1))`, [name]).catch(() => {});
    await admin.end();
  }
  return name;
}

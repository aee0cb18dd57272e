import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import {
  type Dialect,
  type Driver,
  Kysely,
  type Migration,
  Migrator,
  PostgresDialect,
  type SqliteDatabase,
  SqliteDialect,
} from 'kysely';
import type pg from 'pg';
import type { Config } from '../../config/config.js';
import { pgModule } from '../lazy.js';
import { type Exclusive, inProcessExclusive, postgresExclusive } from './exclusive.js';
import { SqliteCheckpointer } from './sqlite-checkpointer.js';
import type { SqliteStatements } from './sqlite-direct.js';
import { SqliteNotices } from './sqlite-notices.js';
import {
  assertNotInsideUnit,
  runUnit,
  type Unit,
  type UnitOptions,
  type UnitRunner,
} from './unit-of-work.js';

export type StoreKind = 'sqlite' | 'postgres';

/**
 * The one store: Kysely over SQLite or PostgreSQL. Each area types it with its own tables through
 * `typed<T>()`; the SQL differences between the engines live in `dialect.ts`.
 */
export interface Store {
  readonly kind: StoreKind;
  // biome-ignore lint/suspicious/noExplicitAny: areas narrow this with typed<T>()
  readonly db: Kysely<any>;
  typed<T>(): Kysely<T>;
  /**
   * The unit of work (see unit-of-work.ts): one write transaction under named locks. The only
   * way code outside `kernel/store` opens a transaction.
   */
  unitOfWork<T>(opts: UnitOptions, fn: (unit: Unit) => Promise<T>): Promise<T>;
  /**
   * Runs `work` while no other caller naming `key` runs, in this process and, on PostgreSQL, in
   * every other process of the store (exclusive.ts). For steps outside the store that must not
   * interleave: a database server's roles and access file. Holds no transaction, so `work` uses
   * the store and units freely; it must not be called from inside a unit.
   */
  exclusive<T>(key: string, work: () => Promise<T>): Promise<T>;
  /**
   * A number that changes whenever another connection commits (SQLite's data_version), read
   * synchronously; null where the engine offers no such cheap signal (PostgreSQL).
   */
  readonly externalChanges: (() => number) | null;
  migrate(migrations: Record<string, Migration>): Promise<string[]>;
  /** Fan-out of small change notices to every process of this store (LISTEN/NOTIFY on PostgreSQL). */
  publish(channel: string, payload: string): Promise<void>;
  subscribe(channel: string, listener: (payload: string) => void): () => void;
  /**
   * Resolves once every channel subscribed so far is listened to (PostgreSQL issues LISTEN on its
   * own connection, asynchronously): from then on no notice sent to them is missed. Immediate on
   * SQLite. For tests and for start-up code that must not miss the first notice.
   */
  listening(): Promise<void>;
  close(): Promise<void>;
}

export async function openStore(config: Pick<Config, 'store'>): Promise<Store> {
  return config.store.kind === 'postgres' ? openPostgres(config.store.url) : openSqlite(config.store.path);
}

/**
 * Wraps a dialect so that its driver refuses to hand out a connection to code running inside a
 * unit of work of this store: such a query would wait for the connection the unit holds (SQLite's
 * one connection) or starve the pool (PostgreSQL). The unit's own transaction never asks the
 * driver for a connection, so it is unaffected.
 */
function guarded(dialect: Dialect, storeId: symbol): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createDriver(): Driver {
      const inner = dialect.createDriver();
      // Delegation, not a prototype: the drivers keep their state in private class fields.
      return {
        init: () => inner.init(),
        acquireConnection: () => {
          assertNotInsideUnit(storeId);
          return inner.acquireConnection();
        },
        beginTransaction: (c, s) => inner.beginTransaction(c, s),
        commitTransaction: (c) => inner.commitTransaction(c),
        rollbackTransaction: (c) => inner.rollbackTransaction(c),
        savepoint: inner.savepoint?.bind(inner),
        rollbackToSavepoint: inner.rollbackToSavepoint?.bind(inner),
        releaseSavepoint: inner.releaseSavepoint?.bind(inner),
        releaseConnection: (c) => inner.releaseConnection(c),
        destroy: () => inner.destroy(),
      };
    },
  };
}

function openSqlite(path: string): Store {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const database = new SQLite(path);
  database.pragma('journal_mode = WAL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  database.pragma('synchronous = NORMAL');
  const id = Symbol('sqlite store');
  const statements = reusingStatements(database);
  const db = new Kysely({ dialect: guarded(new SqliteDialect({ database: statements }), id) });
  const notices = new SqliteNotices(database);
  const checkpointer = path === ':memory:' ? null : new SqliteCheckpointer(database, path);
  const dataVersion = database.prepare('PRAGMA data_version').pluck();
  return makeStore('sqlite', id, db, {
    statements,
    externalChanges: () => dataVersion.get() as number,
    publish: async (channel, payload) => notices.publish(channel, payload),
    subscribe: (channel, listener) => notices.subscribe(channel, listener),
    listening: async () => {},
    close: async () => {
      await checkpointer?.close();
      await notices.close();
    },
    exclusive: inProcessExclusive(),
  });
}

/**
 * Kysely's SQLite driver prepares every query anew, and preparing costs more than running a
 * primary-key lookup (it was the largest cost of an authenticated request). Statements are reused
 * by SQL text: better-sqlite3 runs them synchronously, so one is never in use twice, except while
 * a stream iterates it, and then a fresh one is prepared. SQLite re-prepares after schema changes.
 */
function reusingStatements(database: SQLite.Database, max = 500): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close() {
      cache.clear();
      database.close();
    },
    prepare(sql) {
      const cached = cache.get(sql);
      if (cached && !cached.busy) return cached;
      const stmt = database.prepare(sql);
      if (!cached) {
        if (cache.size >= max) cache.delete(cache.keys().next().value!);
        cache.set(sql, stmt);
      }
      return stmt;
    },
  };
}

async function openPostgres(url: string): Promise<Store> {
  const pool = new (pgModule().Pool)({ connectionString: url, max: 10 });
  pool.on('error', () => {}); // a dropped idle client is replaced on next use
  const id = Symbol('postgres store');
  const db = new Kysely({ dialect: guarded(new PostgresDialect({ pool }), id) });
  const bus = new EventEmitter().setMaxListeners(0);
  const listener = new PgListener(url, bus);
  return makeStore('postgres', id, db, {
    externalChanges: null,
    publish: async (channel, payload) => {
      await pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
    },
    subscribe: (channel, fn) => {
      bus.on(channel, fn);
      listener.listen(channel);
      return () => bus.off(channel, fn);
    },
    listening: () => listener.ready(),
    close: () => listener.close(),
    exclusive: postgresExclusive(url),
  });
}

/** Payload delivered on every channel after the notice connection was re-established. */
export const RESYNC = '';

/**
 * The one connection that LISTENs for change notices. When it drops, it reconnects (with a
 * second's pause), LISTENs again on every channel, and delivers RESYNC on each, since notices
 * sent meanwhile are lost: subscribers reload what they keep.
 */
class PgListener {
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private readonly channels = new Set<string>();
  private closed = false;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly url: string,
    private readonly bus: EventEmitter,
  ) {}

  /** The last LISTEN (or connection) under way: `ready` waits for it. */
  private pending: Promise<unknown> = Promise.resolve();

  listen(channel: string): void {
    if (this.channels.has(channel)) return;
    this.channels.add(channel);
    // One statement at a time on the connection: pg queues overlapping queries today, but
    // deprecates it (pg 9 refuses them), and subscriptions arrive together at start.
    const previous = this.pending;
    this.pending = (async () => {
      await previous.catch(() => {});
      if (this.client) await this.client.query(`LISTEN ${quoteChannel(channel)}`).catch(() => this.dropped());
      else await this.connect(false);
    })();
  }

  async ready(): Promise<void> {
    await this.pending;
    await this.connecting;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    await this.connecting?.catch(() => {});
    await this.client?.end().catch(() => {});
  }

  private connect(resync: boolean): Promise<void> {
    this.connecting ??= (async () => {
      const client = new (pgModule().Client)({ connectionString: this.url });
      client.on('notification', (msg) => this.bus.emit(msg.channel, msg.payload ?? ''));
      client.on('error', () => this.dropped());
      client.on('end', () => this.dropped());
      try {
        await client.connect();
        for (const channel of this.channels) await client.query(`LISTEN ${quoteChannel(channel)}`);
        if (this.closed) {
          await client.end();
          return;
        }
        this.client = client;
        if (resync) for (const channel of this.channels) this.bus.emit(channel, RESYNC);
      } catch {
        await client.end().catch(() => {});
        this.scheduleRetry();
      }
    })().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private dropped(): void {
    if (!this.client) return;
    this.client = null;
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.closed || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.connect(true);
    }, 1000);
    this.retry.unref();
  }
}

const quoteChannel = (channel: string) => `"${channel.replace(/"/g, '')}"`;

function makeStore(
  kind: StoreKind,
  id: symbol,
  // biome-ignore lint/suspicious/noExplicitAny: see Store.db
  db: Kysely<any>,
  parts: Pick<Store, 'publish' | 'subscribe' | 'listening' | 'externalChanges'> & {
    close: () => Promise<void>;
    exclusive: { run: Exclusive; close(): Promise<void> };
    statements?: SqliteStatements;
  },
): Store {
  const runner: UnitRunner = {
    id,
    kind,
    db,
    statements: parts.statements,
    // An afterCommit hook's failure cannot undo the commit: it is reported, never thrown.
    onAfterCommitError: (err: unknown) => console.error('unit of work: afterCommit failed', err),
  };
  return {
    kind,
    db,
    typed: <T>() => db as unknown as Kysely<T>,
    unitOfWork: (opts, fn) => runUnit(runner, opts, fn),
    exclusive: (key, work) => {
      assertNotInsideUnit(id);
      return parts.exclusive.run(key, work);
    },
    externalChanges: parts.externalChanges,
    async migrate(migrations) {
      const migrator = new Migrator({
        db,
        provider: { getMigrations: async () => migrations },
        migrationTableName: 'fjord_migrations',
        migrationLockTableName: 'fjord_migrations_lock',
        // Areas are built in parallel, so a migration written later may carry an earlier date
        // than one a store already ran; every migration runs once, whatever its place.
        allowUnorderedMigrations: true,
      });
      const { error, results } = await migrator.migrateToLatest();
      if (error) throw error;
      return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    },
    publish: parts.publish,
    subscribe: parts.subscribe,
    listening: parts.listening,
    async close() {
      await parts.close();
      await parts.exclusive.close();
      await db.destroy();
    },
  };
}

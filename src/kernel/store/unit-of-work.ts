import { AsyncLocalStorage } from 'node:async_hooks';
import { type Kysely, sql } from 'kysely';
import { isUniqueViolation } from './dialect.js';
import { holdSqlite, releaseSqlite, type SqliteStatements } from './sqlite-direct.js';

/**
 * The unit of work: the one way any code outside `kernel/store` writes under a check.
 *
 * A unit is one write transaction holding named locks until it ends:
 * - SQLite: `BEGIN IMMEDIATE`, which takes the database's single write lock at once, across
 *   processes; the named locks are implied by it.
 * - PostgreSQL: an ordinary transaction that first takes `pg_advisory_xact_lock` on every named
 *   lock, in sorted order (so two units never wait on each other in a cycle).
 *
 * Every count-then-create limit is checked and written inside one unit under its owner's lock, so
 * 50 requests arriving together against a limit of N give exactly N successes on both engines.
 *
 * Rules (enforced where it is cheap to):
 * - All queries inside a unit go through the handle it gives (`tx`, or the repos bound to it). A
 *   query through the store's own `db` from inside a unit would wait for the connection the unit
 *   holds (SQLite) or starve the pool (PostgreSQL): it throws instead.
 * - No network or child-process I/O inside a unit: it holds the store's write lock.
 * - A unit started inside another one of the same store joins it: it runs in the outer
 *   transaction and takes its extra locks there. Take every lock a unit needs up front.
 * - Await every statement before the unit's function returns, one after another. On SQLite,
 *   COMMIT runs as soon as the function settles, and `runCompiled` statements run at once on the
 *   held connection (sqlite-direct.ts), ahead of any Kysely query still queued on the handle.
 * - Work that must happen only once the writes are durable (change notices, starting jobs that
 *   read the rows) goes in `afterCommit`; it runs after COMMIT, never after a rollback.
 */

// biome-ignore lint/suspicious/noExplicitAny: a unit serves every area's tables; repos narrow it
export type AnyDb = Kysely<any>;

export interface UnitOptions {
  /** Names serialised against each other, e.g. `dns:zones:<customer id>`. */
  locks?: readonly string[];
  /**
   * Attempts for a unit that may lose a race on a unique key to a concurrent one it takes no lock
   * against (the data plane's writers, which serialise on a bucket's row instead of a named lock):
   * the unit runs again, from scratch, while its failure is a unique violation. Default 1 (no
   * retry). The only retry of a unit besides PostgreSQL's serialisation failures and deadlocks.
   */
  attemptsOnUniqueRace?: number;
}

/**
 * A unit's transaction narrowed to an area's tables: what a repo bound to a unit holds. The unit
 * hands it out untyped (`AnyDb`, which serves every area), and it is assignable to this with no
 * cast, so repos take `UnitDb<Tables>` and are built with `Repo.over(unit.tx)` or `unitsOf`.
 */
export type UnitDb<Tables> = Kysely<Tables>;

export interface Unit {
  /** The transaction: every query of the unit goes through it. */
  readonly tx: AnyDb;
  /** Runs `fn` once the unit has committed (in order of registration); errors are reported, not thrown. */
  afterCommit(fn: () => unknown): void;
}

interface ActiveUnit extends Unit {
  readonly storeId: symbol;
  readonly kind: 'sqlite' | 'postgres';
  readonly held: Set<string>;
  /** False once the unit has ended: work it started that outlives it may use the store again. */
  open: boolean;
  readonly after: (() => unknown)[];
}

const active = new AsyncLocalStorage<ActiveUnit>();
/**
 * Units open in this process. While any is, `active` tracks async context; when the last one
 * ends it is disabled. On Node 20 an enabled AsyncLocalStorage installs promise hooks that tax
 * every promise in the process — about a quarter of a cached API read's CPU — so requests that
 * open no unit (most reads) must not pay for the ones that do.
 */
let openUnits = 0;

/** The unit the caller runs in, for this store; null outside any. */
export function currentUnit(storeId: symbol): Unit | null {
  const u = active.getStore();
  return u?.open && u.storeId === storeId ? u : null;
}

/** Thrown by the store's own `db` when code inside a unit bypasses the unit's handle. */
export class QueryOutsideUnitError extends Error {
  constructor() {
    super(
      'a query through store.db inside a unit of work: use the transaction (or repos) the unit hands you',
    );
  }
}

/** Called by the store's driver before it hands out a connection. */
export function assertNotInsideUnit(storeId: symbol): void {
  if (currentUnit(storeId)) throw new QueryOutsideUnitError();
}

const RETRYABLE_PG = new Set(['40001', '40P01']); // serialization failure, deadlock detected
const MAX_ATTEMPTS = 3;

export interface UnitRunner {
  readonly id: symbol;
  readonly kind: 'sqlite' | 'postgres';
  readonly db: AnyDb;
  /** SQLite: the connection's statements, which a unit's own statements may run on directly. */
  readonly statements?: SqliteStatements;
  onAfterCommitError(err: unknown): void;
}

/** Runs `fn` as a unit of work on `store` (see the module comment). Used through `Store.unitOfWork`. */
export async function runUnit<T>(
  store: UnitRunner,
  opts: UnitOptions,
  fn: (unit: Unit) => Promise<T>,
): Promise<T> {
  const locks = [...new Set(opts.locks ?? [])].sort();
  const outer = active.getStore();
  if (outer?.open && outer.storeId === store.id) {
    // Joined: the outer transaction already excludes every writer on SQLite; on PostgreSQL take
    // whatever locks it does not hold yet.
    for (const key of locks) {
      if (outer.held.has(key)) continue;
      if (outer.kind === 'postgres') await takeLock(outer.tx, key);
      outer.held.add(key);
    }
    return fn(outer);
  }
  const uniqueAttempts = opts.attemptsOnUniqueRace ?? 1;
  let conflicts = 0;
  let races = 0;
  for (;;) {
    try {
      return await runOnce(store, locks, fn);
    } catch (err) {
      if (isUniqueViolation(err)) {
        if (++races >= uniqueAttempts) throw err;
        continue;
      }
      const code = (err as { code?: unknown }).code;
      if (store.kind !== 'postgres' || ++conflicts >= MAX_ATTEMPTS || !RETRYABLE_PG.has(String(code)))
        throw err;
    }
  }
}

async function runOnce<T>(store: UnitRunner, locks: string[], fn: (unit: Unit) => Promise<T>): Promise<T> {
  let unit: ActiveUnit | null = null;
  const body = async (tx: AnyDb) => {
    unit = {
      tx,
      storeId: store.id,
      kind: store.kind,
      held: new Set(locks),
      open: true,
      after: [],
      afterCommit(f) {
        this.after.push(f);
      },
    };
    const u = unit;
    openUnits++;
    try {
      return await active.run(u, async () => {
        if (store.kind === 'postgres') for (const key of locks) await takeLock(tx, key);
        return fn(u);
      });
    } finally {
      u.open = false;
      if (--openUnits === 0) active.disable();
    }
  };
  const result =
    store.kind === 'postgres'
      ? await store.db.transaction().execute(body)
      : await store.db.connection().execute(async (conn) => {
          // The connection is this unit's until it ends (sqlite-direct.ts).
          const statements = store.statements;
          const run = (text: string) =>
            statements ? statements.prepare(text).run([]) : sql.raw(text).execute(conn);
          await run('BEGIN IMMEDIATE');
          if (statements) holdSqlite(conn, statements);
          try {
            const r = await body(conn);
            releaseSqlite(conn);
            await run('COMMIT');
            return r;
          } catch (err) {
            releaseSqlite(conn);
            try {
              await run('ROLLBACK');
            } catch {
              // Nothing to roll back (SQLite ended the transaction itself), or the connection is gone.
            }
            throw err;
          }
        });
  for (const f of (unit as ActiveUnit | null)?.after ?? []) {
    try {
      await f();
    } catch (err) {
      store.onAfterCommitError(err);
    }
  }
  return result;
}

function takeLock(tx: AnyDb, key: string) {
  return sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(tx);
}

/**
 * An area's repos, bound either to the store (for reads) or to a unit's transaction. Build it
 * once in the area's setup: `const data = unitsOf(kernel.store, (db) => new DnsRepo(db))`.
 */
export interface Units<R> {
  /** The repos outside any unit: reads, and single-statement writes that check nothing. */
  readonly read: R;
  /** Runs `fn` in a unit holding `locks`, with the repos bound to its transaction. */
  run<T>(
    locks: readonly string[],
    fn: (repos: R, unit: Unit) => Promise<T>,
    opts?: Omit<UnitOptions, 'locks'>,
  ): Promise<T>;
}

export function unitsOf<R>(
  store: { readonly db: AnyDb; unitOfWork<T>(opts: UnitOptions, fn: (unit: Unit) => Promise<T>): Promise<T> },
  bind: (db: AnyDb) => R,
): Units<R> {
  return {
    read: bind(store.db),
    run: (locks, fn, opts) => store.unitOfWork({ ...opts, locks }, (unit) => fn(bind(unit.tx), unit)),
  };
}

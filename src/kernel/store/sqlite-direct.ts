import type { QueryResult } from 'kysely';

/** Prepares (or reuses) a statement on a SQLite store's one connection: better-sqlite3's, cached. */
export interface SqliteStatements {
  prepare(sql: string): {
    readonly reader: boolean;
    all(parameters: readonly unknown[]): unknown[];
    run(parameters: readonly unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  };
}

/**
 * The handles of SQLite units of work that are open, each with its connection's statements. A unit
 * holds the store's only connection from its first statement to its end, so statements given its
 * handle can run on that connection directly and synchronously, as Kysely's own driver would run
 * them, without the driver's per-query queue of promises (several turns of the microtask queue
 * per statement, which cost a batch of small writes more than SQLite's own work). Any other
 * handle, including the store's own `db`, still goes through Kysely.
 */
const held = new WeakMap<object, SqliteStatements>();

export function holdSqlite(handle: object, statements: SqliteStatements): void {
  held.set(handle, statements);
}

export function releaseSqlite(handle: object): void {
  held.delete(handle);
}

/** Runs `sql` on the connection `handle` holds, if it is an open SQLite unit's; null otherwise. */
export function runHeld<R>(
  handle: object,
  sql: string,
  parameters: readonly unknown[],
): QueryResult<R> | null {
  const statements = held.get(handle);
  if (!statements) return null;
  const stmt = statements.prepare(sql);
  if (stmt.reader) return { rows: stmt.all(parameters) as R[] };
  const { changes, lastInsertRowid } = stmt.run(parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

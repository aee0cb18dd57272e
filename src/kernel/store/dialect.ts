import { sql } from 'kysely';
import type { Store } from './store.js';

/** The few places where SQLite and PostgreSQL differ, kept together. */

export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** Runs an insert, turning a unique-constraint violation into the caller's conflict error. */
export async function insertUnique<T>(insert: () => Promise<T>, conflict: () => Error): Promise<T> {
  try {
    return await insert();
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict();
    throw err;
  }
}

/** Booleans are stored as 0/1 integers on both engines. */
export const toBool = (v: unknown): boolean => v === true || v === 1 || v === '1';
export const fromBool = (v: boolean): number => (v ? 1 : 0);

export const toJson = (v: unknown): string => JSON.stringify(v ?? null);
export function fromJson<T>(text: string | null | undefined, fallback: T): T {
  if (text === null || text === undefined || text === '') return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/** Every table of the store, for reset. */
export async function listTables(store: Store): Promise<string[]> {
  if (store.kind === 'sqlite') {
    const rows = await sql<{ name: string }>`
      SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`.execute(store.db);
    return rows.rows.map((r) => r.name);
  }
  const rows = await sql<{ tablename: string }>`
    SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`.execute(store.db);
  return rows.rows.map((r) => r.tablename);
}

/** Empties every table but the migration bookkeeping, in one transaction. */
export async function truncateAll(store: Store): Promise<void> {
  const tables = (await listTables(store)).filter((t) => !t.startsWith('fjord_migrations'));
  if (tables.length === 0) return;
  if (store.kind === 'postgres') {
    await sql`TRUNCATE ${sql.join(tables.map((t) => sql.id(t)))} CASCADE`.execute(store.db);
    return;
  }
  await store.db.transaction().execute(async (trx) => {
    await sql`PRAGMA defer_foreign_keys = ON`.execute(trx);
    for (const t of tables) await sql`DELETE FROM ${sql.id(t)}`.execute(trx);
  });
}

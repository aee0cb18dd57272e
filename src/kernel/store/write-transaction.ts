import { type Kysely, sql } from 'kysely';
import type { Store } from './store.js';

/**
 * A transaction that writes, started so that check-then-write logic inside it cannot race:
 * on SQLite it begins IMMEDIATE (the database's one write lock is taken at once, across
 * processes, instead of failing when a read has to turn into a write); on PostgreSQL it is an
 * ordinary transaction in which `lockKey` serialises the callers that name the same key.
 */
export async function writeTransaction<T>(
  store: Store,
  // biome-ignore lint/suspicious/noExplicitAny: callers narrow it like store.typed<T>()
  fn: (tx: Kysely<any>) => Promise<T>,
): Promise<T> {
  if (store.kind === 'postgres') return store.db.transaction().execute(fn);
  return store.db.connection().execute(async (conn) => {
    await sql`BEGIN IMMEDIATE`.execute(conn);
    try {
      const result = await fn(conn);
      await sql`COMMIT`.execute(conn);
      return result;
    } catch (err) {
      await sql`ROLLBACK`.execute(conn);
      throw err;
    }
  });
}

/**
 * Holds `key` until the transaction ends (an advisory lock on PostgreSQL). On SQLite the
 * IMMEDIATE transaction already excludes every other writer.
 */
// biome-ignore lint/suspicious/noExplicitAny: any transaction of the store
export async function lockKey(store: Store, tx: Kysely<any>, key: string): Promise<void> {
  if (store.kind === 'postgres')
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(tx);
}

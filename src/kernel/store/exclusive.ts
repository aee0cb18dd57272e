import { KeyedMutex } from '../keyed-mutex.js';
import { pgModule } from '../lazy.js';

/**
 * Mutual exclusion by name for steps on systems outside the store — a database server's roles
 * and access file, an engine's configuration — that must not interleave, holding no transaction
 * while they run. See `Store.exclusive`.
 */
export type Exclusive = <T>(key: string, work: () => Promise<T>) => Promise<T>;

/** SQLite: one process serves the API of a SQLite store, so a lock in this process is enough. */
export function inProcessExclusive(): { run: Exclusive; close(): Promise<void> } {
  const local = new KeyedMutex();
  return { run: (key, work) => local.run(key, work), close: async () => {} };
}

/**
 * PostgreSQL: callers in this process queue on an in-process mutex, and the one at the head holds
 * a session advisory lock (`pg_advisory_lock`) on a connection of its own, so callers in every
 * process of the store take turns. The connections come from a small pool apart from the store's,
 * so work that waits for the store never starves the lock holders (or the reverse). A process
 * that dies mid-work loses its session, and with it the lock. Sections may nest (a database's
 * lock, then its engine's access file): each level takes a connection, so the pool is sized far
 * above the sections one process runs at once (one per database being changed, plus one per
 * engine), and idle connections close after 10 s.
 */
export function postgresExclusive(url: string): { run: Exclusive; close(): Promise<void> } {
  const pool = new (pgModule().Pool)({ connectionString: url, max: 64, idleTimeoutMillis: 10_000 });
  pool.on('error', () => {}); // a dropped idle client is replaced on next use
  const local = new KeyedMutex();
  const run: Exclusive = (key, work) =>
    local.run(key, async () => {
      const client = await pool.connect();
      try {
        // Seed 1: a namespace apart from the units' transaction locks (seed 0) of the same names.
        await client.query('SELECT pg_advisory_lock(hashtextextended($1, 1))', [key]);
      } catch (err) {
        client.release(err as Error);
        throw err;
      }
      try {
        return await work();
      } finally {
        try {
          await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 1))', [key]);
          client.release();
        } catch (err) {
          client.release(err as Error); // the session is dropped, and the lock with it
        }
      }
    });
  let ended: Promise<void> | null = null;
  // A store may be closed twice (a stop, then a test's own close): the pool ends once.
  return { run, close: () => (ended ??= pool.end()) };
}

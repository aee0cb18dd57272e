import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, expect, it } from 'vitest';
import { SqliteCheckpointer } from '../../src/kernel/store/sqlite-checkpointer.js';

const dir = mkdtempSync(join(tmpdir(), 'fjord-checkpoint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`never: ${what}`);
}

/**
 * The database file grows only when a checkpoint copies pages into it; the main connection's own
 * checkpoint is set far above what is written here, so growth shows the worker did it.
 */
it('checkpoints the log from its own thread while the main connection writes, and stops on close', async () => {
  const path = join(dir, 'fjord.db');
  const db = new SQLite(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB)');
  const errors: string[] = [];
  const checkpointer = new SqliteCheckpointer(db, path, (m) => errors.push(m), 0);
  await until('the worker started', () => checkpointer.running);
  expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(4000);
  const before = statSync(path).size;

  const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
  const body = Buffer.alloc(3000, 7);
  for (let batch = 0; batch < 40; batch++) {
    db.transaction(() => {
      for (let i = 0; i < 50; i++) insert.run(body);
    })();
    await new Promise((r) => setImmediate(r));
  }
  // 2000 rows of 3 KB: ~6 MB, well under the main connection's 4000-page mark.
  await until('the database file took the logged pages', () => statSync(path).size > before + 5_000_000);
  expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(2000);
  expect(checkpointer.running).toBe(true);

  await checkpointer.close();
  expect(checkpointer.running).toBe(false);
  expect(errors).toEqual([]);
  db.close();
});

it('never starts a thread for a store closed before its start', async () => {
  const path = join(dir, 'short.db');
  const db = new SQLite(path);
  db.pragma('journal_mode = WAL');
  const checkpointer = new SqliteCheckpointer(db, path);
  await checkpointer.close();
  expect(checkpointer.running).toBe(false);
  expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
  db.close();
});

import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type SQLite from 'better-sqlite3';

/** How often a process looks for notices other processes wrote (only while something listens). */
export const NOTICE_POLL_MS = 25;
/** Notices are kept this long: far longer than any poll gap, so none is missed by a live process. */
const NOTICE_TTL_MS = 60_000;

/**
 * Change notices for a SQLite store shared by several processes on one machine (say `fjord start
 * --roles api,worker` beside `fjord start --roles dns` on the same data dir), the SQLite
 * counterpart of LISTEN/NOTIFY: a notice is emitted in this process at once and written to a
 * small table; other processes read new rows when `PRAGMA data_version` says another connection
 * has committed, which costs nothing while nobody writes.
 */
export class SqliteNotices {
  private readonly bus = new EventEmitter().setMaxListeners(0);
  private readonly origin = randomUUID();
  private readonly insert: SQLite.Statement;
  private readonly newer: SQLite.Statement;
  private readonly prune: SQLite.Statement;
  private readonly dataVersion: SQLite.Statement;
  private lastId: number;
  private lastVersion: number;
  private lastPrune = 0;
  private timer: NodeJS.Timeout | null = null;
  private listeners = 0;

  constructor(database: SQLite.Database) {
    database.exec(
      `CREATE TABLE IF NOT EXISTS store_notices (
         id INTEGER PRIMARY KEY AUTOINCREMENT,
         channel TEXT NOT NULL,
         payload TEXT NOT NULL,
         origin TEXT NOT NULL,
         at INTEGER NOT NULL)`,
    );
    this.insert = database.prepare(
      'INSERT INTO store_notices (channel, payload, origin, at) VALUES (?, ?, ?, ?)',
    );
    this.newer = database.prepare(
      'SELECT id, channel, payload, origin FROM store_notices WHERE id > ? ORDER BY id',
    );
    this.prune = database.prepare('DELETE FROM store_notices WHERE at < ?');
    this.dataVersion = database.prepare('PRAGMA data_version').pluck();
    this.lastId =
      (database.prepare('SELECT COALESCE(MAX(id), 0) FROM store_notices').pluck().get() as number) ?? 0;
    this.lastVersion = this.dataVersion.get() as number;
  }

  publish(channel: string, payload: string): void {
    this.bus.emit(channel, payload);
    const now = Date.now();
    this.insert.run(channel, payload, this.origin, now);
    if (now - this.lastPrune > NOTICE_TTL_MS) {
      this.lastPrune = now;
      this.prune.run(now - NOTICE_TTL_MS);
    }
  }

  subscribe(channel: string, listener: (payload: string) => void): () => void {
    this.bus.on(channel, listener);
    if (this.listeners++ === 0) this.startPolling();
    return () => {
      this.bus.off(channel, listener);
      if (--this.listeners === 0) this.stopPolling();
    };
  }

  /** Reads notices other processes committed since the last look. */
  poll(): void {
    const version = this.dataVersion.get() as number;
    if (version === this.lastVersion) return;
    this.lastVersion = version;
    for (const row of this.newer.all(this.lastId) as {
      id: number;
      channel: string;
      payload: string;
      origin: string;
    }[]) {
      this.lastId = row.id;
      if (row.origin !== this.origin) this.bus.emit(row.channel, row.payload);
    }
  }

  close(): void {
    this.stopPolling();
  }

  private startPolling() {
    this.timer = setInterval(() => {
      try {
        this.poll();
      } catch {
        // the store is closing; the next start polls afresh
      }
    }, NOTICE_POLL_MS);
    this.timer.unref();
  }

  private stopPolling() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

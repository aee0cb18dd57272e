import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

/**
 * WAL checkpoints on a thread of their own. SQLite checkpoints automatically inside the commit
 * that fills the log past 1000 pages: on the event loop, copying those pages into the database
 * file and fsyncing both files. Under a burst of S3 PUTs that was one commit in twenty taking
 * 2-70 ms, four fifths of all commit time, with every request waiting behind it.
 *
 * Here a worker with its own connection runs `wal_checkpoint(PASSIVE)` every few tens of
 * milliseconds while the log has frames: PASSIVE never blocks writers or readers. The main
 * connection keeps an automatic checkpoint at a higher mark (see below), which lets the log start
 * over and keeps it bounded even if the worker stopped.
 *
 * The worker starts a moment after the store opens (a store opened and closed at once, as in
 * tests and one-shot commands, never starts a thread) and is stopped before the store closes.
 */

/**
 * The main connection's own checkpoint, kept at four times SQLite's default. Under steady writes
 * a passive checkpoint from another connection never sees the log fully copied (new frames keep
 * coming), so the log could never start over; the main connection's checkpoint runs between its
 * own commits, where nothing is being appended, and by then the worker has copied all but the
 * last frames: it costs the fsyncs, not the copying, once per 4000 pages written.
 */
const FALLBACK_AUTOCHECKPOINT_PAGES = 4_000;
/** A log that started over is cut back to this (SQLite otherwise keeps its largest size). */
const LOG_SIZE_LIMIT_BYTES = 16 * 1024 * 1024;
const START_AFTER_MS = 1_000;
const IDLE_INTERVAL_MS = 200;
const BUSY_INTERVAL_MS = 20;

// CommonJS run with `eval`: no file to find next to a bundle. better-sqlite3 is resolved by the
// main thread and its path handed over.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.path, { fileMustExist: true });
let timer = null;
const tick = () => {
  let log = 0;
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    log = r ? r.log - r.checkpointed : 0;
  } catch (err) {
    parentPort.postMessage({ error: String(err && err.message || err) });
  }
  timer = setTimeout(tick, log > 0 ? workerData.busyMs : workerData.idleMs);
};
timer = setTimeout(tick, workerData.idleMs);
parentPort.on('message', (m) => {
  if (m !== 'close') return;
  clearTimeout(timer);
  try { db.close(); } finally { parentPort.close(); }
});
`;

export class SqliteCheckpointer {
  private worker: Worker | null = null;
  private readonly startTimer: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly database: SQLite.Database,
    private readonly path: string,
    private readonly onError: (message: string) => void = (m) =>
      process.emitWarning(`WAL checkpoint worker: ${m}`, 'FjordStoreWarning'),
    startAfterMs = START_AFTER_MS,
  ) {
    this.startTimer = setTimeout(() => this.start(), startAfterMs);
    this.startTimer.unref();
  }

  /** Whether the worker is running (tests). */
  get running(): boolean {
    return this.worker !== null;
  }

  private start(): void {
    if (this.closed) return;
    let worker: Worker;
    try {
      worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: {
          module: createRequire(import.meta.url).resolve('better-sqlite3'),
          path: this.path,
          idleMs: IDLE_INTERVAL_MS,
          busyMs: BUSY_INTERVAL_MS,
        },
      });
    } catch (err) {
      // Runs in a timer: a throw here would be an uncaught exception. SQLite checkpoints as usual.
      this.report((err as Error).message);
      return;
    }
    worker.unref();
    worker.on('message', (m: { error?: string }) => {
      if (m.error) this.report(m.error);
    });
    // A worker that failed to start or died: the main connection checkpoints as SQLite does.
    worker.on('error', (err) => {
      this.report(err.message);
      this.fallBack();
    });
    worker.on('exit', () => {
      if (this.worker === worker) this.fallBack();
    });
    this.worker = worker;
    this.database.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
    this.database.pragma(`journal_size_limit = ${LOG_SIZE_LIMIT_BYTES}`);
  }

  /** A failing checkpoint fails every few milliseconds: each message is told once in a row. */
  private report(message: string): void {
    if (message === this.lastError) return;
    this.lastError = message;
    this.onError(message);
  }
  private lastError: string | null = null;

  private fallBack(): void {
    this.worker = null;
    if (!this.closed) this.database.pragma('wal_autocheckpoint = 1000');
  }

  /** Stops the worker (its connection closed), before the main connection closes. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.startTimer);
    const worker = this.worker;
    this.worker = null;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('close');
    // A checkpoint in progress finishes first; a worker that does not end is ended.
    const stuck = setTimeout(() => void worker.terminate(), 5_000);
    await exited;
    clearTimeout(stuck);
  }
}

import {
  closeSync,
  constants,
  fdatasync,
  fsync,
  openSync,
  readSync,
  statSync,
  unlinkSync,
  writev,
} from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { newId } from '../../../../kernel/ids.js';
import { PackReaders } from './pack-readers.js';

/** Bodies up to this size go into a pack instead of a file of their own. */
export const PACK_MAX_BLOB = 128 * 1024;
/** A pack takes no more appends past this size; the next append starts a new one. */
const PACK_ROLL_BYTES = 64 * 1024 * 1024;
/**
 * A pack takes appends for at most this long after it was opened (on the clock it is given); the
 * next append after that starts a new one. So a pack older than this is closed for good, whichever
 * process created it, and compaction may move its entries out (see pack-compaction.ts).
 */
export const PACK_APPEND_MS = 3600_000;
/** Each entry: `FJB1`, then the body's length (u32 big-endian), then the body. */
const MAGIC = 0x464a4231;
export const PACK_ENTRY_HEADER = 8;
const HEADER = PACK_ENTRY_HEADER;

const REF = /^([0-9a-f-]{36})\.(\d+)\.(\d+)$/;

/** A packed blob's reference: `<pack id>.<offset of the body>.<length>`. */
export function parsePackRef(ref: string): { pack: string; offset: number; length: number } | null {
  const m = REF.exec(ref);
  return m ? { pack: m[1]!, offset: Number(m[2]), length: Number(m[3]) } : null;
}

const syncFd = (fd: number, dataOnly: boolean) =>
  new Promise<void>((resolve, reject) =>
    (dataOnly ? fdatasync : fsync)(fd, (err) => (err ? reject(err) : resolve())),
  );

/** Where the platform has no O_DSYNC, a flush fdatasyncs after its write instead. */
const DSYNC: number | undefined = constants.O_DSYNC;

/** One positioned gathered write, all of it (a short write is an error). */
const writeAt = (fd: number, buffers: Buffer[], position: number, bytes: number) =>
  new Promise<void>((resolve, reject) =>
    writev(fd, buffers, position, (err, written) => {
      if (err) reject(err);
      else if (written !== bytes) reject(new Error(`short write to a pack: ${written} of ${bytes} bytes`));
      else resolve();
    }),
  );

/** The pack being appended to: its file, where the next entry goes, its flushes. */
interface OpenPack {
  id: string;
  /** When it was opened (`now()`): it takes no append `PACK_APPEND_MS` later. */
  openedAt: number;
  fd: number;
  size: number;
  entries: number;
  /** Appended entries not written yet (header, body chunks, …), from offset `pendingAt`. */
  pending: Buffer[];
  pendingAt: number;
  pendingBytes: number;
  /** A write failed: what was appended after it cannot be trusted, so nothing more is written. */
  failed: Error | null;
  /** The flush not started yet, which covers every append so far; null when none is queued. */
  queued: Promise<void> | null;
  /** Settles when the last flush started and every one before it have (in order). */
  settled: Promise<void>;
  /** Flushes running. */
  inFlight: number;
  /** Called when the last running flush ends (a retired pack then closes). */
  idle: (() => void) | null;
  /** The pack's directory entry is durable (fsynced once, before its first entry is acknowledged). */
  created: Promise<void> | null;
}

/**
 * Small blobs appended to pack files (`<root>/packs/<id>`) instead of a file each, as object
 * stores commonly do: writers that append at the same time share one durable write to the pack,
 * and an overwritten small object costs no unlink.
 *
 * - An append takes the next stretch of the pack and waits for the pack's next flush: on the next
 *   turn of the event loop, one `pwritev` of every entry appended in this turn, in the thread pool,
 *   to a file opened `O_DSYNC` (writers arriving meanwhile share the next flush).
 * - Packs are only ever appended to by the process that created them, never after a restart: a
 *   crash can leave a torn entry only at the end of a pack no row names. Nor past `PACK_APPEND_MS`
 *   after they were opened, so that other processes can tell a pack closed for good.
 * - A packed blob's delete is counted; the pack file goes once every entry in it is gone. Entries
 *   of a pack written before a restart are counted again by the orphan sweep, which lists them.
 *   A closed pack with few live entries is compacted (`PackCompactor`, objects/pack-compaction.ts).
 */
export class PackFiles {
  readonly dir: string;
  private current: OpenPack | null = null;
  /** Entries per pack (this process's packs, and older ones the sweep has read). */
  private readonly entries = new Map<string, number>();
  /** Deleted entries of each pack, until the pack goes. */
  private readonly dead = new Map<string, Set<number>>();
  /** When each pack this process appended to was opened (`now()`), while it has its file. */
  private readonly opened = new Map<string, number>();
  /** Descriptors kept open for reads (a small GET is one read, not an open, a read and a close). */
  private readonly readers = new PackReaders((pack) => this.pathOf(pack));

  constructor(
    root: string,
    private readonly durable: boolean,
    /** The clock packs age on (the kernel's, so the emulator clock can age them). */
    readonly now: () => number = Date.now,
  ) {
    this.dir = join(root, 'packs');
  }

  pathOf(pack: string): string {
    return join(this.dir, pack);
  }

  /** Appends a body; resolves with its reference once it is written (and durable, unless fsync is off). */
  async append(chunks: Buffer[], length: number): Promise<string> {
    const pack = this.packFor(HEADER + length);
    const header = Buffer.allocUnsafe(HEADER);
    header.writeUInt32BE(MAGIC, 0);
    header.writeUInt32BE(length, 4);
    const offset = pack.size;
    if (pack.pending.length === 0) pack.pendingAt = offset;
    pack.pending.push(header, ...chunks);
    pack.pendingBytes += HEADER + length;
    pack.size += HEADER + length;
    pack.entries++;
    this.entries.set(pack.id, pack.entries);
    // Queued now, so the pack stays open until this entry is written.
    await this.flush(pack);
    return `${pack.id}.${offset + HEADER}.${length}`;
  }

  private packFor(bytes: number): OpenPack {
    const cur = this.current;
    const now = this.now();
    if (cur && cur.size + bytes <= PACK_ROLL_BYTES && now - cur.openedAt < PACK_APPEND_MS) return cur;
    if (cur) {
      this.retire(cur);
      this.current = null; // not current even if the new pack cannot be opened
    }
    const id = newId();
    this.opened.set(id, now);
    const pack: OpenPack = {
      id,
      openedAt: now,
      // Durable packs are opened O_DSYNC: each write returns once its bytes (and the file's new
      // size) are on disk, as a write and an fdatasync would, in one trip to the thread pool.
      fd: openSync(
        this.pathOf(id),
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (this.durable ? (DSYNC ?? 0) : 0),
      ),
      size: 0,
      entries: 0,
      pending: [],
      pendingAt: 0,
      pendingBytes: 0,
      failed: null,
      queued: null,
      settled: Promise.resolve(),
      inFlight: 0,
      idle: null,
      created: null,
    };
    pack.created = this.durable ? syncDir(this.dir) : Promise.resolve();
    this.current = pack;
    return pack;
  }

  /** Closes a pack that takes no more appends once its last flush is done. */
  private retire(pack: OpenPack): void {
    let closed = false;
    const close = () => {
      if (closed || pack.queued !== null || pack.inFlight > 0) return;
      closed = true;
      closeSync(pack.fd);
      if ((this.dead.get(pack.id)?.size ?? 0) >= pack.entries) this.drop(pack.id);
    };
    pack.idle = close;
    // A queued flush starts and ends later; the last one to end closes the file.
    if (pack.queued !== null) void pack.queued.catch(() => {}).finally(close);
    else close();
  }

  /**
   * The pack's next flush, shared by every append made before it starts: the appended entries
   * written in one `pwritev`, durable when it returns (`O_DSYNC`, unless fsync is off). It starts on the next
   * turn of the event loop, after the appends of the requests read in this turn, whether or not an
   * earlier one is still running: flushes overlap (as the separate files' fdatasyncs of concurrent
   * writers would) instead of queueing behind each other. But a flush resolves only once every
   * earlier flush of the pack has succeeded too, and fails if one failed: an entry is acknowledged
   * only when every byte before it in the pack is on disk, so a gap (a failed write, or one a
   * power loss cut) can only precede entries no row names, which is what the sweep's scan of a
   * pack, stopping at the first bad entry, relies on.
   */
  private flush(pack: OpenPack): Promise<void> {
    pack.queued ??= new Promise<void>((resolve, reject) => {
      setImmediate(() => {
        pack.queued = null;
        const buffers = pack.pending;
        const at = pack.pendingAt;
        const bytes = pack.pendingBytes;
        pack.pending = [];
        pack.pendingBytes = 0;
        if (pack.failed) return reject(pack.failed);
        pack.inFlight++;
        // A new pack's directory entry is made durable before its first entries are acknowledged.
        const written = Promise.resolve(pack.created)
          .then(() => writeAt(pack.fd, buffers, at, bytes))
          .then(() => (this.durable && DSYNC === undefined ? syncFd(pack.fd, true) : undefined))
          .catch((err: Error) => {
            // What follows a failed write could not be listed by the sweep: the next append
            // starts a pack, and later flushes of this one write nothing.
            pack.failed ??= err;
            if (this.current === pack) {
              this.retire(pack);
              this.current = null;
            }
            throw err;
          })
          .finally(() => {
            pack.inFlight--;
            if (pack.inFlight === 0) pack.idle?.();
          });
        const done = Promise.all([written, pack.settled]).then(() => {});
        pack.settled = done;
        done.then(resolve, reject);
      });
    });
    return pack.queued;
  }

  /** A body's bytes in one read. */
  async read(ref: { pack: string; offset: number; length: number }): Promise<Buffer> {
    const { buf, bytesRead } = await this.readers.read(ref.pack, ref.offset, ref.length);
    if (bytesRead !== ref.length) throw new Error(`packed blob cut short: ${ref.pack}@${ref.offset}`);
    return buf;
  }

  /** Counts an entry out; the pack file goes with its last entry. */
  delete(ref: { pack: string; offset: number }): void {
    let dead = this.dead.get(ref.pack);
    if (!dead) {
      dead = new Set();
      this.dead.set(ref.pack, dead);
    }
    dead.add(ref.offset);
    const total = this.entries.get(ref.pack);
    if (total === undefined || dead.size < total || this.current?.id === ref.pack) return;
    this.drop(ref.pack);
  }

  private drop(pack: string): void {
    this.readers.release(pack);
    try {
      unlinkSync(this.pathOf(pack));
    } catch {
      // Already gone (a reset).
    }
    this.dead.delete(pack);
    this.entries.delete(pack);
    this.opened.delete(pack);
  }

  /**
   * When a pack was opened: this process's record for its own packs (on `now()`), else the time in
   * its id (a UUIDv7, wall clock) for packs of an earlier run or of another process.
   */
  openedAt(pack: string): { at: number; own: boolean } {
    const own = this.opened.get(pack);
    if (own !== undefined) return { at: own, own: true };
    return { at: Number.parseInt(pack.slice(0, 8) + pack.slice(9, 13), 16), own: false };
  }

  /** The pack appends go to now, if any. */
  get currentId(): string | null {
    return this.current?.id ?? null;
  }

  /** Closes the pack being appended to once it is past its append window (it takes no more appends). */
  closeExpired(): void {
    const cur = this.current;
    if (cur && this.now() - cur.openedAt >= PACK_APPEND_MS) {
      this.retire(cur);
      this.current = null;
    }
  }

  /** Removes a pack no row names any more (compaction, after its grace). */
  remove(pack: string): void {
    if (pack !== this.current?.id) this.drop(pack);
  }

  /** Every entry of every pack last appended to before `beforeMs` (for the orphan sweep). */
  async *listOlderThan(beforeMs: number): AsyncIterable<string> {
    for (const name of await readdir(this.dir).catch(() => [] as string[])) {
      if (name === this.current?.id) continue;
      const st = await stat(this.pathOf(name)).catch(() => null);
      if (!st?.isFile() || st.mtimeMs >= beforeMs) continue;
      const refs = scanPack(this.pathOf(name), name);
      this.entries.set(name, refs.length);
      yield* refs;
    }
  }

  /** Forgets every pack (the files are removed by the caller). */
  reset(): void {
    if (this.current) this.retire(this.current);
    this.current = null;
    this.entries.clear();
    this.dead.clear();
    this.opened.clear();
    this.readers.releaseAll();
  }
}

/** The references of a pack's whole entries, in order; a torn entry at the end (a crash) ends it. */
function scanPack(path: string, pack: string): string[] {
  const refs: string[] = [];
  let size: number;
  let fd: number;
  try {
    size = statSync(path).size;
    fd = openSync(path, 'r');
  } catch {
    return refs;
  }
  try {
    const header = Buffer.allocUnsafe(HEADER);
    let at = 0;
    while (at + HEADER <= size) {
      if (readSync(fd, header, 0, HEADER, at) !== HEADER || header.readUInt32BE(0) !== MAGIC) break;
      const length = header.readUInt32BE(4);
      if (at + HEADER + length > size) break;
      refs.push(`${pack}.${at + HEADER}.${length}`);
      at += HEADER + length;
    }
  } finally {
    closeSync(fd);
  }
  return refs;
}

/** fsyncs a directory, so that a file created in it survives a power loss. */
export function syncDir(path: string): Promise<void> {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    return Promise.reject(err);
  }
  return syncFd(fd, false).finally(() => closeSync(fd));
}

import { closeSync, createReadStream, fdatasync, openSync, writevSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { newId } from '../../../../kernel/ids.js';
import type { BlobStore } from './blob-store.js';
import { PACK_MAX_BLOB, PackFiles, parsePackRef, syncDir } from './pack-files.js';

/** A temp file untouched this long belongs to no running upload (wall clock: files age in real time). */
const TEMP_MAX_AGE_MS = 3600_000;

/** Bodies up to this size are gathered in memory and written in one go (the small-object path). */
const GATHER_BYTES = 1 << 20;

const datasyncFd = (fd: number) =>
  new Promise<void>((resolve, reject) => fdatasync(fd, (err) => (err ? reject(err) : resolve())));

/**
 * One fsync of a directory for the files created in it in one turn of the event loop: writers
 * that land in the same directory at the same moment share it. It starts on the next turn, so it
 * covers every entry created before it.
 */
class DirectorySyncs {
  private readonly queued = new Map<string, Promise<void>>();

  sync(dir: string): Promise<void> {
    let next = this.queued.get(dir);
    if (next === undefined) {
      next = new Promise<void>((resolve, reject) => {
        setImmediate(() => {
          this.queued.delete(dir);
          syncDir(dir).then(resolve, reject);
        });
      });
      this.queued.set(dir, next);
    }
    return next;
  }
}

/**
 * Blobs under `<data dir>/objects`. A blob is never read before a committed row names it, and
 * one no row names is swept as an orphan, so a crash can leave garbage but never a torn object.
 * Every blob is durable before `put` resolves (unless `fsync` is off), so before its row commits.
 * - Bodies up to 128 KiB are appended to a pack file (see `PackFiles`): writers at the same
 *   moment share one `fdatasync`.
 * - Bodies up to 1 MiB are gathered in memory, then written straight to their final path: one
 *   create and write, then `fdatasync` of the file and an `fsync` of its directory (shared by the
 *   writers that created files there at the same time).
 * - Larger bodies stream into a temp file, are fdatasynced, checked and renamed into place, and
 *   the directory is fsynced the same way.
 */
export class FsBlobStore implements BlobStore {
  readonly name = 'fs' as const;
  private readonly tmp: string;
  private ready: Promise<void> | null = null;
  private readonly dirSyncs = new DirectorySyncs();
  /** Small bodies' pack files (compaction reaches them here). */
  readonly packs: PackFiles;

  constructor(
    private readonly root: string,
    private readonly fsync = true,
    /** The clock packs age on (see `PACK_APPEND_MS`). */
    now: () => number = Date.now,
  ) {
    this.tmp = join(root, 'tmp');
    this.packs = new PackFiles(root, fsync, now);
  }

  private pathOf(ref: string): string {
    if (!/^[0-9a-f-]{36}$/.test(ref)) throw new Error(`not a blob reference: ${ref}`);
    return join(this.root, ref.slice(-2), ref);
  }

  private ensureDirs(): Promise<void> {
    this.ready ??= (async () => {
      await mkdir(this.tmp, { recursive: true });
      await mkdir(this.packs.dir, { recursive: true });
      // What a crash left half-written: no upload keeps a temp file an hour without writing to it.
      await this.sweepTemp(TEMP_MAX_AGE_MS);
      for (let i = 0; i < 256; i++)
        await mkdir(join(this.root, i.toString(16).padStart(2, '0')), { recursive: true });
    })();
    return this.ready;
  }

  async put(source: AsyncIterable<Buffer>, _size: number, check: () => void): Promise<string> {
    await this.ensureDirs();
    const iterator = source[Symbol.asyncIterator]();
    // Network chunks are gathered into ~1 MiB writes; a body that ends first is a small one.
    const pending: Buffer[] = [];
    let pendingBytes = 0;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return this.land(pending, pendingBytes, check);
      pending.push(next.value);
      pendingBytes += next.value.length;
      if (pendingBytes >= GATHER_BYTES) break;
    }
    return this.putLarge(newId(), pending, iterator, check);
  }

  async putBuffered(chunks: Buffer[], check: () => void): Promise<string> {
    await this.ensureDirs();
    let bytes = 0;
    for (const c of chunks) bytes += c.length;
    return this.land(chunks, bytes, check);
  }

  /** A whole body in memory: appended to a pack, or a file of its own past the pack limit. */
  private land(chunks: Buffer[], bytes: number, check: () => void): Promise<string> {
    if (bytes > PACK_MAX_BLOB) return this.putSmall(newId(), chunks, check);
    // Checked before it lands: a body that fails its check never enters a pack.
    check();
    return this.packs.append(chunks, bytes);
  }

  /**
   * A body already in memory: created at its final path with synchronous calls (a few
   * microseconds each for a small file, cheaper than three trips through the thread pool), then
   * fdatasynced off the event loop.
   */
  private async putSmall(ref: string, chunks: Buffer[], check: () => void): Promise<string> {
    const path = this.pathOf(ref);
    const fd = openSync(path, 'wx');
    let closed = false;
    try {
      if (chunks.length > 0) writevSync(fd, chunks);
      check();
      if (this.fsync) await datasyncFd(fd);
      closeSync(fd);
      closed = true;
      if (this.fsync) await this.dirSyncs.sync(dirname(path));
      return ref;
    } catch (err) {
      if (!closed) closeSync(fd);
      await unlink(path).catch(() => {});
      throw err;
    }
  }

  private async putLarge(
    ref: string,
    first: Buffer[],
    rest: AsyncIterator<Buffer>,
    check: () => void,
  ): Promise<string> {
    const temp = join(this.tmp, ref);
    const file = await open(temp, 'w');
    try {
      await file.writev(first);
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      for (;;) {
        const next = await rest.next();
        if (next.done) break;
        pending.push(next.value);
        pendingBytes += next.value.length;
        if (pendingBytes >= GATHER_BYTES) {
          await file.writev(pending);
          pending = [];
          pendingBytes = 0;
        }
      }
      if (pendingBytes > 0) await file.writev(pending);
      if (this.fsync) await file.datasync();
      await file.close();
      check();
      const path = this.pathOf(ref);
      await rename(temp, path);
      if (this.fsync) await this.dirSyncs.sync(dirname(path));
      return ref;
    } catch (err) {
      await file.close().catch(() => {});
      await unlink(temp).catch(() => {});
      throw err;
    }
  }

  /** Where a blob's bytes are on disk: a file of its own, or a stretch of a pack. */
  locate(ref: string): { path: string; offset: number; length: number | null } {
    const packed = parsePackRef(ref);
    return packed
      ? { path: this.packs.pathOf(packed.pack), offset: packed.offset, length: packed.length }
      : { path: this.pathOf(ref), offset: 0, length: null };
  }

  async get(ref: string, start: number, end: number): Promise<Readable> {
    const packed = parsePackRef(ref);
    const stream = packed
      ? createReadStream(this.packs.pathOf(packed.pack), {
          start: packed.offset + start,
          end: packed.offset + Math.min(end, packed.length - 1),
        })
      : createReadStream(this.pathOf(ref), { start, end, highWaterMark: 1 << 20 });
    // Surface a missing file as an error now, before any status line is written.
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', reject);
    });
    return stream;
  }

  readAll(ref: string): Promise<Buffer> {
    const packed = parsePackRef(ref);
    return packed ? this.packs.read(packed) : readFile(this.pathOf(ref));
  }

  async delete(ref: string): Promise<void> {
    const packed = parsePackRef(ref);
    if (packed) this.packs.delete(packed);
    else await unlink(this.pathOf(ref)).catch(() => {});
  }

  /** Removes temp files not written to for `maxAgeMs`; returns how many. */
  async *listOlderThan(beforeMs: number): AsyncIterable<string> {
    for (let i = 0; i < 256; i++) {
      const dir = join(this.root, i.toString(16).padStart(2, '0'));
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        const st = await stat(join(dir, name)).catch(() => null);
        if (st?.isFile() && st.mtimeMs < beforeMs) yield name;
      }
    }
    yield* this.packs.listOlderThan(beforeMs);
  }

  async sweepTemp(maxAgeMs: number): Promise<number> {
    let removed = 0;
    const before = Date.now() - maxAgeMs;
    for (const name of await readdir(this.tmp).catch(() => [] as string[])) {
      const path = join(this.tmp, name);
      const st = await stat(path).catch(() => null);
      if (st && st.mtimeMs < before) {
        await unlink(path).catch(() => {});
        removed++;
      }
    }
    return removed;
  }

  async clear(): Promise<void> {
    this.packs.reset();
    await rm(this.root, { recursive: true, force: true });
    this.ready = null;
  }
}

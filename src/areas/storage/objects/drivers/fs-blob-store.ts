import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { newId } from '../../../../kernel/ids.js';
import type { BlobStore } from './blob-store.js';

/** A temp file untouched this long belongs to no running upload (wall clock: files age in real time). */
const TEMP_MAX_AGE_MS = 3600_000;

/**
 * Blobs as files under `<data dir>/objects`: written to a temp file, fsynced, checked, then
 * renamed into place, so a crash leaves either nothing or the whole blob.
 */
export class FsBlobStore implements BlobStore {
  readonly name = 'fs' as const;
  private readonly tmp: string;
  private ready: Promise<void> | null = null;

  constructor(
    private readonly root: string,
    private readonly fsync = true,
  ) {
    this.tmp = join(root, 'tmp');
  }

  private pathOf(ref: string): string {
    if (!/^[0-9a-f-]{36}$/.test(ref)) throw new Error(`not a blob reference: ${ref}`);
    return join(this.root, ref.slice(-2), ref);
  }

  private ensureDirs(): Promise<void> {
    this.ready ??= (async () => {
      await mkdir(this.tmp, { recursive: true });
      // What a crash left half-written: no upload keeps a temp file an hour without writing to it.
      await this.sweepTemp(TEMP_MAX_AGE_MS);
      for (let i = 0; i < 256; i++)
        await mkdir(join(this.root, i.toString(16).padStart(2, '0')), { recursive: true });
    })();
    return this.ready;
  }

  async put(source: AsyncIterable<Buffer>, _size: number, check: () => void): Promise<string> {
    await this.ensureDirs();
    const ref = newId();
    const temp = join(this.tmp, ref);
    const file = await open(temp, 'w');
    try {
      // Small network chunks are gathered into ~1 MiB writes.
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      for await (const chunk of source) {
        pending.push(chunk);
        pendingBytes += chunk.length;
        if (pendingBytes >= 1 << 20) {
          await file.writev(pending);
          pending = [];
          pendingBytes = 0;
        }
      }
      if (pendingBytes > 0) await file.writev(pending);
      if (this.fsync) await file.datasync();
      await file.close();
      check();
      await rename(temp, this.pathOf(ref));
      return ref;
    } catch (err) {
      await file.close().catch(() => {});
      await unlink(temp).catch(() => {});
      throw err;
    }
  }

  async get(ref: string, start: number, end: number): Promise<Readable> {
    const stream = createReadStream(this.pathOf(ref), { start, end, highWaterMark: 1 << 20 });
    // Surface a missing file as an error now, before any status line is written.
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', reject);
    });
    return stream;
  }

  readAll(ref: string): Promise<Buffer> {
    return readFile(this.pathOf(ref));
  }

  async delete(ref: string): Promise<void> {
    await unlink(this.pathOf(ref)).catch(() => {});
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
    await rm(this.root, { recursive: true, force: true });
    this.ready = null;
  }
}

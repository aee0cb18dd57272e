import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Where snapshot files go. The issue wants them in Fjord's object storage; that area's data
 * plane is being built alongside, so this interface is the seam: an object-storage
 * implementation (one bucket per deployment, key = `key`) drops in without touching the
 * service. Keys are `<customer id>/<database id>/<snapshot id>.<ext>`.
 */
export interface SnapshotStore {
  readonly kind: string;
  /** Writes the stream under `key`, atomically (a failed write leaves nothing). Returns its size. */
  put(key: string, body: Readable): Promise<number>;
  get(key: string): Promise<Readable>;
  delete(key: string): Promise<void>;
}

/** Files under `<data dir>/databases/snapshots/`, written to a temp name then renamed. */
export class FsSnapshotStore implements SnapshotStore {
  readonly kind = 'fs';
  constructor(private readonly root: string) {}

  private path(key: string): string {
    const p = resolve(this.root, key);
    if (!p.startsWith(resolve(this.root) + sep)) throw new Error(`bad snapshot key ${key}`);
    return p;
  }

  async put(key: string, body: Readable): Promise<number> {
    const target = this.path(key);
    await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    const temp = `${target}.partial`;
    try {
      await pipeline(body, createWriteStream(temp, { mode: 0o600 }));
      await rename(temp, target);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    return (await stat(target)).size;
  }

  async get(key: string): Promise<Readable> {
    const p = this.path(key);
    await stat(p); // fail here, not mid-stream, when it is gone
    return createReadStream(p);
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }
}

export const fsSnapshotStore = (dataDir: string) =>
  new FsSnapshotStore(join(dataDir, 'databases', 'snapshots'));

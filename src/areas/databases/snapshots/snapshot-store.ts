import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import type { InternalObjects } from '../../storage/service.js';

export type SnapshotStoreKind = 'objects' | 'fs';

/**
 * Where snapshot dumps go: Fjord's object storage (`objects`, every new snapshot), or — only
 * for snapshots taken before snapshots moved there — files in the data dir (`fs`). Keys are
 * `<customer id>/<database id>/<snapshot id>.<ext>`, chosen before the write.
 */
export interface SnapshotStore {
  readonly kind: SnapshotStoreKind;
  /** Writes the stream under `key`, atomically (a failed write leaves nothing). Returns its size. */
  put(key: string, body: Readable): Promise<number>;
  get(key: string): Promise<Readable>;
  delete(key: string): Promise<void>;
}

/**
 * Dumps as objects in the storage area's internal `database-snapshots` bucket: on the same
 * blob store as customers' objects (files, or the upstream S3 store when scaled out), committed
 * only once every byte is durable.
 */
export class ObjectSnapshotStore implements SnapshotStore {
  readonly kind = 'objects' as const;
  constructor(private readonly bucket: InternalObjects) {}

  async put(key: string, body: Readable): Promise<number> {
    return (await this.bucket.put(key, body, 'application/octet-stream')).size;
  }

  get(key: string): Promise<Readable> {
    return this.bucket.get(key);
  }

  delete(key: string): Promise<void> {
    return this.bucket.delete(key);
  }
}

/**
 * Files under `<data dir>/databases/snapshots/`, written to a temp name then renamed: where
 * snapshots went before object storage held them. Kept so those can still be restored and
 * deleted (rows say `store = 'fs'`).
 */
export class FsSnapshotStore implements SnapshotStore {
  readonly kind = 'fs' as const;
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

import { closeSync, existsSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { FsBlobStore } from '../../src/areas/storage/objects/drivers/fs-blob-store.js';

/**
 * The bytes of one blob of the `fs` blob store in a data dir, wherever Fjord put them: a file of
 * its own, or a stretch of a pack file (small objects). For tests that check what is on disk or
 * damage it on purpose. `path` is the file holding them (a pack goes with its last object).
 */
export function blobOnDisk(dataDir: string, ref: string) {
  const { path, offset, length } = new FsBlobStore(join(dataDir, 'objects')).locate(ref);
  return {
    path,
    read(): Buffer {
      if (!existsSync(path)) return Buffer.alloc(0);
      if (length === null) return readFileSync(path);
      const out = Buffer.alloc(length);
      const fd = openSync(path, 'r');
      try {
        readSync(fd, out, 0, length, offset);
      } finally {
        closeSync(fd);
      }
      return out;
    },
    /** Replaces the bytes in place (the same length). */
    write(bytes: Buffer): void {
      const fd = openSync(path, 'r+');
      try {
        writeSync(fd, bytes, 0, bytes.length, offset);
      } finally {
        closeSync(fd);
      }
    },
  };
}

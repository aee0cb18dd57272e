import { close, open, read } from 'node:fs';

/** Packs kept open for reading at once; the least recently read goes first. */
const MAX_READERS = 32;
/** A reader nothing read from for one to two of these is closed. */
const IDLE_MS = 5000;

type Reader = {
  fd: Promise<number>;
  /** Reads in flight: the descriptor is closed only once none is. */
  users: number;
  /** Let go (evicted, or its pack removed): closed when its last read ends. */
  released: boolean;
  /** Read from since the last idle sweep. */
  used: boolean;
};

/**
 * Read descriptors of the packs small GETs read from, kept open between reads: opening, reading
 * and closing a file costs three trips to the thread pool and a FileHandle, where a read on an
 * open descriptor costs one. A pack this process removes is let go at once; one another process
 * removes (compaction) keeps its inode until the reader has been idle for a few seconds, which no
 * read notices: no row names that pack any more.
 */
export class PackReaders {
  /** By pack id, in order of last use (a Map iterates in insertion order). */
  private readonly readers = new Map<string, Reader>();
  /** Closes idle readers while there are any (unref'd: it keeps no process alive). */
  private sweep: NodeJS.Timeout | null = null;

  constructor(private readonly pathOf: (pack: string) => string) {}

  /** `length` bytes at `offset` of `pack`; fewer only if the file is shorter. */
  async read(pack: string, offset: number, length: number): Promise<{ buf: Buffer; bytesRead: number }> {
    const reader = this.acquire(pack);
    try {
      const fd = await reader.fd;
      const buf = Buffer.allocUnsafe(length);
      const bytesRead = await new Promise<number>((ok, fail) =>
        read(fd, buf, 0, length, offset, (err, n) => (err ? fail(err) : ok(n))),
      );
      return { buf, bytesRead };
    } finally {
      reader.users--;
      if (reader.released && reader.users === 0) closeReader(reader);
    }
  }

  /** Lets a pack's reader go (the pack is being removed). */
  release(pack: string): void {
    const reader = this.readers.get(pack);
    if (!reader) return;
    this.readers.delete(pack);
    reader.released = true;
    if (reader.users === 0) closeReader(reader);
    if (this.readers.size === 0 && this.sweep) {
      clearInterval(this.sweep);
      this.sweep = null;
    }
  }

  /** Closes the readers nothing read from since the last call. */
  private closeIdle(): void {
    for (const [pack, reader] of this.readers) {
      if (!reader.used && reader.users === 0) this.release(pack);
      else reader.used = false;
    }
  }

  /** Lets every reader go. */
  releaseAll(): void {
    for (const pack of [...this.readers.keys()]) this.release(pack);
  }

  private acquire(pack: string): Reader {
    let reader = this.readers.get(pack);
    if (reader)
      this.readers.delete(pack); // re-inserted below: now the most recently used
    else {
      const fd = new Promise<number>((ok, fail) =>
        open(this.pathOf(pack), 'r', (err, n) => (err ? fail(err) : ok(n))),
      );
      reader = { fd, users: 0, released: false, used: false };
      // A pack that cannot be opened (gone) is not kept: the next read tries again.
      const failed = reader;
      fd.catch(() => {
        if (this.readers.get(pack) === failed) this.readers.delete(pack);
        failed.released = true;
      });
    }
    reader.users++;
    reader.used = true;
    this.readers.set(pack, reader);
    if (!this.sweep) this.sweep = setInterval(() => this.closeIdle(), IDLE_MS).unref();
    if (this.readers.size > MAX_READERS) {
      const oldest = this.readers.keys().next().value as string;
      this.release(oldest);
    }
    return reader;
  }
}

function closeReader(reader: Reader): void {
  reader.fd.then(
    (fd) => close(fd, () => {}),
    () => {},
  );
}

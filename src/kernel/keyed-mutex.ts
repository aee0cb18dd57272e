/**
 * Runs the callers that name the same key one after another, in arrival order (others run
 * freely). For work on systems outside the store — a database server, a config file — whose
 * steps must not interleave within this process; across processes, use the store's locks.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const mine = previous.catch(() => {}).then(work);
    const tail = mine.catch(() => {});
    this.tails.set(key, tail);
    try {
      return await mine;
    } finally {
      // The last in line cleans up, so the map holds only keys with work waiting.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

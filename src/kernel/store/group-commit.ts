/**
 * Group commit: writes that arrive while a transaction is being written wait for it and then
 * share the next one, so a busy process commits once for many writes instead of once each.
 * Nothing resolves before its commit; when a shared write fails, each item in it is written
 * again on its own, so one bad item cannot fail the others.
 */
export class GroupCommit<T> {
  private queue: { items: T[]; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private draining = false;

  constructor(
    /** Writes the items in one transaction. */
    private readonly write: (items: T[]) => Promise<void>,
    /** Items per shared transaction (a single larger submission still goes whole). */
    private readonly maxItems: number,
  ) {}

  /** Resolves once `items` are committed. */
  submit(items: T[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ items, resolve, reject });
      // After the requests the event loop already read in this turn have reached here too (with
      // SQLite a transaction never yields to the loop, so without this each commit holds one write).
      if (!this.draining) {
        this.draining = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0) {
        let count = 0;
        let take = 0;
        while (take < this.queue.length && (take === 0 || count < this.maxItems)) {
          count += this.queue[take]!.items.length;
          take++;
        }
        // The whole queue when it fits (the common case), taken as it is: nothing is copied.
        let batch = this.queue;
        if (take === this.queue.length) this.queue = [];
        else batch = this.queue.splice(0, take);
        const items: T[] = new Array(count);
        let at = 0;
        for (const b of batch) for (const item of b.items) items[at++] = item;
        try {
          await this.write(items);
          for (const b of batch) b.resolve();
        } catch (err) {
          if (batch.length === 1) batch[0]!.reject(err);
          else for (const b of batch) await this.write(b.items).then(b.resolve, b.reject);
        }
      }
    } finally {
      this.draining = false;
    }
  }
}

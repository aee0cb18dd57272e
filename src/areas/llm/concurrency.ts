/**
 * Requests in flight per API key, held from admission until the answer (or the stream) ends.
 * Per process: a scaled-out gateway behind a load balancer admits up to this many per process.
 */
export class InFlight {
  private readonly counts = new Map<string, number>();

  /** Takes a place for `key`, or returns null when it already has `max` in flight. */
  tryAcquire(key: string, max: number): (() => void) | null {
    const n = this.counts.get(key) ?? 0;
    if (n >= max) return null;
    this.counts.set(key, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.counts.get(key) ?? 1) - 1;
      if (left <= 0) this.counts.delete(key);
      else this.counts.set(key, left);
    };
  }

  of(key: string): number {
    return this.counts.get(key) ?? 0;
  }
}

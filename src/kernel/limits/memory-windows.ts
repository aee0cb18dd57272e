interface Window {
  count: number;
  endsAt: number;
}

/**
 * Fixed-window counters in process memory: what one process needs, without the promise and
 * result object a general-purpose limiter makes on every call (the API's hottest path).
 * Semantics match the Redis path: `points` per window, plus `burst` extra before refusing.
 * Windows are held by bucket, then by subject: both strings are long-lived (a route's bucket, a
 * credential's id), so a lookup hashes nothing new, where a joined `bucket:subject` key was a
 * fresh string to hash on every request.
 */
export class MemoryWindows {
  private readonly byBucket = new Map<string, Map<string, Window>>();
  private nextSweep = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Counts one request; returns the count in the current window and when the window ends (ms). */
  hit(bucket: string, subject: string, durationSeconds: number): Window {
    const now = this.now();
    if (now >= this.nextSweep) this.sweep(now);
    let windows = this.byBucket.get(bucket);
    if (!windows) {
      windows = new Map();
      this.byBucket.set(bucket, windows);
    }
    let w = windows.get(subject);
    if (!w || w.endsAt <= now) {
      w = { count: 0, endsAt: now + durationSeconds * 1000 };
      windows.set(subject, w);
    }
    w.count++;
    return w;
  }

  /** How many windows are held (tests). */
  get size(): number {
    let n = 0;
    for (const windows of this.byBucket.values()) n += windows.size;
    return n;
  }

  /** Drops ended windows once a minute, so idle credentials do not hold memory. */
  private sweep(now: number): void {
    for (const [bucket, windows] of this.byBucket) {
      for (const [subject, w] of windows) if (w.endsAt <= now) windows.delete(subject);
      if (windows.size === 0) this.byBucket.delete(bucket);
    }
    this.nextSweep = now + 60_000;
  }
}

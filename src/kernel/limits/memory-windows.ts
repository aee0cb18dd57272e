/**
 * Fixed-window counters in process memory: what one process needs, without the promise and
 * result object a general-purpose limiter makes on every call (the API's hottest path).
 * Semantics match the Redis path: `points` per window, plus `burst` extra before refusing.
 */
export class MemoryWindows {
  private readonly windows = new Map<string, { count: number; endsAt: number }>();
  private nextSweep = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Counts one request; returns the count in the current window and when the window ends (ms). */
  hit(key: string, durationSeconds: number): { count: number; endsAt: number } {
    const now = this.now();
    if (now >= this.nextSweep) this.sweep(now);
    let w = this.windows.get(key);
    if (!w || w.endsAt <= now) {
      w = { count: 0, endsAt: now + durationSeconds * 1000 };
      this.windows.set(key, w);
    }
    w.count++;
    return w;
  }

  /** Drops ended windows once a minute, so idle credentials do not hold memory. */
  private sweep(now: number): void {
    for (const [key, w] of this.windows) if (w.endsAt <= now) this.windows.delete(key);
    this.nextSweep = now + 60_000;
  }
}

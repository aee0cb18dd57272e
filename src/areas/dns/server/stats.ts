/**
 * Query counts are summed in memory per zone and type and handed to the control plane's sink
 * every few seconds, so the answer path never waits on the store. A failed flush puts its
 * counts back for the next one.
 */
import type { Logger } from 'pino';
import type { QueryStatsSink } from '../server-contract.js';

interface Tally {
  zoneId: string;
  qtype: string;
  count: number;
  totalMicros: number;
}

export class QueryStatsBatcher {
  private tallies = new Map<string, Tally>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly sink: QueryStatsSink,
    private readonly now: () => number,
    private readonly log: Logger,
  ) {}

  add(zoneId: string, qtype: string, micros: number): void {
    const key = `${zoneId}|${qtype}`;
    const t = this.tallies.get(key);
    if (t) {
      t.count++;
      t.totalMicros += micros;
    } else this.tallies.set(key, { zoneId, qtype, count: 1, totalMicros: micros });
  }

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.flushOnce());
    return this.flushing;
  }

  private async flushOnce(): Promise<void> {
    if (this.tallies.size === 0) return;
    const batch = [...this.tallies.values()];
    this.tallies = new Map();
    const at = this.now();
    try {
      await this.sink.recordQueries(batch.map((t) => ({ ...t, totalMicros: Math.round(t.totalMicros), at })));
    } catch (err) {
      this.log.warn({ err }, 'dns: could not record query statistics; keeping them for the next flush');
      for (const t of batch) {
        const key = `${t.zoneId}|${t.qtype}`;
        const cur = this.tallies.get(key);
        if (cur) {
          cur.count += t.count;
          cur.totalMicros += t.totalMicros;
        } else this.tallies.set(key, t);
      }
    }
  }
}

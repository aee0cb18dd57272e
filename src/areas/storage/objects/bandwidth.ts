import { type Kysely, sql } from 'kysely';
import type { Logger } from 'pino';
import type { Store } from '../../../kernel/store/store.js';

interface BandwidthTables {
  storage_bandwidth: { customer_id: string; month: string; bytes: number | string };
}

/** UTC month of a time, `YYYY-MM`. */
const monthOf = (ms: number) => new Date(ms).toISOString().slice(0, 7);

/**
 * The plan's bandwidth per month: bytes the S3 data plane sends from a customer's buckets
 * (GET bodies, whoever asks — a public bucket's downloads count for its owner). Counted in
 * memory and added to the store every few seconds, off the answer path; after each addition the
 * customers it touched (and those already over) are compared with their plan, and a customer
 * over it gets 403 `BandwidthLimitExceeded` on downloads until the month turns or the plan
 * grows. Each `s3` process adds its own counts to the same rows, so the total is the store's.
 */
export class BandwidthMeter {
  private pending = new Map<string, number>();
  private readonly over = new Map<string, { month: string; limit: number }>();
  private readonly db: Kysely<BandwidthTables>;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    store: Store,
    private readonly now: () => number,
    /** The customer's bytes per month; null: unlimited. */
    private readonly limitOf: (customerId: string) => Promise<number | null>,
    private readonly log: Logger,
  ) {
    this.db = store.typed<BandwidthTables>();
  }

  add(customerId: string, bytes: number): void {
    if (bytes > 0) this.pending.set(customerId, (this.pending.get(customerId) ?? 0) + bytes);
  }

  /** The limit a customer is over this month, or null when it may download. */
  overLimit(customerId: string): number | null {
    const o = this.over.get(customerId);
    return o && o.month === monthOf(this.now()) ? o.limit : null;
  }

  start(intervalMs = 5000): void {
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

  async used(customerId: string): Promise<number> {
    const row = await this.db
      .selectFrom('storage_bandwidth')
      .select('bytes')
      .where('customer_id', '=', customerId)
      .where('month', '=', monthOf(this.now()))
      .executeTakeFirst();
    return Number(row?.bytes ?? 0);
  }

  private async flushOnce(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    const month = monthOf(this.now());
    try {
      for (const [customerId, bytes] of batch) {
        await this.db
          .insertInto('storage_bandwidth')
          .values({ customer_id: customerId, month, bytes })
          .onConflict((oc) =>
            oc
              .columns(['customer_id', 'month'])
              .doUpdateSet({ bytes: sql`storage_bandwidth.bytes + ${bytes}` }),
          )
          .execute();
      }
    } catch (err) {
      this.log.warn({ err }, 'storage: could not record bandwidth; keeping it for the next flush');
      for (const [c, b] of batch) this.pending.set(c, (this.pending.get(c) ?? 0) + b);
      return;
    }
    for (const customerId of new Set([...batch.keys(), ...this.over.keys()])) {
      const limit = await this.limitOf(customerId);
      const used = await this.used(customerId);
      if (limit !== null && used >= limit) {
        if (!this.over.has(customerId))
          this.log.info(
            { customerId, month, used, limit },
            'storage: monthly bandwidth reached; downloads refused',
          );
        this.over.set(customerId, { month, limit });
      } else this.over.delete(customerId);
    }
  }
}

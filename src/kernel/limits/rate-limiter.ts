import type { Redis } from 'ioredis';
import {
  BurstyRateLimiter,
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import { MemoryWindows } from './memory-windows.js';
import type { RateLimitRow } from './table.js';

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Unix seconds when the window resets. */
  reset: number;
}

export type RateLimitOutcome =
  | ({ allowed: true } & RateLimitState)
  | ({ allowed: false; retryAfter: number; window: number } & RateLimitState);

/**
 * Fixed-window counters per (bucket, credential), in memory or in Redis when several processes
 * share the limits. A request drawing from several buckets is refused by the first one that is
 * spent; the headers report the tightest one.
 */
export class RateLimiter {
  private readonly limiters = new Map<string, RateLimiterAbstract | BurstyRateLimiter>();
  private readonly memory = new MemoryWindows();

  /** A bucket's row (limit and window), for areas that publish it. */
  rowOf(bucket: string): RateLimitRow | undefined {
    return this.table[bucket];
  }
  constructor(
    private readonly table: Record<string, RateLimitRow>,
    private readonly redis: Redis | null,
  ) {}

  /**
   * `consume` without a promise when the counters are in this process's memory (no Redis): the
   * API's hot path takes this. Undefined when only the asynchronous `consume` can answer.
   */
  consumeNow(buckets: readonly string[], subject: string): RateLimitOutcome | undefined {
    if (this.redis) return undefined;
    let tightest: RateLimitOutcome | null = null;
    for (const bucket of buckets) {
      const outcome = this.consumeInMemory(bucket, this.table[bucket] ?? this.table['default']!, subject);
      if (!outcome.allowed) return outcome;
      if (!tightest || outcome.remaining < tightest.remaining) tightest = outcome;
    }
    return tightest ?? { allowed: true, limit: 0, remaining: 0, reset: 0 };
  }

  async consume(buckets: readonly string[], subject: string): Promise<RateLimitOutcome> {
    let tightest: RateLimitOutcome | null = null;
    for (const bucket of buckets) {
      const row = this.table[bucket] ?? this.table['default']!;
      const outcome = await this.consumeOne(bucket, row, subject);
      if (!outcome.allowed) return outcome;
      if (!tightest || outcome.remaining < tightest.remaining) tightest = outcome;
    }
    return tightest ?? { allowed: true, limit: 0, remaining: 0, reset: 0 };
  }

  private async consumeOne(bucket: string, row: RateLimitRow, subject: string): Promise<RateLimitOutcome> {
    if (!this.redis) return this.consumeInMemory(bucket, row, subject);
    const limiter = this.limiterFor(bucket, row);
    const nowS = Date.now() / 1000;
    try {
      const res = await limiter.consume(subject);
      return {
        allowed: true,
        limit: row.points,
        remaining: Math.max(0, row.points - res.consumedPoints),
        reset: Math.ceil(nowS + res.msBeforeNext / 1000),
      };
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      const retryAfter = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
      return {
        allowed: false,
        limit: row.points,
        remaining: 0,
        reset: Math.ceil(nowS + retryAfter),
        retryAfter,
        window: row.duration,
      };
    }
  }

  private consumeInMemory(bucket: string, row: RateLimitRow, subject: string): RateLimitOutcome {
    const { count, endsAt } = this.memory.hit(bucket, subject, row.duration);
    const reset = Math.ceil(endsAt / 1000);
    const limit = row.points;
    const remaining = Math.max(0, row.points - count);
    // One object per call (no spread of a shared state): this runs on every keyed request.
    if (count <= row.points + (row.burst ?? 0)) return { allowed: true, limit, remaining, reset };
    const retryAfter = Math.max(1, Math.ceil((endsAt - Date.now()) / 1000));
    return { allowed: false, limit, remaining, reset, retryAfter, window: row.duration };
  }

  private limiterFor(bucket: string, row: RateLimitRow) {
    let limiter = this.limiters.get(bucket);
    if (!limiter) {
      const memory = (points: number, prefix: string) =>
        new RateLimiterMemory({ points, duration: row.duration, keyPrefix: prefix });
      // While Redis is unreachable each process counts on its own instead of failing requests.
      const make = (points: number, prefix: string) =>
        this.redis
          ? new RateLimiterRedis({
              storeClient: this.redis,
              points,
              duration: row.duration,
              keyPrefix: prefix,
              insuranceLimiter: memory(points, prefix),
            })
          : memory(points, prefix);
      const main = make(row.points, `rl:${bucket}`);
      limiter = row.burst ? new BurstyRateLimiter(main, make(row.burst, `rl:${bucket}:burst`)) : main;
      this.limiters.set(bucket, limiter);
    }
    return limiter;
  }
}

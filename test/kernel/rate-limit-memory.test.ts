import { describe, expect, it } from 'vitest';
import { MemoryWindows } from '../../src/kernel/limits/memory-windows.js';
import { RateLimiter } from '../../src/kernel/limits/rate-limiter.js';
import { buildRateLimitTable } from '../../src/kernel/limits/table.js';

describe('in-memory rate limits', () => {
  it('allow points plus burst per window, reporting remaining against points', async () => {
    const limiter = new RateLimiter(
      buildRateLimitTable({ storage: { points: 3, burst: 2, duration: 60 } }),
      null,
    );
    const outcomes = [];
    for (let i = 0; i < 6; i++) outcomes.push(await limiter.consume(['storage'], 'k'));
    expect(outcomes.map((o) => o.allowed)).toEqual([true, true, true, true, true, false]);
    expect(outcomes.map((o) => o.remaining)).toEqual([2, 1, 0, 0, 0, 0]);
    const refused = outcomes[5]!;
    if (refused.allowed) throw new Error('expected a refusal');
    expect(refused.retryAfter).toBeGreaterThan(0);
    expect(refused.retryAfter).toBeLessThanOrEqual(60);
    expect(refused.window).toBe(60);
    expect(refused.limit).toBe(3);
  });

  it('report the tightest of several buckets and refuse on the first spent one', async () => {
    const limiter = new RateLimiter(
      buildRateLimitTable({
        database: { points: 5, duration: 60 },
        'database.create': { points: 1, duration: 3600 },
      }),
      null,
    );
    const first = await limiter.consume(['database', 'database.create'], 'k');
    expect(first).toMatchObject({ allowed: true, limit: 1, remaining: 0 });
    const second = await limiter.consume(['database', 'database.create'], 'k');
    expect(second.allowed).toBe(false);
    expect(second.limit).toBe(1);
    // The other bucket alone still has room.
    expect((await limiter.consume(['database'], 'k')).allowed).toBe(true);
  });

  it('start a new window when the old one ends, and forget ended windows', () => {
    let now = 1_000_000;
    const windows = new MemoryWindows(() => now);
    expect(windows.hit('account', 'a', 10)).toEqual({ count: 1, endsAt: 1_010_000 });
    expect(windows.hit('account', 'a', 10).count).toBe(2);
    now += 10_000;
    expect(windows.hit('account', 'a', 10)).toEqual({ count: 1, endsAt: 1_020_000 });
    windows.hit('account', 'b', 1);
    now += 120_000;
    windows.hit('regions', 'c', 1);
    expect(windows.size).toBe(1);
    // The same subject in two buckets has two windows.
    windows.hit('account', 'c', 1);
    expect(windows.hit('regions', 'c', 1).count).toBe(2);
    expect(windows.size).toBe(2);
  });
});

import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/kernel/limits/rate-limiter.js';
import { buildRateLimitTable } from '../../src/kernel/limits/table.js';
import { TestFjord } from '../helpers/fjord.js';
import { hasRedisServer, startThrowawayRedis } from '../helpers/redis.js';

describe.skipIf(!hasRedisServer)('rate limits shared through Redis', () => {
  let redis: Awaited<ReturnType<typeof startThrowawayRedis>>;
  const clients: Redis[] = [];
  beforeAll(async () => {
    redis = await startThrowawayRedis();
  });
  afterAll(async () => {
    for (const c of clients) c.disconnect();
    await redis?.stop();
  });

  it('counts one credential’s requests across processes', async () => {
    const table = buildRateLimitTable({ regions: { points: 5, duration: 60 } });
    const make = () => {
      const client = new Redis(redis.url);
      clients.push(client);
      return new RateLimiter(table, client);
    };
    const first = make();
    const second = make();
    const outcomes = [];
    for (let i = 0; i < 6; i++) outcomes.push(await (i % 2 ? first : second).consume(['regions'], 'key-1'));
    expect(outcomes.map((o) => o.allowed)).toEqual([true, true, true, true, true, false]);
    expect(outcomes.map((o) => o.remaining)).toEqual([4, 3, 2, 1, 0, 0]);
    const refused = outcomes[5]!;
    expect(refused.allowed).toBe(false);
    if (!refused.allowed) expect(refused.retryAfter).toBeGreaterThan(0);
    // Another credential has its own budget.
    expect((await first.consume(['regions'], 'key-2')).allowed).toBe(true);
  });

  it('is what Fjord uses when FJORD_REDIS_URL is set', async () => {
    const t = await TestFjord.create({
      FJORD_REDIS_URL: redis.url,
      FJORD_RATE_LIMITS: JSON.stringify({ regions: { points: 2, duration: 60 } }),
    });
    try {
      const c = await t.customer();
      const statuses = [];
      for (let i = 0; i < 3; i++)
        statuses.push((await t.request('GET', '/v1/regions', { key: c.pat })).status);
      expect(statuses).toEqual([200, 200, 429]);
      const probe = new Redis(redis.url);
      clients.push(probe);
      expect((await probe.keys('rl:regions*')).length).toBeGreaterThan(0);
    } finally {
      await t.close();
    }
  });
});

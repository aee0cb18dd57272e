import { afterAll, beforeAll, describe, it } from 'vitest';
import { TestFjord } from '../helpers/fjord.js';
import { expectLimitHolds } from '../helpers/race.js';

/**
 * DNS limits under requests that arrive together: zones per customer and records per zone.
 * On PostgreSQL requests really interleave inside the check-then-write (before the unit of work,
 * 10 concurrent creates on the free plan made 7 or 8 zones against a limit of 3).
 */
let t: TestFjord;
beforeAll(async () => {
  t = await TestFjord.create({
    FJORD_LIMITS: JSON.stringify({ 'dns.records_per_zone': 10 }),
    // Zone creation is also rate-limited at 10 an hour; the race is about the plan's quota.
    FJORD_RATE_LIMITS: JSON.stringify({ 'dns.zone.create': { points: 1000, duration: 3600 } }),
  });
});
afterAll(() => t.close());

describe('DNS limits under concurrency', () => {
  it('50 zone creates at once on the free plan make exactly 3 zones', async () => {
    const c = await t.customer();
    await expectLimitHolds({
      room: 3,
      send: (i) => t.request('POST', '/v1/dns/zones', { key: c.pat, body: { domain: `race${i}.example` } }),
      refusal: { status: 403, code: 'quota_exceeded' },
    });
  });

  it('50 record creates at once fill a zone to exactly its limit', async () => {
    const c = await t.customer();
    await t.request('POST', '/v1/dns/zones', { key: c.pat, body: { domain: 'full.example' } });
    await expectLimitHolds({
      room: 10,
      send: (i) =>
        t.request('POST', '/v1/dns/zones/full.example/records', {
          key: c.pat,
          body: { record_type: 'A', host: `h${i}`, record: '192.0.2.1' },
        }),
      refusal: { status: 403, code: 'quota_exceeded' },
    });
  });
});

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdjustableClock } from '../../src/kernel/clock.js';
import { ClockPersistence } from '../../src/kernel/clock-persistence.js';
import { TestFjord } from '../helpers/fjord.js';
import { TEST_STORE } from '../helpers/store.js';

async function eventually(check: () => boolean | Promise<boolean>, tries = 100): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('condition not reached');
}

describe('the emulator clock shared through the store', () => {
  let t: TestFjord;
  beforeAll(async () => {
    t = await TestFjord.create();
  });
  afterAll(() => t.close());

  it('never moves back when another process advanced further', async () => {
    // A second process on the same store, which has missed the first one's notices.
    const otherClock = new AdjustableClock();
    const other = new ClockPersistence(t.kernel.store, otherClock);
    await t.advance(3600);
    await other.advance(60);
    expect(otherClock.offsetMilliseconds).toBeGreaterThanOrEqual(3660_000);
    const fresh = new AdjustableClock();
    const reader = new ClockPersistence(t.kernel.store, fresh);
    await reader.load();
    expect(fresh.offsetMilliseconds).toBe(otherClock.offsetMilliseconds);
    reader.close();
    other.close();
  });

  it.skipIf(TEST_STORE !== 'postgres')('catches up after its notice connection drops', async () => {
    const before = t.kernel.clock.offsetMilliseconds;
    const killed = await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
              WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`.execute(
      t.kernel.store.db,
    );
    expect(killed.rows.length).toBeGreaterThan(0);
    // Another process advances while this one cannot hear it.
    const otherClock = new AdjustableClock();
    otherClock.adoptOffsetMs(before);
    const other = new ClockPersistence(t.kernel.store, otherClock);
    await other.advance(600);
    other.close();
    await eventually(() => t.kernel.clock.offsetMilliseconds >= before + 600_000);
  });
});

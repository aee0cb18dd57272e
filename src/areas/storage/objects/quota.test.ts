import { describe, expect, it } from 'vitest';
import { StorageQuota } from './quota.js';

/** A quota of `max` over a usage the test sets, counting the reads. */
function fixture(max: number | null) {
  const state = { bytes: 0, reads: 0, now: 0 };
  const quota = new StorageQuota(
    async () => max,
    async () => {
      state.reads++;
      return { bytes: state.bytes };
    },
    () => state.now,
  );
  const verdict = (adding: number) =>
    quota.check('c1', adding).then(
      () => 'ok',
      (err: { code?: string }) => err.code ?? String(err),
    );
  return { state, verdict };
}

describe('the storage quota', () => {
  it('lets one read stand for a second while far from the limit, counting what it let in', async () => {
    const { state, verdict } = fixture(1000);
    expect(await verdict(100)).toBe('ok');
    expect(await verdict(100)).toBe('ok');
    expect(await verdict(100)).toBe('ok');
    expect(state.reads).toBe(1);
    // 300 let in + 700 would pass 90 %: read again (the writes are committed by now).
    state.bytes = 300;
    expect(await verdict(700)).toBe('ok');
    expect(state.reads).toBe(2);
    state.now = 1_000;
    expect(await verdict(1)).toBe('ok');
    expect(state.reads).toBe(3);
  });

  it('reads on every check near the limit, and refuses past it', async () => {
    const { state, verdict } = fixture(1000);
    state.bytes = 950;
    expect(await verdict(50)).toBe('ok');
    expect(await verdict(1)).toBe('ok');
    expect(state.reads).toBe(2);
    state.bytes = 1000;
    expect(await verdict(1)).toBe('QuotaExceeded');
    // Room made by a delete is seen at once: a refusal never stands on an old read.
    state.bytes = 0;
    expect(await verdict(600)).toBe('ok');
    expect(state.reads).toBe(4);
  });

  it('shares one read among checks asking at the same moment', async () => {
    const { state, verdict } = fixture(10_000);
    expect(await Promise.all([verdict(10), verdict(10), verdict(10)])).toEqual(['ok', 'ok', 'ok']);
    expect(state.reads).toBe(1);
  });

  it('reads nothing without a limit, or for nothing added', async () => {
    const unlimited = fixture(null);
    expect(await unlimited.verdict(1e12)).toBe('ok');
    const limited = fixture(10);
    expect(await limited.verdict(0)).toBe('ok');
    expect(unlimited.state.reads + limited.state.reads).toBe(0);
  });
  it('never refuses on a read that was already under way before room was made', async () => {
    // A store round trip: the usage is what the store held when the read ran, answered later.
    let bytes = 1000;
    let reads = 0;
    let now = 0;
    const answers: (() => void)[] = [];
    const quota = new StorageQuota(
      async () => 1000,
      () => {
        reads++;
        const seen = bytes;
        return new Promise((resolve) => answers.push(() => resolve({ bytes: seen })));
      },
      () => now,
    );
    const first = quota.check('c1', 1).catch((err: { code?: string }) => err.code);
    await new Promise((r) => setImmediate(r));
    expect(reads).toBe(1);
    // The customer deletes everything; then, while that first read is still out, writes 600.
    bytes = 0;
    now = 5;
    const second = quota.check('c1', 600).then(
      () => 'ok',
      (err: { code?: string }) => err.code,
    );
    let settled = false;
    const both = Promise.all([first, second]).finally(() => {
      settled = true;
    });
    while (!settled) {
      await new Promise((r) => setImmediate(r));
      for (const answer of answers.splice(0)) answer();
    }
    expect(await both).toEqual(['QuotaExceeded', 'ok']);
  });
});

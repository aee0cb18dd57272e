import { expect, it } from 'vitest';
import { RecentRevocations } from './recent-revocations.js';

it('ends a login begun before the latest revocation, not one begun after it', () => {
  let now = 1_000;
  const recent = new RecentRevocations(() => now);
  expect(recent.revokes('d_a', 900)).toBe(false);
  recent.note('d_a', 1_000);
  expect(recent.revokes('d_a', 999)).toBe(true);
  expect(recent.revokes('d_a', 1_000)).toBe(true);
  expect(recent.revokes('d_a', 1_001)).toBe(false);
  expect(recent.revokes('d_b', 0)).toBe(false);
  // A notice that comes back late from another process does not move the time back.
  now = 2_000;
  recent.note('d_a', 1_500);
  recent.note('d_a', 1_200);
  expect(recent.revokes('d_a', 1_400)).toBe(true);
  expect(recent.revokes('d_a', 1_600)).toBe(false);
});

it('counts a notice without a time from when it was heard, and forgets after five minutes', () => {
  let now = 10_000;
  const recent = new RecentRevocations(() => now);
  recent.note('d_old', Number.POSITIVE_INFINITY);
  expect(recent.revokes('d_old', 9_999)).toBe(true);
  expect(recent.revokes('d_old', 10_001)).toBe(false); // a later login is let in
  now += 4 * 60_000;
  recent.note('d_new', now);
  now += 60_000;
  recent.note('d_newer', now);
  expect(recent.revokes('d_old', 0)).toBe(false);
  expect(recent.revokes('d_new', 0)).toBe(true);
});

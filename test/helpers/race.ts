import { expect } from 'vitest';
import type { Reply } from './fjord.js';

/**
 * The race test every limit gets: `attempts` creates sent together against a limit that leaves
 * room for exactly `room` more, expecting exactly `room` successes and a clear refusal for each of
 * the rest. Run it on PostgreSQL (`node scripts/test.mjs --only postgres`): there requests really
 * interleave inside a check-then-write, which SQLite's single connection never lets them do.
 *
 *   await expectLimitHolds({
 *     room: 3,
 *     send: (i) => t.request('POST', '/v1/dns/zones', { key: pat, body: { name: `z${i}.example` } }),
 *     refusal: { status: 403, code: 'quota_exceeded' },
 *   });
 */
export interface LimitRace {
  /** How many creates should still succeed. */
  room: number;
  /** How many to send at once (default 50). */
  attempts?: number;
  /** Sends the i-th create. */
  send(i: number): Promise<Reply>;
  /** What every refused create answers. */
  refusal: { status: number; code?: string };
  /** Success statuses (default 200 and 201). */
  ok?: number[];
}

export interface LimitRaceResult {
  succeeded: Reply[];
  refused: Reply[];
}

export async function expectLimitHolds(race: LimitRace): Promise<LimitRaceResult> {
  const attempts = race.attempts ?? 50;
  const okStatuses = race.ok ?? [200, 201];
  const replies = await Promise.all(Array.from({ length: attempts }, (_, i) => race.send(i)));
  const succeeded = replies.filter((r) => okStatuses.includes(r.status));
  const refused = replies.filter((r) => !okStatuses.includes(r.status));
  const unexpected = refused.filter(
    (r) =>
      r.status !== race.refusal.status || (race.refusal.code && r.body?.detail?.code !== race.refusal.code),
  );
  expect(
    unexpected.map((r) => `${r.status} ${r.text.slice(0, 200)}`),
    'every refusal is the limit’s clear answer',
  ).toEqual([]);
  expect(succeeded.length, `exactly ${race.room} of ${attempts} creates succeed`).toBe(race.room);
  return { succeeded, refused };
}

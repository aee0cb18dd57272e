import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SmsTables } from '../../src/areas/sms/migrations.js';
import { isUniqueViolation } from '../../src/kernel/store/dialect.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

let t: TestFjord;
beforeAll(async () => {
  t = await TestFjord.create();
});
afterAll(async () => {
  await t.close();
});

const create = (c: TestCustomer, n: number, extra: Record<string, unknown> = {}) =>
  t.request('POST', '/v1/sms/sender-profiles', {
    key: c.pat,
    body: { name: `p${n}`, sender_id: `+47910000${String(n).padStart(2, '0')}`, ...extra },
  });
const profiles = async (c: TestCustomer) =>
  (await t.request('GET', '/v1/sms/sender-profiles', { key: c.pat })).body as {
    id: string;
    is_default: boolean;
  }[];

describe('the default sender profile under concurrency', () => {
  it('makes exactly one of several first profiles created at once the default, and says so truly', async () => {
    for (let round = 0; round < 5; round++) {
      const c = await t.customer();
      const answers = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => create(c, n)));
      expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 201, 201]);
      const said = answers.filter((a) => a.body.is_default).map((a) => a.body.id);
      const listed = (await profiles(c)).filter((p) => p.is_default).map((p) => p.id);
      expect(listed).toHaveLength(1);
      expect(said).toEqual(listed);
    }
  });

  it('keeps one default when profiles are deleted and created with is_default at once', async () => {
    for (let round = 0; round < 10; round++) {
      const c = await t.customer();
      const ids: string[] = [];
      for (const n of [1, 2, 3, 4]) ids.push((await create(c, n)).body.id);
      // Deleting the default and the profile that would succeed it at once, while another asks to
      // be the default: some default must remain, and only one.
      await Promise.all([
        t.request('DELETE', `/v1/sms/sender-profiles/${ids[0]}`, { key: c.pat }),
        t.request('DELETE', `/v1/sms/sender-profiles/${ids[1]}`, { key: c.pat }),
        create(c, 5, { is_default: true }),
        create(c, 6, { is_default: true }),
      ]);
      const left = await profiles(c);
      expect(left).toHaveLength(4);
      expect(left.filter((p) => p.is_default)).toHaveLength(1);
    }
  });

  it('is guarded by the store itself: a second default row is refused', async () => {
    const c = await t.customer();
    await create(c, 1);
    const other = (await create(c, 2)).body.id;
    const db = t.kernel.store.typed<SmsTables>();
    const err = await db
      .updateTable('sms_sender_profiles')
      .set({ is_default: 1 })
      .where('id', '=', other)
      .execute()
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(isUniqueViolation(err)).toBe(true);
  });
});

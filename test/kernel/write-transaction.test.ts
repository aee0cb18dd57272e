import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockKey, writeTransaction } from '../../src/kernel/store/write-transaction.js';
import { TestFjord as T, type TestFjord } from '../helpers/fjord.js';

let t: TestFjord;
beforeAll(async () => {
  t = await T.create();
  await sql`CREATE TABLE wt_counter (id integer primary key, n integer not null)`.execute(t.kernel.store.db);
  await sql`INSERT INTO wt_counter (id, n) VALUES (1, 0)`.execute(t.kernel.store.db);
});
afterAll(() => t.close());

describe('writeTransaction with lockKey', () => {
  it('serialises read-then-write under the same key: no lost update', async () => {
    const { store } = t.kernel;
    const bump = () =>
      writeTransaction(store, async (tx) => {
        await lockKey(store, tx, 'wt:counter');
        const row = await sql<{ n: number }>`SELECT n FROM wt_counter WHERE id = 1`.execute(tx);
        await new Promise((r) => setTimeout(r, 2));
        await sql`UPDATE wt_counter SET n = ${Number(row.rows[0]!.n) + 1} WHERE id = 1`.execute(tx);
      });
    await Promise.all(Array.from({ length: 20 }, bump));
    const final = await sql<{ n: number }>`SELECT n FROM wt_counter WHERE id = 1`.execute(store.db);
    expect(Number(final.rows[0]!.n)).toBe(20);
  });

  it('rolls back on error and leaves the store usable', async () => {
    const { store } = t.kernel;
    await expect(
      writeTransaction(store, async (tx) => {
        await sql`UPDATE wt_counter SET n = 999 WHERE id = 1`.execute(tx);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const row = await sql<{ n: number }>`SELECT n FROM wt_counter WHERE id = 1`.execute(store.db);
    expect(Number(row.rows[0]!.n)).not.toBe(999);
  });
});

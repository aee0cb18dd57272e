import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/kernel/store/store.js';
import { QueryOutsideUnitError, unitsOf } from '../../src/kernel/store/unit-of-work.js';
import { TestFjord as T, type TestFjord } from '../helpers/fjord.js';

let t: TestFjord;
beforeAll(async () => {
  t = await T.create();
  const db = t.kernel.store.db;
  await sql`CREATE TABLE uow_counter (id integer primary key, n integer not null)`.execute(db);
  await sql`INSERT INTO uow_counter (id, n) VALUES (1, 0), (2, 0)`.execute(db);
  await sql`CREATE TABLE uow_items (owner text not null, name text not null)`.execute(db);
});
afterAll(() => t.close());

const pause = () => new Promise((r) => setTimeout(r, 2));

describe('unit of work', () => {
  it('serialises read-then-write under the same lock: no lost update', async () => {
    const { store } = t.kernel;
    const bump = () =>
      store.unitOfWork({ locks: ['uow:counter:1'] }, async ({ tx }) => {
        const row = await sql<{ n: number }>`SELECT n FROM uow_counter WHERE id = 1`.execute(tx);
        await pause();
        await sql`UPDATE uow_counter SET n = ${Number(row.rows[0]!.n) + 1} WHERE id = 1`.execute(tx);
      });
    await Promise.all(Array.from({ length: 30 }, bump));
    const final = await sql<{ n: number }>`SELECT n FROM uow_counter WHERE id = 1`.execute(store.db);
    expect(Number(final.rows[0]!.n)).toBe(30);
  });

  it('holds a count-then-create limit with repos bound to the unit', async () => {
    class Items {
      constructor(readonly db: import('kysely').Kysely<{ uow_items: { owner: string; name: string } }>) {}
      async count(owner: string) {
        const r = await this.db
          .selectFrom('uow_items')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('owner', '=', owner)
          .executeTakeFirstOrThrow();
        return Number(r.n);
      }
      add(owner: string, name: string) {
        return this.db.insertInto('uow_items').values({ owner, name }).execute();
      }
    }
    const items = unitsOf(t.kernel.store, (db) => new Items(db));
    const create = (i: number) =>
      items.run([`uow:items:alice`], async (repo) => {
        if ((await repo.count('alice')) >= 7) return false;
        await pause();
        await repo.add('alice', `item-${i}`);
        return true;
      });
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => create(i)));
    expect(results.filter(Boolean)).toHaveLength(7);
    expect(await items.read.count('alice')).toBe(7);
  });

  it('rolls back on error, skips afterCommit, and leaves the store usable', async () => {
    const { store } = t.kernel;
    const ran: string[] = [];
    await expect(
      store.unitOfWork({}, async (unit) => {
        unit.afterCommit(() => ran.push('after'));
        await sql`UPDATE uow_counter SET n = 999 WHERE id = 2`.execute(unit.tx);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(ran).toEqual([]);
    const row = await sql<{ n: number }>`SELECT n FROM uow_counter WHERE id = 2`.execute(store.db);
    expect(Number(row.rows[0]!.n)).toBe(0);
  });

  it('runs afterCommit once the writes are visible to everyone', async () => {
    const { store } = t.kernel;
    let seen = -1;
    await store.unitOfWork({ locks: ['uow:counter:2'] }, async (unit) => {
      await sql`UPDATE uow_counter SET n = 5 WHERE id = 2`.execute(unit.tx);
      unit.afterCommit(async () => {
        const r = await sql<{ n: number }>`SELECT n FROM uow_counter WHERE id = 2`.execute(store.db);
        seen = Number(r.rows[0]!.n);
      });
    });
    expect(seen).toBe(5);
  });

  it('joins an outer unit instead of deadlocking, and its writes roll back with it', async () => {
    const { store } = t.kernel;
    await expect(
      store.unitOfWork({ locks: ['uow:a'] }, async (outer) => {
        await store.unitOfWork({ locks: ['uow:b'] }, async (inner) => {
          expect(inner.tx).toBe(outer.tx);
          await sql`UPDATE uow_counter SET n = 77 WHERE id = 2`.execute(inner.tx);
        });
        throw new Error('outer fails');
      }),
    ).rejects.toThrow('outer fails');
    const row = await sql<{ n: number }>`SELECT n FROM uow_counter WHERE id = 2`.execute(store.db);
    expect(Number(row.rows[0]!.n)).toBe(5);
  });

  it('refuses a query through store.db from inside a unit (it would deadlock or starve the pool)', async () => {
    const { store } = t.kernel;
    await expect(
      store.unitOfWork({}, async () => {
        await sql`SELECT 1`.execute(store.db);
      }),
    ).rejects.toBeInstanceOf(QueryOutsideUnitError);
    // Work a unit started and that outlives it may use the store once the unit has ended.
    let late: Promise<unknown> = Promise.resolve();
    await store.unitOfWork({}, async () => {
      late = new Promise((r) => setTimeout(r, 5)).then(() => sql`SELECT 1`.execute(store.db));
    });
    await expect(late).resolves.toBeDefined();
  });
});

describe('store.exclusive', () => {
  /** Runs `n` sections under one key, alternating between the stores; returns the most inside at once. */
  async function mostAtOnce(stores: Store[], n: number): Promise<number> {
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        stores[i % stores.length]!.exclusive('test:exclusive', async () => {
          inside++;
          most = Math.max(most, inside);
          await pause();
          inside--;
        }),
      ),
    );
    return most;
  }

  it('runs the sections of one key one at a time, and refuses to start inside a unit', async () => {
    expect(await mostAtOnce([t.kernel.store], 12)).toBe(1);
    await expect(
      t.kernel.store.unitOfWork({}, () => t.kernel.store.exclusive('test:inside', async () => 1)),
    ).rejects.toBeInstanceOf(QueryOutsideUnitError);
  });

  it('takes turns with another process of a PostgreSQL store', async () => {
    if (t.kernel.store.kind !== 'postgres') return; // SQLite: one process serves a store's API
    const other = await openStore(t.kernel.config);
    try {
      expect(await mostAtOnce([t.kernel.store, other], 12)).toBe(1);
    } finally {
      await other.close();
    }
  });
});

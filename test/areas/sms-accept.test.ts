import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SmsTables } from '../../src/areas/sms/migrations.js';
import type { KernelTables } from '../../src/kernel/store/kernel-tables.js';
import { type TestCustomer, TestFjord } from '../helpers/fjord.js';

let t: TestFjord;
let a: TestCustomer;
// biome-ignore lint/suspicious/noExplicitAny: wraps the store's Kysely instance
let db: Kysely<any>;
const original = () => Object.getPrototypeOf(db).transaction as Kysely<unknown>['transaction'];

beforeAll(async () => {
  t = await TestFjord.create();
  a = await t.customer();
  db = t.kernel.store.db;
  const p = await t.request('POST', '/v1/sms/sender-profiles', {
    key: a.pat,
    body: { name: 'n', sender_id: '+4791000041' },
  });
  expect(p.status).toBe(201);
});
afterAll(async () => {
  // biome-ignore lint/suspicious/noExplicitAny: removes the test's own wrapper
  delete (db as any).transaction;
  await t.close();
});

/** Counts the transactions begun while `work` runs; `fail(n)` makes the n-th one fail at commit. */
async function counting<T>(work: () => Promise<T>, fail?: (n: number) => boolean) {
  let begun = 0;
  db.transaction = function (this: Kysely<unknown>) {
    const n = ++begun;
    const builder = original().call(this);
    if (!fail?.(n)) return builder;
    return {
      execute: async (fn: (trx: unknown) => Promise<unknown>) =>
        builder.execute(async (trx) => {
          await fn(trx);
          throw new Error('injected commit failure');
        }),
    };
  } as never;
  try {
    return { result: await work(), begun };
  } finally {
    // biome-ignore lint/suspicious/noExplicitAny: removes the wrapper again
    delete (db as any).transaction;
  }
}

const sendMany = (n: number) =>
  Promise.all(
    Array.from({ length: n }, (_, i) =>
      t.request('POST', '/v1/sms/send', {
        key: a.pat,
        body: { to: [`+47912300${String(i).padStart(2, '0')}`], message: `m${i}`, customer_ref: 'group' },
      }),
    ),
  );

async function storedFor(ids: string[]) {
  const sms = db as Kysely<SmsTables>;
  const kernel = db as Kysely<KernelTables>;
  const rows = await sms.selectFrom('sms_messages').select('id').where('id', 'in', ids).execute();
  const jobs = await kernel.selectFrom('jobs').select('payload').where('kind', '=', 'sms.submit').execute();
  const jobFor = new Map<string, number>();
  for (const j of jobs) {
    const id = (JSON.parse(j.payload) as { messageId: string }).messageId;
    jobFor.set(id, (jobFor.get(id) ?? 0) + 1);
  }
  return { rows: rows.length, jobs: ids.map((id) => jobFor.get(id) ?? 0) };
}

describe('accepting sends (group commit)', () => {
  it('writes concurrent sends in shared transactions: fewer commits than sends, each with its one job', async () => {
    const { result, begun } = await counting(() => sendMany(20));
    expect(result.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(begun).toBeLessThan(20);
    const ids = result.map((r) => r.body.sms_message_id as string);
    const stored = await storedFor(ids);
    expect(stored.rows).toBe(20);
    expect(stored.jobs).toEqual(Array(20).fill(1));
  });

  it('writes each send of a failed shared transaction again on its own, so none is lost or doubled', async () => {
    const { result } = await counting(
      () => sendMany(10),
      (n) => n === 1,
    );
    const ok = result.filter((r) => r.status === 201);
    // Only a send that was alone in the failed transaction may fail; a shared one is retried.
    expect(ok.length).toBeGreaterThanOrEqual(9);
    for (const r of result.filter((x) => x.status !== 201)) expect(r.status).toBe(500);
    const stored = await storedFor(ok.map((r) => r.body.sms_message_id as string));
    expect(stored.rows).toBe(ok.length);
    expect(stored.jobs).toEqual(Array(ok.length).fill(1));
  });
});

import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultBackoff, type JobContext, JobQueue } from '../../src/kernel/jobs/queue.js';
import { createLogger } from '../../src/kernel/log.js';
import type { KernelTables } from '../../src/kernel/store/kernel-tables.js';
import { TestFjord } from '../helpers/fjord.js';
import { latch } from '../helpers/latch.js';

let t: TestFjord;
let db: Kysely<KernelTables>;

beforeAll(async () => {
  t = await TestFjord.create();
  db = t.kernel.store.typed<KernelTables>();
});
afterAll(() => t.close());

let kindSeq = 0;
/** A fresh job kind per test, so runs of one test never count in another. */
const freshKind = (label: string) => `test.${label}.${++kindSeq}`;

const jobRow = (id: string) => db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
const jobsOfKind = (kind: string) => db.selectFrom('jobs').selectAll().where('kind', '=', kind).execute();

async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** run_at is the failure time plus the backoff (updated_at is read from the clock a moment later). */
function expectBackoff(row: { run_at: number; updated_at: number }, ms: number) {
  expect(row.run_at - row.updated_at).toBeGreaterThan(ms - 1000);
  expect(row.run_at - row.updated_at).toBeLessThanOrEqual(ms);
}

describe('enqueue and drain', () => {
  it('runs a job once with its payload, then removes it', async () => {
    const kind = freshKind('once');
    const runs: { payload: unknown; ctx: JobContext }[] = [];
    t.kernel.jobs.register<{ n: number }>(kind, {
      run: async (payload, ctx) => void runs.push({ payload, ctx }),
    });
    const id = await t.kernel.jobs.enqueue(kind, { n: 42 });
    expect(id).toBeTruthy();
    expect(await jobRow(id!)).toMatchObject({ status: 'queued', attempts: 0, kind });

    expect(await t.kernel.jobs.drain()).toBe(1);
    expect(runs).toEqual([{ payload: { n: 42 }, ctx: { jobId: id, attempt: 1 } }]);
    expect(await jobRow(id!)).toBeUndefined();

    expect(await t.kernel.jobs.drain()).toBe(0);
    expect(runs).toHaveLength(1);
  });

  it('keeps a delayed job until the clock reaches it', async () => {
    const kind = freshKind('delayed');
    let runs = 0;
    t.kernel.jobs.register(kind, { run: async () => void runs++ });
    const id = await t.kernel.jobs.enqueue(kind, null, { delaySeconds: 600 });
    await t.kernel.jobs.drain();
    expect(runs).toBe(0);
    await t.advance(300);
    expect(runs).toBe(0);
    expect(await jobRow(id!)).toMatchObject({ status: 'queued', attempts: 0 });
    await t.advance(301);
    expect(runs).toBe(1);
    expect(await jobRow(id!)).toBeUndefined();
  });

  it('stores whole-millisecond times for fractional delays and backoffs', async () => {
    const kind = freshKind('fractional');
    let runs = 0;
    t.kernel.jobs.register(kind, {
      backoffSeconds: () => 2.0004,
      run: async () => {
        if (++runs === 1) throw new Error('again');
      },
    });
    const id = (await t.kernel.jobs.enqueue(kind, {}, { delaySeconds: 1.0004 }))!;
    expect(Number.isInteger((await jobRow(id))!.run_at)).toBe(true);
    await t.advance(2);
    expect(runs).toBe(1);
    expect(Number.isInteger((await jobRow(id))!.run_at)).toBe(true);
    await t.advance(3);
    expect(runs).toBe(2);
  });

  it('leaves jobs of kinds it does not know alone', async () => {
    const id = await t.kernel.jobs.enqueue('test.nobody-handles-this', {});
    await t.kernel.jobs.drain();
    expect(await jobRow(id!)).toMatchObject({ status: 'queued', attempts: 0 });
    await db.deleteFrom('jobs').where('id', '=', id!).execute();
  });
});

describe('enqueueMany', () => {
  it('writes many jobs of a kind (more than one statement holds) that each run once, delayed ones at their time', async () => {
    const kind = freshKind('many');
    const seen: number[] = [];
    t.kernel.jobs.register<{ n: number }>(kind, { maxAttempts: 3, run: async ({ n }) => void seen.push(n) });
    const later = t.kernel.clock.nowMs() + 60_000;
    const items = Array.from({ length: 1201 }, (_, n) => ({
      payload: { n },
      runAt: n === 0 ? later : undefined,
    }));
    await t.kernel.jobs.enqueueMany(kind, items);
    const rows = await jobsOfKind(kind);
    expect(rows).toHaveLength(1201);
    expect(new Set(rows.map((r) => r.id)).size).toBe(1201);
    expect(rows.every((r) => r.max_attempts === 3 && r.status === 'queued')).toBe(true);
    while ((await t.kernel.jobs.drain()) > 0) {}
    expect(seen.sort((x, y) => x - y)).toEqual(Array.from({ length: 1200 }, (_, i) => i + 1));
    await t.advance(60);
    while ((await t.kernel.jobs.drain()) > 0) {}
    expect(seen).toContain(0);
    expect(await jobsOfKind(kind)).toEqual([]);
  });
});

describe('retries', () => {
  it('doubles the default backoff from 5 s and caps it at an hour', () => {
    expect([1, 2, 3, 4, 5].map(defaultBackoff)).toEqual([5, 10, 20, 40, 80]);
    expect(defaultBackoff(11)).toBe(3600);
    expect(defaultBackoff(50)).toBe(3600);
  });

  it('retries a failing job only once the clock passes its run_at, then fails it for good', async () => {
    const kind = freshKind('flaky');
    const attempts: number[] = [];
    t.kernel.jobs.register(kind, {
      maxAttempts: 3,
      backoffSeconds: (attempt) => 60 * attempt,
      run: async (_p, ctx) => {
        attempts.push(ctx.attempt);
        throw new Error(`boom #${ctx.attempt}`);
      },
    });
    const id = (await t.kernel.jobs.enqueue(kind, {}))!;

    await t.kernel.jobs.drain();
    expect(attempts).toEqual([1]);
    let row = (await jobRow(id))!;
    expect(row).toMatchObject({ status: 'queued', attempts: 1, last_error: 'boom #1', lease_until: null });
    expectBackoff(row, 60_000);

    // Not due yet: neither draining nor moving the clock part of the way runs it.
    await t.kernel.jobs.drain();
    await t.advance(30);
    expect(attempts).toEqual([1]);

    await t.advance(31);
    expect(attempts).toEqual([1, 2]);
    row = (await jobRow(id))!;
    expect(row).toMatchObject({ status: 'queued', attempts: 2, last_error: 'boom #2' });
    expectBackoff(row, 120_000);

    await t.advance(90);
    expect(attempts).toEqual([1, 2]);
    await t.advance(31);
    expect(attempts).toEqual([1, 2, 3]);
    row = (await jobRow(id))!;
    expect(row).toMatchObject({ status: 'failed', attempts: 3, max_attempts: 3, last_error: 'boom #3' });

    // A failed job is never taken again.
    await t.advance(86_400);
    expect(attempts).toEqual([1, 2, 3]);
    expect((await jobRow(id))!.status).toBe('failed');
    expect((await t.operator('GET', '/admin/v1/jobs')).body.jobs.failed).toBeGreaterThanOrEqual(1);
  });

  it('takes max_attempts from enqueue over the kind', async () => {
    const kind = freshKind('once-only');
    let runs = 0;
    t.kernel.jobs.register(kind, {
      maxAttempts: 5,
      run: async () => {
        runs++;
        throw new Error('no');
      },
    });
    const id = (await t.kernel.jobs.enqueue(kind, {}, { maxAttempts: 1 }))!;
    await t.kernel.jobs.drain();
    expect(runs).toBe(1);
    expect(await jobRow(id)).toMatchObject({
      status: 'failed',
      attempts: 1,
      max_attempts: 1,
      last_error: 'no',
    });
  });

  it('succeeds on a retry and leaves the table', async () => {
    const kind = freshKind('second-time-lucky');
    let runs = 0;
    t.kernel.jobs.register(kind, {
      run: async () => {
        if (++runs === 1) throw new Error('first time');
      },
    });
    const id = (await t.kernel.jobs.enqueue(kind, {}))!;
    await t.kernel.jobs.drain();
    expect((await jobRow(id))!.status).toBe('queued');
    await t.advance(defaultBackoff(1) + 1);
    expect(runs).toBe(2);
    expect(await jobRow(id)).toBeUndefined();
  });
});

describe('unique keys', () => {
  it('keeps at most one live job per key, and frees the key when the job is done', async () => {
    const kind = freshKind('unique');
    const seen: unknown[] = [];
    t.kernel.jobs.register(kind, { run: async (p) => void seen.push(p) });
    const first = await t.kernel.jobs.enqueue(kind, { n: 1 }, { uniqueKey: 'u-1' });
    const second = await t.kernel.jobs.enqueue(kind, { n: 2 }, { uniqueKey: 'u-1' });
    const other = await t.kernel.jobs.enqueue(kind, { n: 3 }, { uniqueKey: 'u-2' });
    expect(first).toBeTruthy();
    expect(second).toBeNull();
    expect(other).toBeTruthy();
    expect(await jobsOfKind(kind)).toHaveLength(2);

    await t.kernel.jobs.drain();
    expect(seen).toHaveLength(2);
    expect(seen).toContainEqual({ n: 1 });
    expect(seen).not.toContainEqual({ n: 2 });

    const again = await t.kernel.jobs.enqueue(kind, { n: 4 }, { uniqueKey: 'u-1' });
    expect(again).toBeTruthy();
    expect(again).not.toBe(first);
    await t.kernel.jobs.drain();
    expect(seen).toContainEqual({ n: 4 });
  });

  it('holds the key while a job waits for a retry, and frees it once the job fails for good', async () => {
    const kind = freshKind('unique-failing');
    t.kernel.jobs.register(kind, {
      maxAttempts: 2,
      run: async () => {
        throw new Error('down');
      },
    });
    const id = await t.kernel.jobs.enqueue(kind, {}, { uniqueKey: 'u-failing' });
    await t.kernel.jobs.drain();
    expect(await t.kernel.jobs.enqueue(kind, {}, { uniqueKey: 'u-failing' })).toBeNull();
    await t.advance(defaultBackoff(1) + 1);
    expect((await jobRow(id!))!.status).toBe('failed');
    const fresh = await t.kernel.jobs.enqueue(kind, {}, { uniqueKey: 'u-failing' });
    expect(fresh).toBeTruthy();
    await db.deleteFrom('jobs').where('kind', '=', kind).execute();
  });
});

describe('leases', () => {
  it('takes a running job again once its lease ran out, and not before', async () => {
    const kind = freshKind('lease');
    const attempts: number[] = [];
    t.kernel.jobs.register(kind, { run: async (_p, ctx) => void attempts.push(ctx.attempt) });
    const live = (await t.kernel.jobs.enqueue(kind, { which: 'live' }))!;
    const dead = (await t.kernel.jobs.enqueue(kind, { which: 'dead' }))!;
    // Leases are on the wall clock. Two workers took these and then went quiet: one still within
    // its lease, one past it.
    const wall = Date.now();
    await db
      .updateTable('jobs')
      .set({ status: 'running', attempts: 1, lease_until: wall + 60_000 })
      .where('id', '=', live)
      .execute();
    await db
      .updateTable('jobs')
      .set({ status: 'running', attempts: 1, lease_until: wall - 1000 })
      .where('id', '=', dead)
      .execute();

    await t.kernel.jobs.drain();
    expect(attempts).toEqual([2]);
    expect(await jobRow(dead)).toBeUndefined();
    expect(await jobRow(live)).toMatchObject({ status: 'running', attempts: 1 });

    // Moving the emulator clock makes jobs due; it never makes a held lease look expired.
    await t.advance(3600);
    expect(attempts).toEqual([2]);
    expect(await jobRow(live)).toMatchObject({ status: 'running', attempts: 1 });

    await db
      .updateTable('jobs')
      .set({ lease_until: Date.now() - 1 })
      .where('id', '=', live)
      .execute();
    await t.kernel.jobs.drain();
    expect(attempts).toEqual([2, 2]);
    expect(await jobRow(live)).toBeUndefined();
  });

  it('lets a run whose lease was taken over finish without touching the new run', async () => {
    const kind = freshKind('takeover');
    t.kernel.jobs.register(kind, { run: async () => {} });
    const id = (await t.kernel.jobs.enqueue(kind, {}))!;
    // Another worker has meanwhile claimed the job again (attempt 2); this run held attempt 1.
    await db
      .updateTable('jobs')
      .set({ status: 'running', attempts: 2, lease_until: Date.now() + 60_000 })
      .where('id', '=', id)
      .execute();
    const stale = { ...(await jobRow(id))!, attempts: 1 };
    // biome-ignore lint/suspicious/noExplicitAny: reaching the private runner on purpose
    await (t.kernel.jobs as any).runOne(stale);
    expect(await jobRow(id)).toMatchObject({ status: 'running', attempts: 2 });
  });
});

describe('recurring schedules', () => {
  it('fires once per interval, and once only for a run of missed periods', async () => {
    const kind = freshKind('tick');
    const interval = 600;
    let runs = 0;
    t.kernel.jobs.register(kind, { run: async () => void runs++ });
    const name = `sched-${kind}`;
    await t.kernel.jobs.schedule(name, kind, interval);
    const created = (await db
      .selectFrom('schedules')
      .selectAll()
      .where('name', '=', name)
      .executeTakeFirst())!;
    const first = created.next_run_at;
    expect(created.last_run_at).toBeNull();

    await t.kernel.jobs.drain();
    expect(runs).toBe(0);

    // 3.5 intervals pass at once: three periods came due, but a schedule that missed several
    // periods fires once, and its next run stays on the interval grid.
    await t.advance(3.5 * interval);
    expect(runs).toBe(1);
    const after = (await db.selectFrom('schedules').selectAll().where('name', '=', name).executeTakeFirst())!;
    expect(after.next_run_at).toBe(first + 3 * interval * 1000);
    expect(after.last_run_at).not.toBeNull();

    // Re-declaring the schedule (as every process does at boot) does not push it back.
    await t.kernel.jobs.schedule(name, kind, interval);
    const redeclared = await db
      .selectFrom('schedules')
      .selectAll()
      .where('name', '=', name)
      .executeTakeFirst();
    expect(redeclared!.next_run_at).toBe(after.next_run_at);

    await t.advance(0.4 * interval); // 3.9 intervals: the 4th is not due yet
    expect(runs).toBe(1);
    await t.advance(0.2 * interval); // 4.1
    expect(runs).toBe(2);
    await t.advance(interval); // 5.1
    expect(runs).toBe(3);
    await t.advance(interval); // 6.1
    expect(runs).toBe(4);
    await t.advance(0.5 * interval); // 6.6
    expect(runs).toBe(4);
  });
});

describe('many workers on one store', () => {
  it('never runs the same job twice when two queues drain at once', async () => {
    const kind = freshKind('shared');
    const runsById = new Map<string, number>();
    const handler = {
      run: async (_p: unknown, ctx: JobContext) => {
        runsById.set(ctx.jobId, (runsById.get(ctx.jobId) ?? 0) + 1);
        // Yield so that the other queue gets to claim while this one is busy.
        await new Promise((r) => setTimeout(r, 1));
      },
    };
    t.kernel.jobs.register(kind, handler);
    const other = new JobQueue(t.kernel.store, t.kernel.clock, createLogger('silent'));
    other.register(kind, handler);

    const ids: string[] = [];
    for (let i = 0; i < 60; i++) ids.push((await t.kernel.jobs.enqueue(kind, { i }))!);
    const [a, b] = await Promise.all([t.kernel.jobs.drain(), other.drain()]);

    expect(runsById.size).toBe(60);
    expect([...runsById.values()].every((n) => n === 1)).toBe(true);
    expect(new Set(runsById.keys())).toEqual(new Set(ids));
    expect(a + b).toBeGreaterThanOrEqual(60);
    expect(await jobsOfKind(kind)).toHaveLength(0);
  });

  it('keeps a job that runs longer than one lease from being taken by another queue', async () => {
    const kind = freshKind('long');
    let runs = 0;
    const finished = latch();
    // Leases of 1 s, renewed every third of that while a queue holds the job: a shorter one can
    // run out while a loaded machine stalls the process between two renewals, and the other
    // queue would then take the job as if its worker had died.
    const holder = new JobQueue(t.kernel.store, t.kernel.clock, createLogger('silent'), 10, 1000);
    const other = new JobQueue(t.kernel.store, t.kernel.clock, createLogger('silent'), 10, 1000);
    const running = latch();
    const handler = {
      run: async () => {
        runs++;
        running.open();
        await finished.opened;
      },
    };
    holder.register(kind, handler);
    other.register(kind, handler);
    await t.kernel.jobs.enqueue(kind, {});
    const held = holder.drain();
    await running.opened;
    // Two and a half leases' worth of time: without renewal the other queue would take the job again.
    for (let i = 0; i < 10; i++) {
      await new Promise((r) => setTimeout(r, 250));
      await other.drain();
    }
    finished.open();
    await held;
    expect(runs).toBe(1);
    expect(await jobsOfKind(kind)).toHaveLength(0);
  });

  it('tells the area once when a job is failed because its worker died on the last attempt', async () => {
    const kind = freshKind('abandoned');
    const told: unknown[] = [];
    const handler = {
      run: async () => {},
      maxAttempts: 2,
      abandoned: async (p: unknown) => void told.push(p),
    };
    t.kernel.jobs.register(kind, handler);
    const other = new JobQueue(t.kernel.store, t.kernel.clock, createLogger('silent'));
    other.register(kind, handler);
    const id = (await t.kernel.jobs.enqueue(kind, { what: 'transcription' }))!;
    // As a worker that died holding its last attempt leaves it.
    await t.kernel.store.db
      .updateTable('jobs')
      .set({ status: 'running', attempts: 2, lease_until: Date.now() - 1000 })
      .where('id', '=', id)
      .execute();
    await Promise.all([t.kernel.jobs.drain(), other.drain()]);
    expect(told).toEqual([{ what: 'transcription' }]);
    expect((await jobsOfKind(kind)).map((j) => j.status)).toEqual(['failed']);
  });

  it('fires a due schedule once across two queues', async () => {
    const kind = freshKind('shared-tick');
    let runs = 0;
    const handler = {
      run: async () => {
        runs++;
        await new Promise((r) => setTimeout(r, 1));
      },
    };
    t.kernel.jobs.register(kind, handler);
    const other = new JobQueue(t.kernel.store, t.kernel.clock, createLogger('silent'));
    other.register(kind, handler);
    await t.kernel.jobs.schedule(`sched-${kind}`, kind, 60);
    t.kernel.clock.advance(61);
    await Promise.all([t.kernel.jobs.drain(), other.drain(), t.kernel.jobs.drain(), other.drain()]);
    expect(runs).toBe(1);
  });
});

describe('the worker loop', () => {
  it('picks jobs up without an explicit drain once started, and stops when told', async () => {
    const kind = freshKind('background');
    const ran: string[] = [];
    t.kernel.jobs.register<{ tag: string }>(kind, { run: async (p) => void ran.push(p.tag) });
    t.kernel.jobs.start();
    try {
      await t.kernel.jobs.enqueue(kind, { tag: 'a' });
      await waitFor(() => ran.includes('a'), 'the worker to run job a');
      // A job that comes due later (no wake-up notice) is found by polling.
      await t.kernel.jobs.enqueue(kind, { tag: 'b' }, { delaySeconds: 30 });
      t.kernel.clock.advance(31);
      await waitFor(() => ran.includes('b'), 'the worker to poll job b');
    } finally {
      await t.kernel.jobs.stop();
    }
    expect(await jobsOfKind(kind)).toHaveLength(0);

    const id = (await t.kernel.jobs.enqueue(kind, { tag: 'c' }))!;
    // Long enough for many poll rounds (FJORD_WORKER_POLL_MS is 50 in tests).
    await new Promise((r) => setTimeout(r, 500));
    expect(ran).toEqual(['a', 'b']);
    expect(await jobRow(id)).toMatchObject({ status: 'queued', attempts: 0 });

    await t.kernel.jobs.drain();
    expect(ran).toEqual(['a', 'b', 'c']);
  });

  it('finishes the job in progress when stopped mid-round, then stays stopped', async () => {
    const kind = freshKind('slow');
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let started = false;
    const ran: string[] = [];
    t.kernel.jobs.register<{ tag: string }>(kind, {
      run: async (p) => {
        if (p.tag === 'slow') {
          started = true;
          await gate;
        }
        ran.push(p.tag);
      },
    });
    t.kernel.jobs.start();
    await t.kernel.jobs.enqueue(kind, { tag: 'slow' });
    await waitFor(() => started, 'the slow job to start');
    const stopping = t.kernel.jobs.stop();
    release();
    await stopping;
    expect(ran).toEqual(['slow']);

    const id = (await t.kernel.jobs.enqueue(kind, { tag: 'late' }))!;
    await new Promise((r) => setTimeout(r, 500));
    expect(ran).toEqual(['slow']);
    expect(await jobRow(id)).toMatchObject({ status: 'queued' });
    await t.kernel.jobs.drain();
    expect(ran).toEqual(['slow', 'late']);
  });
});

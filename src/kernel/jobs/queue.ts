import { type Kysely, sql } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { newId } from '../ids.js';
import { fromJson, isUniqueViolation, toJson } from '../store/dialect.js';
import type { KernelTables } from '../store/kernel-tables.js';
import type { Store } from '../store/store.js';
import { defaultBackoff, type EnqueueOptions, type JobKind } from './job-kind.js';

/** What an area declares for its jobs stays importable from the queue. */
export { defaultBackoff, type EnqueueOptions, type JobContext, type JobKind } from './job-kind.js';

/**
 * Leases are on the wall clock, never the emulator clock: moving the clock forward must make jobs
 * due, not make a running job look abandoned and run it twice.
 */
const wallNow = () => Date.now();
const BATCH = 20;
const WAKE_CHANNEL = 'fjord_jobs';

/**
 * Durable jobs: a table with run_at, attempts, a lease and the last error, claimed with
 * FOR UPDATE SKIP LOCKED on PostgreSQL (SQLite serialises writers by itself). A job whose
 * worker died is taken again when its lease runs out. Recurring schedules enqueue a job each
 * time they come due; every time is read from the one clock.
 */
export class JobQueue {
  private readonly kinds = new Map<string, JobKind<never>>();
  private readonly db: Kysely<KernelTables>;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  /** Drains under way in this process: the worker's, and those callers started. */
  private readonly draining = new Set<Promise<number>>();
  private stopped = true;
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly pollMs = 500,
    /** How long a claimed job is held before another worker may take it (FJORD_JOB_LEASE_SECONDS). */
    private readonly leaseMs = 5 * 60_000,
  ) {
    this.db = store.typed<KernelTables>();
  }

  register<P>(kind: string, handler: JobKind<P>): void {
    if (this.kinds.has(kind)) throw new Error(`job kind ${kind} registered twice`);
    this.kinds.set(kind, handler as JobKind<never>);
  }

  async enqueue(kind: string, payload: unknown, opts: EnqueueOptions = {}): Promise<string | null> {
    const now = this.clock.nowMs();
    const id = newId();
    const db: Kysely<KernelTables> = opts.db ?? this.db;
    try {
      const r = await db
        .insertInto('jobs')
        .values({
          id,
          kind,
          payload: toJson(payload),
          status: 'queued',
          run_at: Math.round(opts.runAt ?? now + (opts.delaySeconds ?? 0) * 1000),
          attempts: 0,
          max_attempts: opts.maxAttempts ?? this.kinds.get(kind)?.maxAttempts ?? 10,
          lease_until: null,
          last_error: null,
          unique_key: opts.uniqueKey ?? null,
          created_at: now,
          updated_at: now,
        })
        // DO NOTHING rather than a caught violation: inside a PostgreSQL transaction an error
        // would abort the caller's whole transaction.
        .onConflict((oc) => oc.column('unique_key').doNothing())
        .executeTakeFirst();
      if (opts.uniqueKey && Number(r.numInsertedOrUpdatedRows ?? 1n) === 0) return null;
    } catch (err) {
      if (opts.uniqueKey && isUniqueViolation(err)) return null;
      throw err;
    }
    if (!opts.db && !opts.runAt && !opts.delaySeconds) this.wake(kind);
    return id;
  }

  /**
   * Writes many jobs of one kind in as few statements as the store allows (no unique keys), in
   * `db` when given: for areas that accept a batch of work in one request. Does not wake workers
   * when written in a caller's transaction; call `wake` after its commit.
   */
  async enqueueMany(
    kind: string,
    items: { payload: unknown; runAt?: number }[],
    opts: { db?: EnqueueOptions['db'] } = {},
  ): Promise<void> {
    if (items.length === 0) return;
    const now = this.clock.nowMs();
    const db: Kysely<KernelTables> = opts.db ?? this.db;
    const maxAttempts = this.kinds.get(kind)?.maxAttempts ?? 10;
    const rows = items.map((item) => ({
      id: newId(),
      kind,
      payload: toJson(item.payload),
      status: 'queued' as const,
      run_at: Math.round(item.runAt ?? now),
      attempts: 0,
      max_attempts: maxAttempts,
      lease_until: null,
      last_error: null,
      unique_key: null,
      created_at: now,
      updated_at: now,
    }));
    // 12 columns a row: 500 rows stay far below PostgreSQL's 65535 bind parameters.
    for (let i = 0; i < rows.length; i += 500) {
      await db
        .insertInto('jobs')
        .values(rows.slice(i, i + 500))
        .execute();
    }
    if (!opts.db) this.wake(kind);
  }

  /** Tells every worker of this store that a job is due now. */
  wake(kind = ''): void {
    this.store.publish(WAKE_CHANNEL, kind).catch(() => {});
  }

  /** Creates or updates a recurring schedule; its first run is one interval from now unless due earlier. */
  async schedule(name: string, jobKind: string, everySeconds: number): Promise<void> {
    const intervalSeconds = Math.max(1, Math.round(everySeconds));
    const next = this.clock.nowMs() + intervalSeconds * 1000;
    await this.db
      .insertInto('schedules')
      .values({
        name,
        job_kind: jobKind,
        interval_seconds: intervalSeconds,
        next_run_at: next,
        last_run_at: null,
      })
      .onConflict((oc) =>
        oc.column('name').doUpdateSet({ job_kind: jobKind, interval_seconds: intervalSeconds }),
      )
      .execute();
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribe = this.store.subscribe(WAKE_CHANNEL, () => this.kick());
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => {});
  }

  /** Runs every job that is due now, including jobs those jobs make due; returns how many ran. */
  drain(maxRounds = 100): Promise<number> {
    const rounds = (async () => {
      let total = 0;
      for (let round = 0; round < maxRounds; round++) {
        const ran = await this.runDueOnce();
        total += ran;
        if (ran === 0) break;
      }
      return total;
    })();
    this.draining.add(rounds);
    const done = () => void this.draining.delete(rounds);
    rounds.then(done, done);
    return rounds;
  }

  /**
   * Drains, then waits for the drains this process had under way besides (its worker may have
   * claimed some of the due jobs first), and again until nothing is due or running here: what the
   * emulator's clock advance answers after, so a test reads the effects of every job that came
   * due. Jobs another process claimed are not waited for. Answers how many this call ran.
   */
  async settle(maxPasses = 20): Promise<number> {
    let total = 0;
    for (let pass = 0; pass < maxPasses; pass++) {
      const ran = await this.drain();
      total += ran;
      const others = [...this.draining];
      if (ran === 0 && others.length === 0) break;
      await Promise.allSettled(others);
    }
    return total;
  }

  /** Jobs queued to run by now, plus schedules whose next run is due: what a drain would start with. */
  async countDue(): Promise<number> {
    const now = this.clock.nowMs();
    const [jobs, schedules] = await Promise.all([
      this.db
        .selectFrom('jobs')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status', '=', 'queued')
        .where('run_at', '<=', now)
        .executeTakeFirst(),
      this.db
        .selectFrom('schedules')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('next_run_at', '<=', now)
        .executeTakeFirst(),
    ]);
    return Number(jobs?.n ?? 0) + Number(schedules?.n ?? 0);
  }

  async stats(): Promise<Record<string, number>> {
    const rows = await this.db
      .selectFrom('jobs')
      .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('status')
      .execute();
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  }

  private kick(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.running !== null) return;
    let ran = 0;
    this.running = this.drain(10)
      .then((n) => {
        ran = n;
        return n;
      })
      .catch((err) => {
        this.log.error({ err }, 'job worker round failed');
        return 0;
      })
      .finally(() => {
        this.running = null;
        // A busy queue is drained again at once; only an idle one waits for the next poll.
        if (!this.stopped) this.timer = setTimeout(() => this.kick(), ran > 0 ? 0 : this.pollMs);
      });
  }

  private async runDueOnce(): Promise<number> {
    await this.fireSchedules();
    await this.failAbandoned();
    const jobs = await this.claim();
    // Every claimed job stays leased while this process holds it — waiting its turn in the batch
    // or running for longer than one lease (a long transcription) — so no other worker, nor this
    // one's next poll, takes it while it is alive. Only a process that died lets a lease run out.
    for (const job of jobs) this.held.set(job.id, job.attempts);
    const renewal = jobs.length ? setInterval(() => void this.renewLeases(), this.leaseMs / 3) : null;
    renewal?.unref();
    try {
      let together: Promise<void>[] = [];
      for (const job of jobs) {
        if (this.kinds.get(job.kind)?.concurrent) {
          together.push(this.runOne(job).finally(() => this.held.delete(job.id)));
          continue;
        }
        await Promise.all(together);
        together = [];
        await this.runOne(job).finally(() => this.held.delete(job.id));
      }
      await Promise.all(together);
    } finally {
      if (renewal) clearInterval(renewal);
    }
    return jobs.length;
  }

  /** Jobs this process claimed and has not finished: id → the attempt it holds. */
  private readonly held = new Map<string, number>();

  private async renewLeases(): Promise<void> {
    const until = wallNow() + this.leaseMs;
    for (const [id, attempts] of this.held)
      await this.db
        .updateTable('jobs')
        .set({ lease_until: until })
        .where('id', '=', id)
        .where('status', '=', 'running')
        .where('attempts', '=', attempts)
        .execute()
        .catch((err) => this.log.warn({ err, id }, 'renewing a job lease failed'));
  }

  private async fireSchedules(): Promise<void> {
    const now = this.clock.nowMs();
    const due = await this.db.selectFrom('schedules').selectAll().where('next_run_at', '<=', now).execute();
    for (const s of due) {
      const periods = Math.floor((now - s.next_run_at) / (s.interval_seconds * 1000)) + 1;
      const next = s.next_run_at + periods * s.interval_seconds * 1000;
      // Only the process whose update lands enqueues the run: schedules fire once across many workers.
      const res = await this.db
        .updateTable('schedules')
        .set({ next_run_at: next, last_run_at: now })
        .where('name', '=', s.name)
        .where('next_run_at', '=', s.next_run_at)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) === 1) {
        await this.enqueue(
          s.job_kind,
          { schedule: s.name },
          { uniqueKey: `schedule:${s.name}:${s.next_run_at}` },
        );
      }
    }
  }

  /** A job whose worker died on its last allowed attempt is failed, not retried forever. */
  private async failAbandoned(): Promise<void> {
    const now = this.clock.nowMs();
    const wall = wallNow();
    const failed = await this.db
      .updateTable('jobs')
      .set({
        status: 'failed',
        last_error: 'the worker stopped during the last allowed attempt (lease expired)',
        lease_until: null,
        unique_key: null,
        updated_at: now,
      })
      .where('status', '=', 'running')
      .where('lease_until', '<', wall)
      .where((eb) => eb('attempts', '>=', eb.ref('max_attempts')))
      .returning(['id', 'kind', 'payload', 'attempts'])
      .execute();
    // Only the process whose update failed a job tells its area, so each hears of it once.
    for (const job of failed) {
      const abandoned = this.kinds.get(job.kind)?.abandoned;
      if (!abandoned) continue;
      await abandoned(fromJson(job.payload, null) as never, { jobId: job.id, attempt: job.attempts }).catch(
        (err) =>
          this.log.warn({ err, job: job.kind, id: job.id }, 'telling an area of an abandoned job failed'),
      );
    }
  }

  private async claim() {
    const now = this.clock.nowMs();
    const wall = wallNow();
    const kinds = [...this.kinds.keys()];
    if (kinds.length === 0) return [];
    const lock = this.store.kind === 'postgres' ? sql`FOR UPDATE SKIP LOCKED` : sql``;
    const result = await sql<KernelTables['jobs']>`
      UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_until = ${wall + this.leaseMs}, updated_at = ${now}
      WHERE id IN (
        SELECT id FROM jobs
        WHERE kind IN (${sql.join(kinds)})
          AND ((status = 'queued' AND run_at <= ${now}) OR (status = 'running' AND lease_until < ${wall}))
        ORDER BY run_at, id LIMIT ${BATCH} ${lock}
      )
      RETURNING *`.execute(this.db);
    // RETURNING has no order: run due jobs oldest first, and jobs due together in the order they
    // were enqueued (ids are UUIDv7), so e.g. an area's status webhooks leave in the order made.
    return result.rows.sort((x, y) => x.run_at - y.run_at || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  }

  private async runOne(job: KernelTables['jobs']): Promise<void> {
    const kind = this.kinds.get(job.kind)!;
    try {
      await kind.run(fromJson(job.payload, null) as never, { jobId: job.id, attempt: job.attempts });
      // Finished jobs leave the table (their effects live in the areas' own tables); a unique
      // key is thereby freed for the next run.
      // Only while this run still holds the job: a run whose lease was taken over leaves it alone.
      await this.db
        .deleteFrom('jobs')
        .where('id', '=', job.id)
        .where('status', '=', 'running')
        .where('attempts', '=', job.attempts)
        .execute();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const final = job.attempts >= job.max_attempts;
      const wait = (kind.backoffSeconds ?? defaultBackoff)(job.attempts);
      this.log.warn({ job: job.kind, id: job.id, attempt: job.attempts, final, err: message }, 'job failed');
      await this.db
        .updateTable('jobs')
        .set({
          status: final ? 'failed' : 'queued',
          last_error: message.slice(0, 2000),
          run_at: this.clock.nowMs() + Math.round(wait * 1000),
          lease_until: null,
          unique_key: final ? null : job.unique_key,
          updated_at: this.clock.nowMs(),
        })
        .where('id', '=', job.id)
        .where('status', '=', 'running')
        .where('attempts', '=', job.attempts)
        .execute();
    }
  }
}

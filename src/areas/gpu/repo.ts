import type { Kysely } from 'kysely';
import type { Store } from '../../kernel/store/store.js';
import type { AnyDb } from '../../kernel/store/unit-of-work.js';
import type { GpuJobsTable, GpuTables, GpuWorkersTable } from './migrations.js';

export class GpuRepo {
  constructor(readonly db: Kysely<GpuTables>) {}
  static of(store: Store) {
    return new GpuRepo(store.typed<GpuTables>());
  }
  static over(tx: AnyDb) {
    return new GpuRepo(tx);
  }

  async insertJob(row: GpuJobsTable) {
    await this.db.insertInto('gpu_jobs').values(row).execute();
  }
  async countActiveOfKey(keyId: string): Promise<number> {
    const r = await this.db
      .selectFrom('gpu_jobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('key_id', '=', keyId)
      .where('status', 'in', ['queued', 'processing'])
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }
  jobs(customerId: string, limit: number) {
    return this.db
      .selectFrom('gpu_jobs')
      .selectAll()
      .where('customer_id', '=', customerId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }
  job(customerId: string, id: string) {
    return this.db
      .selectFrom('gpu_jobs')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
  jobById(id: string) {
    return this.db.selectFrom('gpu_jobs').selectAll().where('id', '=', id).executeTakeFirst();
  }
  async updateJob(id: string, patch: Partial<GpuJobsTable>, whenStatus?: string[]): Promise<boolean> {
    let q = this.db.updateTable('gpu_jobs').set(patch).where('id', '=', id);
    if (whenStatus) q = q.where('status', 'in', whenStatus);
    const r = await q.executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }
  /** The oldest queued job of these engines (locked for the unit on PostgreSQL, skipping locked ones). */
  async nextQueued(engines: string[], postgres: boolean) {
    let q = this.db
      .selectFrom('gpu_jobs')
      .selectAll()
      .where('status', '=', 'queued')
      .where('engine', 'in', engines)
      .orderBy('created_at')
      .orderBy('id')
      .limit(1);
    if (postgres) q = q.forUpdate().skipLocked();
    return q.executeTakeFirst();
  }
  /** Processing jobs whose lease ran out, or that passed their time limit. */
  expiredLeases(now: number) {
    return this.db
      .selectFrom('gpu_jobs')
      .selectAll()
      .where('status', '=', 'processing')
      .where('lease_until', '<', now)
      .execute();
  }
  processing() {
    return this.db.selectFrom('gpu_jobs').selectAll().where('status', '=', 'processing').execute();
  }

  async insertWorker(row: GpuWorkersTable) {
    await this.db.insertInto('gpu_workers').values(row).execute();
  }
  workers() {
    return this.db
      .selectFrom('gpu_workers')
      .selectAll()
      .where('revoked_at', 'is', null)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }
  workerByHash(hash: string) {
    return this.db
      .selectFrom('gpu_workers')
      .selectAll()
      .where('token_hash', '=', hash)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
  }
  /** Records a worker's call and the engines it serves now; the issued `engines` stay as they are. */
  async touchWorker(id: string, at: number, serving: string[]) {
    await this.db
      .updateTable('gpu_workers')
      .set({ last_seen_at: at, serving_engines: JSON.stringify(serving) })
      .where('id', '=', id)
      .execute();
  }
  async revokeWorker(id: string, at: number): Promise<boolean> {
    const r = await this.db
      .updateTable('gpu_workers')
      .set({ revoked_at: at })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }
}

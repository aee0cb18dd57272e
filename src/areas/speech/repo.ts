import type { Kysely } from 'kysely';
import type { Store } from '../../kernel/store/store.js';
import type { AnyDb } from '../../kernel/store/unit-of-work.js';
import type { SpeechArtifactsTable, SpeechJobsTable, SpeechTables } from './migrations.js';

export class SpeechRepo {
  constructor(readonly db: Kysely<SpeechTables>) {}
  static of(store: Store) {
    return new SpeechRepo(store.typed<SpeechTables>());
  }
  static over(tx: AnyDb) {
    return new SpeechRepo(tx);
  }

  async insertJob(row: SpeechJobsTable) {
    await this.db.insertInto('speech_jobs').values(row).execute();
  }
  job(customerId: string, id: string) {
    return this.db
      .selectFrom('speech_jobs')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
  jobById(id: string) {
    return this.db.selectFrom('speech_jobs').selectAll().where('id', '=', id).executeTakeFirst();
  }
  async page(customerId: string, status: string | undefined, limit: number, offset: number) {
    let q = this.db.selectFrom('speech_jobs').where('customer_id', '=', customerId);
    if (status) q = q.where('status', '=', status);
    const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst();
    const jobs = await q
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
    return { jobs, total: Number(total?.n ?? 0) };
  }
  /** Moves the job only from one of `from`; true when it moved. */
  async transition(id: string, from: string[], patch: Partial<SpeechJobsTable>): Promise<boolean> {
    const r = await this.db
      .updateTable('speech_jobs')
      .set(patch)
      .where('id', '=', id)
      .where('status', 'in', from)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }
  async deleteJob(id: string) {
    await this.db.deleteFrom('speech_artifacts').where('job_id', '=', id).execute();
    await this.db.deleteFrom('speech_jobs').where('id', '=', id).execute();
  }
  artifacts(jobId: string) {
    return this.db
      .selectFrom('speech_artifacts')
      .selectAll()
      .where('job_id', '=', jobId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }
  artifact(id: string) {
    return this.db.selectFrom('speech_artifacts').selectAll().where('id', '=', id).executeTakeFirst();
  }
  artifactOf(jobId: string, format: string) {
    return this.db
      .selectFrom('speech_artifacts')
      .selectAll()
      .where('job_id', '=', jobId)
      .where('format', '=', format)
      .executeTakeFirst();
  }
  async insertArtifact(row: SpeechArtifactsTable) {
    await this.db.insertInto('speech_artifacts').values(row).execute();
  }
}

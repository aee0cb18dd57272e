import type { Kysely } from 'kysely';
import type { Store } from '../../../kernel/store/store.js';
import type { AnyDb } from '../../../kernel/store/unit-of-work.js';
import type { VpsBackupPoliciesTable, VpsBackupsTable, VpsTables } from '../migrations.js';

/** Queries of server backups and backup policies. */
export class BackupRepo {
  constructor(readonly db: Kysely<VpsTables>) {}
  static of(store: Store) {
    return new BackupRepo(store.typed<VpsTables>());
  }
  static over(tx: AnyDb) {
    return new BackupRepo(tx);
  }

  backups(serverId: string, kind?: string) {
    let q = this.db.selectFrom('vps_backups').selectAll().where('server_id', '=', serverId);
    if (kind) q = q.where('kind', '=', kind);
    return q.orderBy('created_at').orderBy('id').execute();
  }
  backup(serverId: string, id: string) {
    return this.db
      .selectFrom('vps_backups')
      .selectAll()
      .where('server_id', '=', serverId)
      .where('id', '=', id)
      .executeTakeFirst();
  }
  byId(id: string) {
    return this.db.selectFrom('vps_backups').selectAll().where('id', '=', id).executeTakeFirst();
  }
  async insertBackup(row: VpsBackupsTable) {
    await this.db.insertInto('vps_backups').values(row).execute();
  }
  /** How many rows changed: 0 when the backup (or its server) was deleted meanwhile. */
  async updateBackup(id: string, patch: Partial<VpsBackupsTable>): Promise<number> {
    const r = await this.db.updateTable('vps_backups').set(patch).where('id', '=', id).executeTakeFirst();
    return Number(r.numUpdatedRows);
  }
  async deleteBackup(id: string) {
    await this.db.deleteFrom('vps_backups').where('id', '=', id).execute();
  }
  /** Backups still `creating` whose taker has been silent since `before` (wall-clock ms). */
  async failAbandoned(before: number, error: string): Promise<number> {
    const r = await this.db
      .updateTable('vps_backups')
      .set({ status: 'failed', error, heartbeat_at: null })
      .where('status', '=', 'creating')
      .where('heartbeat_at', '<', before)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  policy(serverId: string) {
    return this.db
      .selectFrom('vps_backup_policies')
      .selectAll()
      .where('server_id', '=', serverId)
      .executeTakeFirst();
  }
  async putPolicy(row: VpsBackupPoliciesTable) {
    const { server_id: _, ...changes } = row;
    await this.db
      .insertInto('vps_backup_policies')
      .values(row)
      .onConflict((oc) => oc.column('server_id').doUpdateSet(changes))
      .execute();
  }
  /** Moves an enabled policy's next run on; only those two columns, so a PUT meanwhile stands. */
  async markRun(serverId: string, nextRunAt: number, lastRunAt: number) {
    await this.db
      .updateTable('vps_backup_policies')
      .set({ next_run_at: nextRunAt, last_run_at: lastRunAt })
      .where('server_id', '=', serverId)
      .where('enabled', '=', 1)
      .execute();
  }
  duePolicies(now: number) {
    return this.db
      .selectFrom('vps_backup_policies')
      .selectAll()
      .where('enabled', '=', 1)
      .where('next_run_at', '<=', now)
      .orderBy('next_run_at')
      .execute();
  }
}

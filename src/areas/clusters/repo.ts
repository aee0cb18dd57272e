import type { Kysely } from 'kysely';
import type { Store } from '../../kernel/store/store.js';
import type { AnyDb } from '../../kernel/store/unit-of-work.js';
import type {
  ClusterTables,
  K8sBackupPoliciesTable,
  K8sBackupsTable,
  K8sClusterCasTable,
  K8sClustersTable,
  K8sHistoryTable,
  K8sIpsTable,
  K8sRestoresTable,
} from './migrations.js';

export class ClusterRepo {
  constructor(readonly db: Kysely<ClusterTables>) {}
  static of(store: Store) {
    return new ClusterRepo(store.typed<ClusterTables>());
  }
  static over(tx: AnyDb) {
    return new ClusterRepo(tx);
  }

  /** The account's clusters whose removal is not yet confirmed (`goneBefore`: removal confirmed by then). */
  present(customerId: string, goneBefore: number) {
    return this.db
      .selectFrom('k8s_clusters')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where((eb) =>
        eb.or([eb('delete_requested_at', 'is', null), eb('delete_requested_at', '>', goneBefore)]),
      )
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }
  async insert(row: K8sClustersTable) {
    await this.db.insertInto('k8s_clusters').values(row).execute();
  }
  async update(id: string, patch: Partial<K8sClustersTable>) {
    await this.db.updateTable('k8s_clusters').set(patch).where('id', '=', id).execute();
  }
  async record(row: K8sHistoryTable) {
    await this.db.insertInto('k8s_history').values(row).execute();
  }
  history(clusterId: string) {
    return this.db
      .selectFrom('k8s_history')
      .selectAll()
      .where('cluster_id', '=', clusterId)
      .orderBy('at')
      .orderBy('id')
      .execute();
  }

  // --- CA, addresses -----------------------------------------------------------------------------

  ca(clusterId: string) {
    return this.db
      .selectFrom('k8s_cluster_cas')
      .selectAll()
      .where('cluster_id', '=', clusterId)
      .executeTakeFirst();
  }
  async insertCa(row: K8sClusterCasTable) {
    await this.db.insertInto('k8s_cluster_cas').values(row).execute();
  }
  ipsOf(clusterIds: string[]) {
    if (clusterIds.length === 0) return Promise.resolve([] as K8sIpsTable[]);
    return this.db
      .selectFrom('k8s_ips')
      .selectAll()
      .where('cluster_id', 'in', clusterIds)
      .orderBy('allocated_at')
      .orderBy('id')
      .execute();
  }
  /** Floating addresses held by clusters whose removal is not confirmed (`goneBefore` as in `present`). */
  async addressesInUse(goneBefore: number): Promise<Set<string>> {
    const rows = await this.db
      .selectFrom('k8s_ips')
      .innerJoin('k8s_clusters', 'k8s_clusters.id', 'k8s_ips.cluster_id')
      .select('k8s_ips.address')
      .where((eb) =>
        eb.or([
          eb('k8s_clusters.delete_requested_at', 'is', null),
          eb('k8s_clusters.delete_requested_at', '>', goneBefore),
        ]),
      )
      .execute();
    return new Set(rows.map((r) => r.address));
  }
  async insertIp(row: K8sIpsTable) {
    await this.db.insertInto('k8s_ips').values(row).execute();
  }
  async setPtr(id: string, ptr: string | null) {
    await this.db.updateTable('k8s_ips').set({ ptr_record: ptr }).where('id', '=', id).execute();
  }
  async deleteIp(id: string) {
    await this.db.deleteFrom('k8s_ips').where('id', '=', id).execute();
  }

  // --- backups -----------------------------------------------------------------------------------

  policy(clusterId: string) {
    return this.db
      .selectFrom('k8s_backup_policies')
      .selectAll()
      .where('cluster_id', '=', clusterId)
      .executeTakeFirst();
  }
  async putPolicy(row: K8sBackupPoliciesTable) {
    const { cluster_id: _, ...rest } = row;
    await this.db
      .insertInto('k8s_backup_policies')
      .values(row)
      .onConflict((oc) => oc.column('cluster_id').doUpdateSet(rest))
      .execute();
  }
  duePolicies(now: number) {
    return this.db
      .selectFrom('k8s_backup_policies')
      .selectAll()
      .where('enabled', '=', 1)
      .where('next_run_at', '<=', now)
      .orderBy('next_run_at')
      .execute();
  }
  /** Backups not yet expired, oldest first. */
  backups(clusterId: string, now: number) {
    return this.db
      .selectFrom('k8s_backups')
      .selectAll()
      .where('cluster_id', '=', clusterId)
      .where('expires_at', '>', now)
      .orderBy('started_at')
      .orderBy('id')
      .execute();
  }
  backupNames(clusterId: string) {
    return this.db.selectFrom('k8s_backups').select('name').where('cluster_id', '=', clusterId).execute();
  }
  async insertBackup(row: K8sBackupsTable) {
    await this.db.insertInto('k8s_backups').values(row).execute();
  }
  expiredBackups(now: number, limit: number) {
    return this.db
      .selectFrom('k8s_backups')
      .selectAll()
      .where('expires_at', '<=', now)
      .orderBy('expires_at')
      .limit(limit)
      .execute();
  }
  /** Whether this call deleted it (another worker may have been first). */
  async deleteBackup(id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('k8s_backups').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
  lastRestore(clusterId: string) {
    return this.db
      .selectFrom('k8s_restores')
      .selectAll()
      .where('cluster_id', '=', clusterId)
      .orderBy('completed_at', 'desc')
      .limit(1)
      .executeTakeFirst();
  }
  /** The cluster's latest restores, newest first. */
  restores(clusterId: string, limit: number) {
    return this.db
      .selectFrom('k8s_restores')
      .selectAll()
      .where('cluster_id', '=', clusterId)
      .orderBy('started_at', 'desc')
      .limit(limit)
      .execute();
  }
  async insertRestore(row: K8sRestoresTable) {
    await this.db.insertInto('k8s_restores').values(row).execute();
  }
  clusterById(id: string) {
    return this.db.selectFrom('k8s_clusters').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The region's capacity mark, when the operator marked it out of capacity. */
  capacityOut(region: string) {
    return this.db.selectFrom('k8s_capacity').selectAll().where('region', '=', region).executeTakeFirst();
  }
}

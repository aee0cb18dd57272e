import type { Kysely } from 'kysely';
import type { Store } from '../../kernel/store/store.js';
import type { AnyDb } from '../../kernel/store/unit-of-work.js';
import type { ClusterTables, K8sClustersTable, K8sHistoryTable } from './migrations.js';

export class ClusterRepo {
  constructor(readonly db: Kysely<ClusterTables>) {}
  static of(store: Store) {
    return new ClusterRepo(store.typed<ClusterTables>());
  }
  static over(tx: AnyDb) {
    return new ClusterRepo(tx as Kysely<ClusterTables>);
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
}

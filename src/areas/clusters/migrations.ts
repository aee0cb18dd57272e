import type { Kysely, Migration } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
type AnyDb = Kysely<any>;

export interface K8sClustersTable {
  id: string;
  customer_id: string;
  name: string;
  technical_name: string;
  region: string;
  plan_code: string;
  version: string;
  /** Stored lifecycle: `provisioning` or `deleting`; steps and `running` derive from the clock. */
  status: string;
  api_ip_filter: string;
  network_cidr: string;
  /** JSON array of node pools (name, plan_code, count, labels, taints). */
  node_pools: string;
  ssh_key_ids: string;
  gateway_ip: string;
  created_at: number;
  delete_requested_at: number | null;
  /** The version an upgrade moves to, and when it started (a backup first, then the upgrade). */
  upgrade_to: string | null;
  upgrade_started_at: number | null;
}

export interface K8sHistoryTable {
  id: string;
  cluster_id: string;
  action: string;
  actor: string;
  details: string;
  at: number;
}

export interface ClusterTables {
  k8s_clusters: K8sClustersTable;
  k8s_history: K8sHistoryTable;
}

export const clusterMigrations: Record<string, Migration> = {
  '2026-11-25-0150-k8s-clusters': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('k8s_clusters')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('technical_name', 'text', (c) => c.notNull())
        .addColumn('region', 'text', (c) => c.notNull())
        .addColumn('plan_code', 'text', (c) => c.notNull())
        .addColumn('version', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('api_ip_filter', 'text', (c) => c.notNull())
        .addColumn('network_cidr', 'text', (c) => c.notNull())
        .addColumn('node_pools', 'text', (c) => c.notNull())
        .addColumn('ssh_key_ids', 'text', (c) => c.notNull())
        .addColumn('gateway_ip', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('delete_requested_at', 'bigint')
        .addColumn('upgrade_to', 'text')
        .addColumn('upgrade_started_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('k8s_clusters_customer')
        .on('k8s_clusters')
        .columns(['customer_id', 'name'])
        .execute();
      await db.schema
        .createTable('k8s_history')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('cluster_id', 'text', (c) => c.notNull().references('k8s_clusters.id').onDelete('cascade'))
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('details', 'text', (c) => c.notNull())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('k8s_history_cluster')
        .on('k8s_history')
        .columns(['cluster_id', 'at'])
        .execute();
    },
  },
};

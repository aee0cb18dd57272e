import type { ColumnDefinitionBuilder, Kysely, Migration } from 'kysely';

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
  /** Injected by the operator (simulated driver): `error`, `degraded` or `suspended`. */
  fault: string | null;
  /** `error` only: the provisioning step that fails. */
  fault_step: string | null;
  fault_message: string | null;
  fault_at: number | null;
}

/** A region the operator marked out of capacity: creates there answer 503 `capacity`. */
export interface K8sCapacityTable {
  region: string;
  message: string | null;
  updated_at: number;
}

export interface K8sHistoryTable {
  id: string;
  cluster_id: string;
  action: string;
  actor: string;
  details: string;
  at: number;
}

/** The cluster's CA: made at the first kubeconfig download, its key sealed with the data key. */
export interface K8sClusterCasTable {
  cluster_id: string;
  cert_pem: string;
  key_sealed: string;
  created_at: number;
}

/** Floating addresses (the gateway address lives on the cluster row). */
export interface K8sIpsTable {
  id: string;
  cluster_id: string;
  customer_id: string;
  address: string;
  ptr_record: string | null;
  allocated_at: number;
}

export interface K8sBackupPoliciesTable {
  cluster_id: string;
  enabled: number;
  schedule_cron: string;
  retention_days: number;
  include_volumes: number;
  /** JSON array, or null: every namespace the customer created. */
  namespaces: string | null;
  /** The next scheduled run (null while disabled). */
  next_run_at: number | null;
  updated_at: number;
}

export interface K8sBackupsTable {
  id: string;
  cluster_id: string;
  kind: string;
  name: string;
  namespaces: string | null;
  include_volumes: number;
  started_at: number;
  /** When the driver finishes it: `InProgress` before, `Completed` after. */
  completed_at: number;
  expires_at: number;
  items_count: number;
  error: string | null;
}

export interface K8sRestoresTable {
  id: string;
  cluster_id: string;
  backup_id: string;
  name: string;
  namespaces: string | null;
  started_at: number;
  completed_at: number;
}

export interface ClusterTables {
  k8s_clusters: K8sClustersTable;
  k8s_history: K8sHistoryTable;
  k8s_capacity: K8sCapacityTable;
  k8s_cluster_cas: K8sClusterCasTable;
  k8s_ips: K8sIpsTable;
  k8s_backup_policies: K8sBackupPoliciesTable;
  k8s_backups: K8sBackupsTable;
  k8s_restores: K8sRestoresTable;
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
  '2026-11-26-1100-k8s-access-ips-backups': {
    async up(db: AnyDb) {
      const cluster = (c: ColumnDefinitionBuilder) =>
        c.notNull().references('k8s_clusters.id').onDelete('cascade');
      await db.schema
        .createTable('k8s_cluster_cas')
        .addColumn('cluster_id', 'text', (c) => cluster(c).primaryKey())
        .addColumn('cert_pem', 'text', (c) => c.notNull())
        .addColumn('key_sealed', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('k8s_ips')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('cluster_id', 'text', cluster)
        .addColumn('customer_id', 'text', (c) => c.notNull())
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('ptr_record', 'text')
        .addColumn('allocated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('k8s_ips_cluster').on('k8s_ips').column('cluster_id').execute();
      await db.schema.createIndex('k8s_ips_address').on('k8s_ips').column('address').execute();
      await db.schema
        .createTable('k8s_backup_policies')
        .addColumn('cluster_id', 'text', (c) => cluster(c).primaryKey())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('schedule_cron', 'text', (c) => c.notNull())
        .addColumn('retention_days', 'integer', (c) => c.notNull())
        .addColumn('include_volumes', 'integer', (c) => c.notNull())
        .addColumn('namespaces', 'text')
        .addColumn('next_run_at', 'bigint')
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('k8s_backup_policies_due')
        .on('k8s_backup_policies')
        .column('next_run_at')
        .execute();
      await db.schema
        .createTable('k8s_backups')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('cluster_id', 'text', cluster)
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('namespaces', 'text')
        .addColumn('include_volumes', 'integer', (c) => c.notNull())
        .addColumn('started_at', 'bigint', (c) => c.notNull())
        .addColumn('completed_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('items_count', 'integer', (c) => c.notNull())
        .addColumn('error', 'text')
        .execute();
      await db.schema
        .createIndex('k8s_backups_cluster')
        .on('k8s_backups')
        .columns(['cluster_id', 'started_at'])
        .execute();
      await db.schema.createIndex('k8s_backups_expiry').on('k8s_backups').column('expires_at').execute();
      await db.schema
        .createTable('k8s_restores')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('cluster_id', 'text', cluster)
        .addColumn('backup_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('namespaces', 'text')
        .addColumn('started_at', 'bigint', (c) => c.notNull())
        .addColumn('completed_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('k8s_restores_cluster')
        .on('k8s_restores')
        .columns(['cluster_id', 'started_at'])
        .execute();
    },
  },
  '2026-11-26-1300-k8s-faults': {
    async up(db: AnyDb) {
      await db.schema.alterTable('k8s_clusters').addColumn('fault', 'text').execute();
      await db.schema.alterTable('k8s_clusters').addColumn('fault_step', 'text').execute();
      await db.schema.alterTable('k8s_clusters').addColumn('fault_message', 'text').execute();
      await db.schema.alterTable('k8s_clusters').addColumn('fault_at', 'bigint').execute();
      await db.schema
        .createTable('k8s_capacity')
        .addColumn('region', 'text', (c) => c.primaryKey())
        .addColumn('message', 'text')
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
};

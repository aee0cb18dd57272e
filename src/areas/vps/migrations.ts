import type { Kysely, Migration } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
type AnyDb = Kysely<any>;

export type VpsStatus = 'provisioning' | 'running' | 'stopped' | 'starting' | 'stopping';

export interface VpsServersTable {
  id: string;
  customer_id: string;
  hostname: string;
  display_name: string | null;
  /** The state as of the last write; `next_status` replaces it once `settles_at` has passed. */
  status: string;
  next_status: string | null;
  settles_at: number | null;
  /** What the server is doing while it moves: provision, start, stop or reboot. */
  action: string | null;
  plan_code: string;
  vcpus: number;
  region: string;
  os_template: string;
  ipv4_address: string | null;
  ipv6_address: string | null;
  running_since: number | null;
  created_at: number;
}

export interface VpsServerKeysTable {
  server_id: string;
  customer_id: string;
  fingerprint: string;
  public_key: string;
}

export interface VpsSnapshotsTable {
  server_id: string;
  name: string;
  description: string | null;
  size_bytes: number;
  created_at: number;
}

export type BackupKind = 'manual' | 'automatic';
export type BackupStatus = 'creating' | 'available' | 'failed';

export interface VpsBackupsTable {
  id: string;
  server_id: string;
  customer_id: string;
  name: string;
  description: string | null;
  kind: string;
  status: string;
  /** Key of the archive in the internal `vps-backups` bucket: `<customer>/<server>/<backup>.tar.gz`. */
  storage_key: string;
  size_bytes: number | null;
  sha256: string | null;
  os_template: string;
  error: string | null;
  created_at: number;
  completed_at: number | null;
  /** Wall-clock ms the taking process last said it was alive; null once it is done. */
  heartbeat_at: number | null;
}

export interface VpsBackupPoliciesTable {
  server_id: string;
  customer_id: string;
  enabled: number;
  frequency: string;
  hour_utc: number;
  day_of_week: number;
  retention_count: number;
  next_run_at: number | null;
  last_run_at: number | null;
  updated_at: number;
}

export interface VpsTables {
  vps_servers: VpsServersTable;
  vps_server_keys: VpsServerKeysTable;
  vps_snapshots: VpsSnapshotsTable;
  vps_backups: VpsBackupsTable;
  vps_backup_policies: VpsBackupPoliciesTable;
}

export const vpsMigrations: Record<string, Migration> = {
  '2026-11-25-0150-vps-servers': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('vps_servers')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('hostname', 'text', (c) => c.notNull())
        .addColumn('display_name', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('next_status', 'text')
        .addColumn('settles_at', 'bigint')
        .addColumn('action', 'text')
        .addColumn('plan_code', 'text', (c) => c.notNull())
        .addColumn('vcpus', 'integer', (c) => c.notNull())
        .addColumn('region', 'text', (c) => c.notNull())
        .addColumn('os_template', 'text', (c) => c.notNull())
        .addColumn('ipv4_address', 'text')
        .addColumn('ipv6_address', 'text')
        .addColumn('running_since', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('vps_servers_customer')
        .on('vps_servers')
        .columns(['customer_id', 'created_at'])
        .execute();
      await db.schema
        .createTable('vps_server_keys')
        .addColumn('server_id', 'text', (c) => c.notNull().references('vps_servers.id').onDelete('cascade'))
        .addColumn('customer_id', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('public_key', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('vps_server_keys_pk', ['server_id', 'fingerprint'])
        .execute();
      await db.schema
        .createIndex('vps_server_keys_customer')
        .on('vps_server_keys')
        .columns(['customer_id', 'fingerprint'])
        .execute();
      await db.schema
        .createTable('vps_snapshots')
        .addColumn('server_id', 'text', (c) => c.notNull().references('vps_servers.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('size_bytes', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('vps_snapshots_pk', ['server_id', 'name'])
        .execute();
    },
  },
  '2026-11-26-1100-vps-backups': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('vps_backups')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('server_id', 'text', (c) => c.notNull().references('vps_servers.id').onDelete('cascade'))
        .addColumn('customer_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('storage_key', 'text', (c) => c.notNull())
        .addColumn('size_bytes', 'bigint')
        .addColumn('sha256', 'text')
        .addColumn('os_template', 'text', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('completed_at', 'bigint')
        .addColumn('heartbeat_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('vps_backups_server')
        .on('vps_backups')
        .columns(['server_id', 'created_at'])
        .execute();
      await db.schema
        .createTable('vps_backup_policies')
        .addColumn('server_id', 'text', (c) =>
          c.primaryKey().references('vps_servers.id').onDelete('cascade'),
        )
        .addColumn('customer_id', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('frequency', 'text', (c) => c.notNull())
        .addColumn('hour_utc', 'integer', (c) => c.notNull())
        .addColumn('day_of_week', 'integer', (c) => c.notNull())
        .addColumn('retention_count', 'integer', (c) => c.notNull())
        .addColumn('next_run_at', 'bigint')
        .addColumn('last_run_at', 'bigint')
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('vps_backup_policies_due')
        .on('vps_backup_policies')
        .columns(['enabled', 'next_run_at'])
        .execute();
    },
  },
};

import type { Kysely, Migration } from 'kysely';
import type { SnapshotStoreKind } from './snapshots/snapshot-store.js';

export const databasesMigrations: Record<string, Migration> = {
  '2026-11-22-0600-databases': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('databases')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('db_type', 'text', (c) => c.notNull())
        .addColumn('friendly_name', 'text', (c) => c.notNull())
        .addColumn('technical_name', 'text', (c) => c.notNull())
        .addColumn('username', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('tier', 'text', (c) => c.notNull())
        .addColumn('connection_limit', 'integer', (c) => c.notNull())
        .addColumn('password_changed_at', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('databases_type_technical', ['db_type', 'technical_name'])
        .execute();
      await db.schema
        .createIndex('databases_customer')
        .on('databases')
        .columns(['customer_id', 'created_at'])
        .execute();
      await db.schema
        .createTable('database_firewall_rules')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('database_id', 'text', (c) => c.notNull().references('databases.id').onDelete('cascade'))
        .addColumn('customer_id', 'text', (c) => c.notNull())
        .addColumn('ip_address', 'text', (c) => c.notNull())
        .addColumn('cidr', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('database_firewall_rules_cidr', ['database_id', 'cidr'])
        .execute();
      await db.schema
        .createTable('database_snapshots')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('database_id', 'text', (c) => c.notNull().references('databases.id').onDelete('cascade'))
        .addColumn('customer_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('format', 'text', (c) => c.notNull())
        .addColumn('storage_key', 'text', (c) => c.notNull())
        .addColumn('sealed_key', 'text')
        .addColumn('size_bytes', 'bigint')
        .addColumn('error', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('completed_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('database_snapshots_database')
        .on('database_snapshots')
        .columns(['database_id', 'created_at'])
        .execute();
      await db.schema
        .createTable('database_backup_policies')
        .addColumn('database_id', 'text', (c) =>
          c.primaryKey().references('databases.id').onDelete('cascade'),
        )
        .addColumn('customer_id', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('frequency', 'text', (c) => c.notNull())
        .addColumn('hour_utc', 'integer', (c) => c.notNull())
        .addColumn('retention_count', 'integer', (c) => c.notNull())
        .addColumn('next_run_at', 'bigint')
        .addColumn('last_run_at', 'bigint')
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  '2026-11-22-0610-database-snapshot-store': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      // Snapshots taken before this stayed as files in the data dir ('fs'); new ones go into
      // Fjord's object storage ('objects'). Each row says where its dump is.
      await db.schema
        .alterTable('database_snapshots')
        .addColumn('store', 'text', (c) => c.notNull().defaultTo('fs'))
        .execute();
    },
  },
  '2026-11-25-0100-database-writes-blocked': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      // Since when writes are blocked because the database is over its plan's size (null: not).
      await db.schema.alterTable('databases').addColumn('writes_blocked_at', 'bigint').execute();
    },
  },
  '2026-11-22-0611-database-snapshot-heartbeat': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      // Wall-clock ms of the last sign of life of the process taking a `creating` snapshot.
      await db.schema.alterTable('database_snapshots').addColumn('heartbeat_at', 'bigint').execute();
    },
  },
};

export interface DatabasesTable {
  id: string;
  customer_id: string;
  db_type: string;
  friendly_name: string;
  technical_name: string;
  username: string;
  description: string | null;
  tier: string;
  connection_limit: number;
  password_changed_at: number;
  created_at: number;
  /** Since when writes are blocked for the size quota; null (or absent on insert) when not. */
  writes_blocked_at?: number | null;
}

export interface FirewallRulesTable {
  id: string;
  database_id: string;
  customer_id: string;
  ip_address: string;
  cidr: string;
  description: string | null;
  created_at: number;
}

export interface SnapshotsTable {
  id: string;
  database_id: string;
  customer_id: string;
  name: string;
  description: string | null;
  kind: 'manual' | 'automatic';
  status: 'creating' | 'available' | 'failed';
  format: string;
  storage_key: string;
  /** Which snapshot store holds the dump under `storage_key`. */
  store: SnapshotStoreKind;
  /** Encrypted-tier snapshots: the per-snapshot key, IV and tag, sealed with the data key. */
  sealed_key: string | null;
  size_bytes: number | null;
  error: string | null;
  created_at: number;
  completed_at: number | null;
  /**
   * While `creating`: wall-clock ms (not the emulator's clock — it measures whether a process is
   * alive) of the taking process's last beat. A row whose beats stopped was cut off by a crash.
   */
  heartbeat_at: number | null;
}

export interface BackupPoliciesTable {
  database_id: string;
  customer_id: string;
  enabled: number;
  frequency: 'hourly' | 'daily' | 'weekly';
  hour_utc: number;
  retention_count: number;
  next_run_at: number | null;
  last_run_at: number | null;
  updated_at: number;
}

export interface DatabasesTables {
  databases: DatabasesTable;
  database_firewall_rules: FirewallRulesTable;
  database_snapshots: SnapshotsTable;
  database_backup_policies: BackupPoliciesTable;
}

import type { Kysely, Migration } from 'kysely';

export const dynMigrations: Record<string, Migration> = {
  '2026-11-22-0710-dyn-hostnames': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('dyn_hostnames')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('hostname', 'text', (c) => c.notNull().unique())
        .addColumn('zone_id', 'text', (c) => c.notNull())
        .addColumn('zone_kind', 'text', (c) => c.notNull())
        .addColumn('ipv4', 'text')
        .addColumn('ipv6', 'text')
        .addColumn('offline', 'integer', (c) => c.notNull())
        .addColumn('active_source_id', 'text')
        .addColumn('generation', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('last_update_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('dyn_hostnames_customer')
        .on('dyn_hostnames')
        .columns(['customer_id'])
        .execute();
      await db.schema
        .createTable('dyn_credentials')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('hostname_id', 'text', (c) =>
          c.notNull().references('dyn_hostnames.id').onDelete('cascade'),
        )
        .addColumn('customer_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('username', 'text', (c) => c.notNull().unique())
        .addColumn('secret_hash', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('dyn_credentials_hostname')
        .on('dyn_credentials')
        .columns(['hostname_id', 'created_at'])
        .execute();
      await db.schema
        .createTable('dyn_updates')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('hostname_id', 'text', (c) =>
          c.notNull().references('dyn_hostnames.id').onDelete('cascade'),
        )
        .addColumn('credential_id', 'text')
        .addColumn('result', 'text', (c) => c.notNull())
        .addColumn('ipv4', 'text')
        .addColumn('ipv6', 'text')
        .addColumn('offline', 'integer', (c) => c.notNull())
        .addColumn('client_ip', 'text')
        .addColumn('user_agent', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('dyn_updates_hostname')
        .on('dyn_updates')
        .columns(['hostname_id', 'created_at'])
        .execute();
    },
  },
};

export interface DynHostnamesTable {
  id: string;
  customer_id: string;
  hostname: string;
  zone_id: string;
  zone_kind: 'platform' | 'customer';
  ipv4: string | null;
  ipv6: string | null;
  offline: number;
  /** The one credential allowed to update this hostname (null: none until one is activated). */
  active_source_id: string | null;
  /** Raised by every change of the addresses: DNS is written from the row until it is stable. */
  generation: number;
  last_update_at: number | null;
  created_at: number;
}

export interface DynCredentialsTable {
  id: string;
  hostname_id: string;
  customer_id: string;
  kind: 'router_token' | 'updater';
  username: string;
  secret_hash: string;
  description: string | null;
  created_at: number;
  last_used_at: number | null;
}

export interface DynUpdatesTable {
  id: string;
  hostname_id: string;
  credential_id: string | null;
  result: string;
  ipv4: string | null;
  ipv6: string | null;
  offline: number;
  client_ip: string | null;
  user_agent: string | null;
  created_at: number;
}

export interface DynTables {
  dyn_hostnames: DynHostnamesTable;
  dyn_credentials: DynCredentialsTable;
  dyn_updates: DynUpdatesTable;
}

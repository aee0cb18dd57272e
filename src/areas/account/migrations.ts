import type { Kysely, Migration } from 'kysely';

export const accountMigrations: Record<string, Migration> = {
  '2026-11-22-0100-account-ssh-keys': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('ssh_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('public_key', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('key_type', 'text', (c) => c.notNull())
        .addColumn('bits', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('ssh_keys_customer_fingerprint', ['customer_id', 'fingerprint'])
        .execute();
    },
  },
};

export interface SshKeysTable {
  id: string;
  customer_id: string;
  name: string;
  public_key: string;
  fingerprint: string;
  key_type: string;
  bits: number;
  created_at: number;
}

export interface AccountTables {
  ssh_keys: SshKeysTable;
}

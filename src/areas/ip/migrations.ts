import type { Kysely, Migration } from 'kysely';

export const ipMigrations: Record<string, Migration> = {
  '2026-11-25-0200-ip-intelligence': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('ip_subscriptions')
        .addColumn('customer_id', 'text', (c) =>
          c.primaryKey().references('customers.id').onDelete('cascade'),
        )
        .addColumn('tier', 'text', (c) => c.notNull())
        .addColumn('started_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('ip_usage')
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('ip_usage_pk', ['customer_id', 'day'])
        .execute();
      await db.schema
        .createTable('ip_reporters')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('domain', 'text', (c) => c.notNull())
        .addColumn('contact_email', 'text', (c) => c.notNull())
        .addColumn('verification_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('verified_at', 'bigint')
        .addUniqueConstraint('ip_reporters_domain', ['customer_id', 'domain'])
        .execute();
      await db.schema
        .createTable('ip_reports')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('ip', 'text', (c) => c.notNull())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('reporter_id', 'text')
        .addColumn('verified', 'integer', (c) => c.notNull())
        .addColumn('categories', 'text', (c) => c.notNull())
        .addColumn('comment', 'text')
        .addColumn('country', 'text')
        .addColumn('asn', 'bigint')
        .addColumn('reported_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('ip_reports_ip').on('ip_reports').columns(['ip', 'reported_at']).execute();
      await db.schema.createIndex('ip_reports_time').on('ip_reports').column('reported_at').execute();
      await db.schema
        .createIndex('ip_reports_asn')
        .on('ip_reports')
        .columns(['asn', 'reported_at'])
        .execute();
      await db.schema
        .createIndex('ip_reports_country')
        .on('ip_reports')
        .columns(['country', 'reported_at'])
        .execute();
      await db.schema
        .createTable('ip_delists')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('ip', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('proof', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('decided_at', 'bigint')
        .execute();
      // Reports made before an address was delisted no longer count toward it.
      await db.schema
        .createTable('ip_delisted')
        .addColumn('ip', 'text', (c) => c.primaryKey())
        .addColumn('delisted_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
};

export interface IpTables {
  ip_subscriptions: { customer_id: string; tier: string; started_at: number; updated_at: number };
  ip_usage: { customer_id: string; day: string; count: number };
  ip_reporters: {
    id: string;
    customer_id: string;
    domain: string;
    contact_email: string;
    verification_id: string;
    status: 'pending' | 'verified';
    created_at: number;
    verified_at: number | null;
  };
  ip_reports: {
    id: string;
    ip: string;
    customer_id: string;
    reporter_id: string | null;
    verified: number;
    /** JSON array of category numbers. */
    categories: string;
    comment: string | null;
    country: string | null;
    asn: number | null;
    reported_at: number;
  };
  ip_delists: {
    id: string;
    customer_id: string;
    ip: string;
    reason: string;
    status: 'delisted' | 'pending_review' | 'rejected';
    proof: string | null;
    created_at: number;
    decided_at: number | null;
  };
  ip_delisted: { ip: string; delisted_at: number };
}

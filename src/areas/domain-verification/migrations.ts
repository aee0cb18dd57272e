import { type Kysely, type Migration, sql } from 'kysely';

export const domainVerificationMigrations: Record<string, Migration> = {
  '2026-11-22-0700-domain-verifications': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('domain_verifications')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('domain', 'text', (c) => c.notNull())
        .addColumn('purpose', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('method', 'text', (c) => c.notNull())
        .addColumn('token', 'text')
        .addColumn('internal_zone_id', 'text')
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('missed_rechecks', 'integer', (c) => c.notNull())
        .addColumn('verified_at', 'bigint')
        .addColumn('last_checked_at', 'bigint')
        .addColumn('failed_reason', 'text')
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('deleted_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('domain_verifications_customer')
        .on('domain_verifications')
        .columns(['customer_id', 'created_at'])
        .execute();
      // One live record per customer, domain and purpose, whatever races the API sees.
      await sql`CREATE UNIQUE INDEX domain_verifications_live ON domain_verifications (customer_id, domain, purpose)
        WHERE deleted_at IS NULL AND status <> 'revoked'`.execute(db);
      await db.schema
        .createIndex('domain_verifications_status')
        .on('domain_verifications')
        .columns(['status', 'last_checked_at'])
        .execute();
      await db.schema
        .createTable('domain_verification_history')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('verification_id', 'text', (c) =>
          c.notNull().references('domain_verifications.id').onDelete('cascade'),
        )
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('previous_status', 'text')
        .addColumn('new_status', 'text', (c) => c.notNull())
        .addColumn('records_found', 'integer', (c) => c.notNull())
        .addColumn('actual_values', 'text', (c) => c.notNull())
        .addColumn('performed_by', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('domain_verification_history_record')
        .on('domain_verification_history')
        .columns(['verification_id', 'created_at'])
        .execute();
    },
  },
};

export interface DomainVerificationsTable {
  id: string;
  customer_id: string;
  domain: string;
  purpose: string;
  status: string;
  method: string;
  token: string | null;
  internal_zone_id: string | null;
  attempts: number;
  /** Daily re-checks in a row that no longer found the record of a verified domain. */
  missed_rechecks: number;
  verified_at: number | null;
  last_checked_at: number | null;
  failed_reason: string | null;
  metadata: string;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

export interface DomainVerificationHistoryTable {
  id: string;
  verification_id: string;
  event_type: string;
  previous_status: string | null;
  new_status: string;
  records_found: number;
  actual_values: string;
  performed_by: string;
  created_at: number;
}

export interface DomainVerificationTables {
  domain_verifications: DomainVerificationsTable;
  domain_verification_history: DomainVerificationHistoryTable;
}

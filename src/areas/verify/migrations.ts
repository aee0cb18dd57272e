import type { Kysely, Migration } from 'kysely';

export const verifyMigrations: Record<string, Migration> = {
  '2026-11-22-0530-verify-sessions': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('verify_sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('recipient', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        // SHA-256 of salt ‖ code, hex; the code itself is never stored.
        .addColumn('code_hash', 'text', (c) => c.notNull())
        .addColumn('code_salt', 'text', (c) => c.notNull())
        .addColumn('code_length', 'integer', (c) => c.notNull())
        .addColumn('locale', 'text', (c) => c.notNull())
        .addColumn('client_reference', 'text')
        .addColumn('metadata', 'text')
        .addColumn('client_ip', 'text')
        .addColumn('ip_risk', 'text')
        .addColumn('attempt_count', 'integer', (c) => c.notNull())
        .addColumn('max_attempts', 'integer', (c) => c.notNull())
        .addColumn('error_message', 'text')
        .addColumn('error_code', 'text')
        .addColumn('sender', 'text')
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('delivery_ref', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('delivered_at', 'bigint')
        .addColumn('verified_at', 'bigint')
        .addColumn('ended_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('verify_sessions_customer_created')
        .on('verify_sessions')
        .columns(['customer_id', 'created_at'])
        .execute();
      // Billing: one row per charge (the session fee, then the delivery cost), in minor units.
      await db.schema
        .createTable('verify_charges')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('item', 'text', (c) => c.notNull())
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('quantity', 'integer', (c) => c.notNull())
        .addColumn('amount_minor', 'integer', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('verify_charges_session_item', ['session_id', 'item'])
        .execute();
      await db.schema
        .createIndex('verify_charges_customer_created')
        .on('verify_charges')
        .columns(['customer_id', 'created_at'])
        .execute();
    },
  },
};

export type SessionStatus = 'pending' | 'delivered' | 'verified' | 'failed' | 'expired' | 'cancelled';
export type Channel = 'sms' | 'voice' | 'email';

export interface VerifySessionsTable {
  id: string;
  customer_id: string;
  channel: Channel;
  recipient: string;
  status: SessionStatus;
  code_hash: string;
  code_salt: string;
  code_length: number;
  locale: string;
  client_reference: string | null;
  metadata: string | null;
  client_ip: string | null;
  ip_risk: string | null;
  attempt_count: number;
  max_attempts: number;
  error_message: string | null;
  /** The check error a failed delivery answers with (`voice_no_answer`, `voice_busy`). */
  error_code: string | null;
  /** Sender profile id (sms), caller id (voice) or From address (email). */
  sender: string | null;
  /** Currency the session is billed in. */
  currency: string;
  /** SMS message id, call id or SMTP message id. */
  delivery_ref: string | null;
  created_at: number;
  expires_at: number;
  delivered_at: number | null;
  verified_at: number | null;
  ended_at: number | null;
}

export interface VerifyChargesTable {
  id: string;
  customer_id: string;
  session_id: string;
  item: 'session' | 'delivery';
  channel: Channel;
  quantity: number;
  amount_minor: number;
  currency: string;
  created_at: number;
}

export interface VerifyTables {
  verify_sessions: VerifySessionsTable;
  verify_charges: VerifyChargesTable;
}

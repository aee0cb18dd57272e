import { type Kysely, type Migration, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
type AnyDb = Kysely<any>;

export const smsMigrations: Record<string, Migration> = {
  // At most one default sender profile per customer, enforced by the store: two profiles created
  // at once cannot both become the default. Rows written before it are repaired first: the oldest
  // default stays; a customer with profiles but no default gets its oldest one.
  '2026-11-22-0554-sms-one-default-profile': {
    async up(db: AnyDb) {
      await sql`UPDATE sms_sender_profiles SET is_default = 0 WHERE is_default = 1 AND id <> (
        SELECT p.id FROM sms_sender_profiles p
        WHERE p.customer_id = sms_sender_profiles.customer_id AND p.is_default = 1
        ORDER BY p.created_at, p.id LIMIT 1)`.execute(db);
      await sql`UPDATE sms_sender_profiles SET is_default = 1 WHERE id = (
        SELECT p.id FROM sms_sender_profiles p
        WHERE p.customer_id = sms_sender_profiles.customer_id
        ORDER BY p.created_at, p.id LIMIT 1)
        AND NOT EXISTS (SELECT 1 FROM sms_sender_profiles d
          WHERE d.customer_id = sms_sender_profiles.customer_id AND d.is_default = 1)`.execute(db);
      await db.schema
        .createIndex('sms_sender_profiles_one_default')
        .on('sms_sender_profiles')
        .column('customer_id')
        .unique()
        .where(sql.ref('is_default'), '=', 1)
        .execute();
    },
  },
  '2026-11-22-0550-sms-sender-profiles': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('sms_sender_profiles')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('sender_id', 'text', (c) => c.notNull())
        .addColumn('is_default', 'integer', (c) => c.notNull())
        .addColumn('allow_reply', 'integer', (c) => c.notNull())
        .addColumn('is_custom_sender', 'integer', (c) => c.notNull())
        .addColumn('brand_confirmation', 'integer', (c) => c.notNull())
        .addColumn('approval_status', 'text', (c) => c.notNull())
        .addColumn('review_note', 'text')
        .addColumn('monthly_price', 'real', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('reviewed_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('sms_sender_profiles_customer')
        .on('sms_sender_profiles')
        .columns(['customer_id', 'created_at'])
        .execute();
    },
  },
  '2026-11-22-0551-sms-messages': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('sms_messages')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('batch_id', 'text', (c) => c.notNull())
        .addColumn('direction', 'text', (c) => c.notNull())
        .addColumn('message_type', 'text', (c) => c.notNull())
        .addColumn('from_number', 'text', (c) => c.notNull())
        .addColumn('to_number', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('encoding', 'text', (c) => c.notNull())
        .addColumn('units_count', 'integer', (c) => c.notNull())
        .addColumn('customer_ref', 'text')
        .addColumn('callback_url', 'text')
        .addColumn('allow_reply', 'integer', (c) => c.notNull())
        .addColumn('sender_profile_id', 'text')
        .addColumn('contact_id', 'text')
        .addColumn('keyword_id', 'text')
        .addColumn('related_message_id', 'text')
        .addColumn('error_message', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('scheduled_at', 'bigint')
        .addColumn('sent_at', 'bigint')
        .addColumn('delivered_at', 'bigint')
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('sms_messages_customer_created')
        .on('sms_messages')
        .columns(['customer_id', 'created_at'])
        .execute();
      // Replies are matched to the last message sent to the number they come from.
      await db.schema
        .createIndex('sms_messages_to_created')
        .on('sms_messages')
        .columns(['to_number', 'created_at'])
        .execute();
    },
  },
  '2026-11-22-0552-sms-parts': {
    async up(db: AnyDb) {
      // One row per submitted part: delivery receipts name the SMSC's id of a part.
      await db.schema
        .createTable('sms_parts')
        .addColumn('smsc_message_id', 'text', (c) => c.primaryKey())
        .addColumn('message_id', 'text', (c) => c.notNull().references('sms_messages.id').onDelete('cascade'))
        .addColumn('part_number', 'integer', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('submitted_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sms_parts_message').on('sms_parts').column('message_id').execute();
    },
  },
  '2026-11-22-0553-sms-keywords': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('sms_keywords')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        // Upper case: keywords are case-insensitive and unique on the shared number.
        .addColumn('keyword', 'text', (c) => c.notNull().unique())
        .addColumn('description', 'text')
        .addColumn('is_active', 'integer', (c) => c.notNull())
        .addColumn('webhook_url', 'text')
        .addColumn('auto_reply_enabled', 'integer', (c) => c.notNull())
        .addColumn('auto_reply_message', 'text')
        .addColumn('messages_received', 'integer', (c) => c.notNull())
        .addColumn('last_message_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('sms_keywords_customer')
        .on('sms_keywords')
        .columns(['customer_id', 'created_at'])
        .execute();
    },
  },
};

export type ApprovalStatus = 'pending' | 'approved' | 'rejected';
export type Direction = 'OUTBOUND' | 'INBOUND';
/** ALERT: a notification another area sends (IoT alarms). */
export type MessageType = 'PLAIN' | 'REPLY' | 'VERIFY' | 'ALERT';
export type MessageStatus =
  | 'QUEUED'
  | 'SCHEDULED'
  | 'SENDING'
  | 'SENT'
  | 'DELIVERED'
  | 'FAILED'
  | 'CANCELLED'
  | 'RECEIVED';

export interface SenderProfilesTable {
  id: string;
  customer_id: string;
  name: string;
  sender_id: string;
  is_default: number;
  allow_reply: number;
  is_custom_sender: number;
  brand_confirmation: number;
  approval_status: ApprovalStatus;
  review_note: string | null;
  monthly_price: number;
  created_at: number;
  reviewed_at: number | null;
}

export interface MessagesTable {
  id: string;
  customer_id: string;
  batch_id: string;
  direction: Direction;
  message_type: MessageType;
  from_number: string;
  to_number: string;
  body: string;
  status: MessageStatus;
  encoding: string;
  units_count: number;
  customer_ref: string | null;
  callback_url: string | null;
  allow_reply: number;
  sender_profile_id: string | null;
  contact_id: string | null;
  keyword_id: string | null;
  related_message_id: string | null;
  error_message: string | null;
  created_at: number;
  scheduled_at: number | null;
  sent_at: number | null;
  delivered_at: number | null;
  updated_at: number;
}

export interface PartsTable {
  smsc_message_id: string;
  message_id: string;
  part_number: number;
  state: 'SUBMITTED' | 'DELIVERED' | 'FAILED';
  error: string | null;
  submitted_at: number;
}

export interface KeywordsTable {
  id: string;
  customer_id: string;
  keyword: string;
  description: string | null;
  is_active: number;
  webhook_url: string | null;
  auto_reply_enabled: number;
  auto_reply_message: string | null;
  messages_received: number;
  last_message_at: number | null;
  created_at: number;
}

export interface SmsTables {
  sms_sender_profiles: SenderProfilesTable;
  sms_messages: MessagesTable;
  sms_parts: PartsTable;
  sms_keywords: KeywordsTable;
}

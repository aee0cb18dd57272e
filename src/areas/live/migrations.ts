import type { Kysely, Migration } from 'kysely';

export interface LiveEventsTable {
  id: string;
  customer_id: string;
  slug: string;
  name: string;
  description: string | null;
  status: string;
  scheduled_start_at: number | null;
  scheduled_end_at: number | null;
  actual_start_at: number | null;
  actual_end_at: number | null;
  timezone: string;
  visibility_mode: string;
  /** scrypt hash of the viewer password (never the password). */
  password_hash: string | null;
  record_enabled: number;
  replay_enabled: number;
  rehearsal_enabled: number;
  embed_enabled: number;
  auto_start_on_ingest: number;
  max_bitrate_kbps: number;
  retention_days: number;
  /** SHA-256 of the stream key: the ingest looks events up by it, the key itself is not kept. */
  stream_key_hash: string;
  /** The encoder connection receiving now (null: none). */
  ingest_session_id: string | null;
  ingest_started_at: number | null;
  /** The latest connection's session: its HLS stays playable after the encoder leaves. */
  last_session_id: string | null;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

export interface LiveTables {
  live_events: LiveEventsTable;
}

export const liveMigrations: Record<string, Migration> = {
  '2026-11-24-2200-live-events': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('live_events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('slug', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('scheduled_start_at', 'bigint')
        .addColumn('scheduled_end_at', 'bigint')
        .addColumn('actual_start_at', 'bigint')
        .addColumn('actual_end_at', 'bigint')
        .addColumn('timezone', 'text', (c) => c.notNull())
        .addColumn('visibility_mode', 'text', (c) => c.notNull())
        .addColumn('password_hash', 'text')
        .addColumn('record_enabled', 'integer', (c) => c.notNull())
        .addColumn('replay_enabled', 'integer', (c) => c.notNull())
        .addColumn('rehearsal_enabled', 'integer', (c) => c.notNull())
        .addColumn('embed_enabled', 'integer', (c) => c.notNull())
        .addColumn('auto_start_on_ingest', 'integer', (c) => c.notNull())
        .addColumn('max_bitrate_kbps', 'integer', (c) => c.notNull())
        .addColumn('retention_days', 'integer', (c) => c.notNull())
        .addColumn('stream_key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('ingest_session_id', 'text')
        .addColumn('ingest_started_at', 'bigint')
        .addColumn('last_session_id', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('deleted_at', 'bigint')
        .execute();
      // Watch addresses (`/watch/{slug}`) carry no customer, so a slug is unique across Fjord
      // (which makes it unique per customer too), deleted events included: an old address never
      // shows someone else's event.
      await db.schema.createIndex('live_events_slug').on('live_events').column('slug').unique().execute();
      await db.schema
        .createIndex('live_events_customer_created')
        .on('live_events')
        .columns(['customer_id', 'created_at', 'id'])
        .execute();
    },
  },
};

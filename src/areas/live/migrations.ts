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
  /** The stream key's first characters, to tell keys apart (the key itself is not kept). */
  stream_key_prefix: string | null;
  stream_key_rotated_at: number | null;
  /** How long a live event waits for a dropped encoder (null: events made before it existed, 60). */
  reconnect_window_seconds: number | null;
  /** When the encoder of a live event dropped; cleared when one connects again. */
  disconnected_at: number | null;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

/** A watch token of a `token` event: only its hash is kept. */
export interface LiveWatchTokensTable {
  id: string;
  event_id: string;
  customer_id: string;
  name: string | null;
  token_hash: string;
  token_prefix: string;
  expires_at: number | null;
  max_uses: number | null;
  use_count: number;
  last_used_at: number | null;
  created_at: number;
}

/** An access grant (`ag_…`) issued by verify-password or verify-token: only its hash is kept. */
export interface LiveAccessGrantsTable {
  id: string;
  grant_hash: string;
  event_id: string;
  /** `password` or `token`. */
  kind: string;
  token_id: string | null;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
  /** Until when a consumed grant lets its viewer fetch the HLS. */
  playback_until: number | null;
}

/** A failed verify-password or verify-token: the log the attempt limit counts. */
export interface LiveAccessFailuresTable {
  id: string;
  event_id: string;
  kind: string;
  /** Keyed hash of the viewer's address (never the address). */
  client: string;
  at: number;
}

/** One encoder connection. */
export interface LiveIngestSessionsTable {
  id: string;
  event_id: string;
  customer_id: string;
  started_at: number;
  ended_at: number | null;
  end_reason: string | null;
  bytes_received: number;
  /** JSON: what ffmpeg reports of the stream (codecs, size, bitrate, frame rate, keyframes). */
  metrics: string | null;
  last_frame_at: number | null;
  updated_at: number;
}

/** A recording: the HLS of one encoder connection of a live event, kept after it ends. */
export interface LiveRecordingsTable {
  id: string;
  event_id: string;
  customer_id: string;
  session_id: string;
  status: string;
  duration_ms: number;
  size_bytes: number;
  segment_count: number;
  started_at: number;
  ended_at: number;
  expires_at: number;
  created_at: number;
  /** The recording's MP4 in the internal bucket `live-recordings`; null when it is kept as HLS only. */
  object_key: string | null;
}

/** Viewers of an event, one row per viewer (a keyed hash, or the access grant's id). */
export interface LiveViewersTable {
  event_id: string;
  viewer: string;
  first_at: number;
  last_at: number;
  segments: number;
  bytes: number;
  watched_ms: number;
}

/** Per-event counters that are not sums over viewers. */
export interface LiveStatsTable {
  event_id: string;
  /** Random key of the viewer hashes of this event. */
  viewer_salt: string;
  peak_viewers: number;
  peak_at: number | null;
  playlist_requests: number;
}

export interface LiveTables {
  live_events: LiveEventsTable;
  live_watch_tokens: LiveWatchTokensTable;
  live_access_grants: LiveAccessGrantsTable;
  live_access_failures: LiveAccessFailuresTable;
  live_ingest_sessions: LiveIngestSessionsTable;
  live_recordings: LiveRecordingsTable;
  live_viewers: LiveViewersTable;
  live_stats: LiveStatsTable;
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
  '2026-11-26-1100-live-access-and-media': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      await db.schema.alterTable('live_events').addColumn('stream_key_prefix', 'text').execute();
      await db.schema.alterTable('live_events').addColumn('stream_key_rotated_at', 'bigint').execute();
      await db.schema
        .createTable('live_watch_tokens')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('customer_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text')
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('token_prefix', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint')
        .addColumn('max_uses', 'integer')
        .addColumn('use_count', 'integer', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('live_watch_tokens_event')
        .on('live_watch_tokens')
        .columns(['event_id', 'created_at'])
        .execute();
      await db.schema
        .createTable('live_access_grants')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('grant_hash', 'text', (c) => c.notNull().unique())
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('token_id', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('consumed_at', 'bigint')
        .addColumn('playback_until', 'bigint')
        .execute();
      await db.schema
        .createIndex('live_access_grants_event')
        .on('live_access_grants')
        .columns(['event_id', 'expires_at'])
        .execute();
      await db.schema
        .createTable('live_access_failures')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('client', 'text', (c) => c.notNull())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('live_access_failures_client')
        .on('live_access_failures')
        .columns(['event_id', 'client', 'at'])
        .execute();
      await db.schema
        .createTable('live_ingest_sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('customer_id', 'text', (c) => c.notNull())
        .addColumn('started_at', 'bigint', (c) => c.notNull())
        .addColumn('ended_at', 'bigint')
        .addColumn('end_reason', 'text')
        .addColumn('bytes_received', 'bigint', (c) => c.notNull())
        .addColumn('metrics', 'text')
        .addColumn('last_frame_at', 'bigint')
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('live_ingest_sessions_event')
        .on('live_ingest_sessions')
        .columns(['event_id', 'started_at'])
        .execute();
      await db.schema
        .createTable('live_recordings')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('customer_id', 'text', (c) => c.notNull())
        .addColumn('session_id', 'text', (c) => c.notNull().unique())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('duration_ms', 'bigint', (c) => c.notNull())
        .addColumn('size_bytes', 'bigint', (c) => c.notNull())
        .addColumn('segment_count', 'integer', (c) => c.notNull())
        .addColumn('started_at', 'bigint', (c) => c.notNull())
        .addColumn('ended_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('live_recordings_event')
        .on('live_recordings')
        .columns(['event_id', 'started_at'])
        .execute();
      await db.schema
        .createIndex('live_recordings_expiry')
        .on('live_recordings')
        .column('expires_at')
        .execute();
      await db.schema
        .createTable('live_viewers')
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('viewer', 'text', (c) => c.notNull())
        .addColumn('first_at', 'bigint', (c) => c.notNull())
        .addColumn('last_at', 'bigint', (c) => c.notNull())
        .addColumn('segments', 'integer', (c) => c.notNull())
        .addColumn('bytes', 'bigint', (c) => c.notNull())
        .addColumn('watched_ms', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('live_viewers_pk', ['event_id', 'viewer'])
        .execute();
      await db.schema
        .createTable('live_stats')
        .addColumn('event_id', 'text', (c) => c.primaryKey())
        .addColumn('viewer_salt', 'text', (c) => c.notNull())
        .addColumn('peak_viewers', 'integer', (c) => c.notNull())
        .addColumn('peak_at', 'bigint')
        .addColumn('playlist_requests', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  '2026-11-26-1300-live-reconnect-window': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      await db.schema.alterTable('live_events').addColumn('reconnect_window_seconds', 'integer').execute();
      await db.schema.alterTable('live_events').addColumn('disconnected_at', 'bigint').execute();
    },
  },
  '2026-11-26-1500-live-recording-mp4': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      await db.schema.alterTable('live_recordings').addColumn('object_key', 'text').execute();
    },
  },
};

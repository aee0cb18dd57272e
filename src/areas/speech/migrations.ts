import type { Kysely, Migration } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
type AnyDb = Kysely<any>;

export type SpeechStatus = 'created' | 'queued' | 'processing' | 'ready' | 'failed' | 'expired';

export interface SpeechJobsTable {
  id: string;
  customer_id: string;
  status: string;
  /** As asked (`auto` or ISO 639-1) until processed, then as recognised. */
  language: string;
  original_filename: string;
  content_type: string;
  file_size_bytes: number;
  audio_duration_sec: number | null;
  processing_time_ms: number | null;
  /** Minutes of audio billed: every started minute counts. */
  billed_minutes: number | null;
  error_message: string | null;
  /** JSON array of segments, once ready. */
  segments: string | null;
  created_at: number;
  completed_at: number | null;
}

export interface SpeechArtifactsTable {
  id: string;
  job_id: string;
  customer_id: string;
  format: string;
  size_bytes: number;
  created_at: number;
}

export interface SpeechTables {
  speech_jobs: SpeechJobsTable;
  speech_artifacts: SpeechArtifactsTable;
}

export const speechMigrations: Record<string, Migration> = {
  '2026-11-25-0430-speech-jobs': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('speech_jobs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('language', 'text', (c) => c.notNull())
        .addColumn('original_filename', 'text', (c) => c.notNull())
        .addColumn('content_type', 'text', (c) => c.notNull())
        .addColumn('file_size_bytes', 'bigint', (c) => c.notNull())
        .addColumn('audio_duration_sec', 'real')
        .addColumn('processing_time_ms', 'integer')
        .addColumn('billed_minutes', 'integer')
        .addColumn('error_message', 'text')
        .addColumn('segments', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('completed_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('speech_jobs_customer')
        .on('speech_jobs')
        .columns(['customer_id', 'created_at'])
        .execute();
      await db.schema
        .createTable('speech_artifacts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('job_id', 'text', (c) => c.notNull().references('speech_jobs.id').onDelete('cascade'))
        .addColumn('customer_id', 'text', (c) => c.notNull())
        .addColumn('format', 'text', (c) => c.notNull())
        .addColumn('size_bytes', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      // One artifact per format per job: a second export of the same format finds the first.
      await db.schema
        .createIndex('speech_artifacts_job_format')
        .on('speech_artifacts')
        .columns(['job_id', 'format'])
        .unique()
        .execute();
    },
  },
};

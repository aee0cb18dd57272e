import type { Kysely, Migration } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
type AnyDb = Kysely<any>;

export type JobStatus = 'queued' | 'processing' | 'completed' | 'failed' | 'cancelled';

export interface GpuJobsTable {
  id: string;
  customer_id: string;
  /** The API key (or PAT) that created it: the concurrency limit is per key. */
  key_id: string;
  type: string;
  engine: string;
  preset: string | null;
  inputs: string;
  webhook_url: string | null;
  status: string;
  progress: number;
  /** JSON array of output names stored for the job. */
  outputs: string;
  currency: string;
  estimated_cost: number;
  actual_cost: number | null;
  error_message: string | null;
  worker_id: string | null;
  lease_until: number | null;
  attempts: number;
  cancel_requested: number;
  created_at: number;
  started_at: number | null;
  completed_at: number | null;
}

export interface GpuWorkersTable {
  id: string;
  name: string;
  token_hash: string;
  /** JSON array of the engines the operator issued the token for; a worker never changes it. */
  engines: string;
  /** JSON array of the engines the worker asked for at its last lease (a subset of `engines`). */
  serving_engines: string | null;
  last_seen_at: number | null;
  created_at: number;
  revoked_at: number | null;
}

export interface GpuTables {
  gpu_jobs: GpuJobsTable;
  gpu_workers: GpuWorkersTable;
}

export const gpuMigrations: Record<string, Migration> = {
  '2026-11-24-2140-gpu-jobs-and-workers': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('gpu_jobs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('key_id', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('engine', 'text', (c) => c.notNull())
        .addColumn('preset', 'text')
        .addColumn('inputs', 'text', (c) => c.notNull())
        .addColumn('webhook_url', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('progress', 'integer', (c) => c.notNull())
        .addColumn('outputs', 'text', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('estimated_cost', 'real', (c) => c.notNull())
        .addColumn('actual_cost', 'real')
        .addColumn('error_message', 'text')
        .addColumn('worker_id', 'text')
        .addColumn('lease_until', 'bigint')
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('cancel_requested', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('started_at', 'bigint')
        .addColumn('completed_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('gpu_jobs_customer')
        .on('gpu_jobs')
        .columns(['customer_id', 'created_at'])
        .execute();
      await db.schema
        .createIndex('gpu_jobs_queue')
        .on('gpu_jobs')
        .columns(['status', 'engine', 'created_at'])
        .execute();
      await db.schema.createIndex('gpu_jobs_key').on('gpu_jobs').columns(['key_id', 'status']).execute();
      await db.schema
        .createTable('gpu_workers')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('engines', 'text', (c) => c.notNull())
        .addColumn('last_seen_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('revoked_at', 'bigint')
        .execute();
    },
  },
  // Leases used to overwrite `engines` with whatever the worker sent; what it serves now has a column of its own.
  '2026-11-29-0420-gpu-worker-serving-engines': {
    async up(db: AnyDb) {
      await db.schema.alterTable('gpu_workers').addColumn('serving_engines', 'text').execute();
    },
  },
};

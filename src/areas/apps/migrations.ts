import type { Kysely, Migration } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
type AnyDb = Kysely<any>;

export interface AppsAppsTable {
  id: string;
  customer_id: string;
  name: string;
  region: string;
  /** The first label of the app's host: `<name>-<account short id>`. */
  host_label: string;
  /** The revision that takes the traffic; null until one is healthy. */
  serving_revision_id: string | null;
  /** The revision being deployed; traffic moves to it once it is healthy. */
  pending_revision_id: string | null;
  /** When the serving revision took the traffic (the idle timer runs from here at the latest). */
  traffic_moved_at: number | null;
  /** The last request (or wake) through the ingress. */
  last_request_at: number | null;
  /** When the last cold start began. */
  woke_at: number | null;
  suspended_at: number | null;
  /**
   * The app's slot of host user ids: its containers' root is host id `APP_IDS_BASE + slot × 65536`
   * (drivers/podman-userns.ts). Unique, kept for the app's life, so its volumes keep their owner.
   */
  id_slot: number | null;
  created_at: number;
  updated_at: number;
}

export type RevisionStatus = 'deploying' | 'ready' | 'failed';

export interface AppsRevisionsTable {
  id: string;
  app_id: string;
  customer_id: string;
  number: number;
  image: string;
  /** JSON arrays, or null for the image's own. */
  command: string | null;
  args: string | null;
  port: number;
  /** JSON object of plain variables. */
  env: string;
  /** Sealed JSON object of secret variables (kernel SecretBox); null when there are none. */
  secrets_sealed: string | null;
  /** JSON array of the secrets' names. */
  secret_names: string;
  plan_code: string;
  concurrency: number;
  min_instances: number;
  max_instances: number;
  idle_timeout_seconds: number;
  /** JSON object: path, interval_seconds, timeout_seconds, failure_threshold. */
  health_check: string;
  /** The state as of the last write; `next_status` replaces it once `settles_at` has passed. */
  status: string;
  next_status: string | null;
  settles_at: number | null;
  /** Why the revision failed (or will fail once it settles). */
  failure_reason: string | null;
  created_at: number;
  ready_at: number | null;
  failed_at: number | null;
  /** The image upload the revision's image was loaded from; null for a registry reference. */
  image_upload_id: string | null;
}

export interface AppsImageUploadsTable {
  id: string;
  customer_id: string;
  /** The most bytes the presigned URL accepts. */
  max_bytes: number;
  /** `awaiting_upload` until the archive is found in storage, then `uploaded`. */
  status: string;
  expires_at: number;
  uploaded_at: number | null;
  created_at: number;
}

export interface AppsVolumesTable {
  id: string;
  customer_id: string;
  app_id: string;
  name: string;
  size_gb: number;
  mount_path: string;
  /** The snapshot it was restored from, if any. */
  source_snapshot_id: string | null;
  created_at: number;
}

export interface AppsVolumeSnapshotsTable {
  id: string;
  customer_id: string;
  volume_id: string;
  app_id: string;
  /** `creating`, `ready` or `failed`. */
  status: string;
  size_bytes: number | null;
  error: string | null;
  created_at: number;
  ready_at: number | null;
}

export interface AppsDomainsTable {
  id: string;
  customer_id: string;
  app_id: string;
  host_name: string;
  /** `pending` until the name is proven and points at the app, then `active`. */
  status: string;
  status_message: string;
  certificate_status: string;
  certificate_error: string | null;
  cert_pem: string | null;
  /** The certificate's private key, sealed with the data key. */
  key_sealed: string | null;
  cert_issued_at: number | null;
  cert_expires_at: number | null;
  checked_at: number | null;
  created_at: number;
}

export interface AppsLocalCaTable {
  id: string;
  cert_pem: string;
  key_sealed: string;
  created_at: number;
}

/** An ACME HTTP-01 challenge being validated: any process's ingress answers it. */
export interface AppsAcmeChallengesTable {
  token: string;
  key_authorization: string;
  created_at: number;
}

export interface AppsTables {
  apps_acme_challenges: AppsAcmeChallengesTable;
  apps_domains: AppsDomainsTable;
  apps_local_ca: AppsLocalCaTable;
  apps_apps: AppsAppsTable;
  apps_revisions: AppsRevisionsTable;
  apps_image_uploads: AppsImageUploadsTable;
  apps_volumes: AppsVolumesTable;
  apps_volume_snapshots: AppsVolumeSnapshotsTable;
}

export const appsMigrations: Record<string, Migration> = {
  '2026-11-26-1130-apps': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('apps_apps')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('region', 'text', (c) => c.notNull())
        .addColumn('host_label', 'text', (c) => c.notNull().unique())
        .addColumn('serving_revision_id', 'text')
        .addColumn('pending_revision_id', 'text')
        .addColumn('traffic_moved_at', 'bigint')
        .addColumn('last_request_at', 'bigint')
        .addColumn('woke_at', 'bigint')
        .addColumn('suspended_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('apps_apps_customer_name', ['customer_id', 'name'])
        .execute();
      await db.schema
        .createTable('apps_revisions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'text', (c) => c.notNull().references('apps_apps.id').onDelete('cascade'))
        .addColumn('customer_id', 'text', (c) => c.notNull())
        .addColumn('number', 'integer', (c) => c.notNull())
        .addColumn('image', 'text', (c) => c.notNull())
        .addColumn('command', 'text')
        .addColumn('args', 'text')
        .addColumn('port', 'integer', (c) => c.notNull())
        .addColumn('env', 'text', (c) => c.notNull())
        .addColumn('secrets_sealed', 'text')
        .addColumn('secret_names', 'text', (c) => c.notNull())
        .addColumn('plan_code', 'text', (c) => c.notNull())
        .addColumn('concurrency', 'integer', (c) => c.notNull())
        .addColumn('min_instances', 'integer', (c) => c.notNull())
        .addColumn('max_instances', 'integer', (c) => c.notNull())
        .addColumn('idle_timeout_seconds', 'integer', (c) => c.notNull())
        .addColumn('health_check', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('next_status', 'text')
        .addColumn('settles_at', 'bigint')
        .addColumn('failure_reason', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('ready_at', 'bigint')
        .addColumn('failed_at', 'bigint')
        .addUniqueConstraint('apps_revisions_app_number', ['app_id', 'number'])
        .execute();
    },
  },
  '2026-11-26-1400-apps-images-volumes': {
    async up(db: AnyDb) {
      await db.schema.alterTable('apps_revisions').addColumn('image_upload_id', 'text').execute();
      await db.schema
        .createTable('apps_image_uploads')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('max_bytes', 'bigint', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('uploaded_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('apps_volumes')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('app_id', 'text', (c) => c.notNull().references('apps_apps.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('size_gb', 'integer', (c) => c.notNull())
        .addColumn('mount_path', 'text', (c) => c.notNull())
        .addColumn('source_snapshot_id', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('apps_volumes_app_name', ['app_id', 'name'])
        .execute();
      await db.schema
        .createTable('apps_volume_snapshots')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('volume_id', 'text', (c) => c.notNull())
        .addColumn('app_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('size_bytes', 'bigint')
        .addColumn('error', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('ready_at', 'bigint')
        .execute();
    },
  },
  '2026-11-26-1500-apps-domains': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('apps_domains')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('app_id', 'text', (c) => c.notNull().references('apps_apps.id').onDelete('cascade'))
        .addColumn('host_name', 'text', (c) => c.notNull().unique())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('status_message', 'text', (c) => c.notNull())
        .addColumn('certificate_status', 'text', (c) => c.notNull())
        .addColumn('certificate_error', 'text')
        .addColumn('cert_pem', 'text')
        .addColumn('key_sealed', 'text')
        .addColumn('cert_issued_at', 'bigint')
        .addColumn('cert_expires_at', 'bigint')
        .addColumn('checked_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('apps_local_ca')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('cert_pem', 'text', (c) => c.notNull())
        .addColumn('key_sealed', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  '2026-11-26-1900-apps-acme-challenges': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('apps_acme_challenges')
        .addColumn('token', 'text', (c) => c.primaryKey())
        .addColumn('key_authorization', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  // Containers run in a user namespace of the app's own: each app holds a slot of host ids.
  '2026-11-29-0430-apps-id-slots': {
    async up(db: AnyDb) {
      await db.schema.alterTable('apps_apps').addColumn('id_slot', 'integer').execute();
      await db.schema.createIndex('apps_apps_id_slot').on('apps_apps').column('id_slot').unique().execute();
    },
  },
};

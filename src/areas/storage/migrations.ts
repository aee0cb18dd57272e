import type { Kysely, Migration } from 'kysely';

export const storageMigrations: Record<string, Migration> = {
  '2026-11-22-0300-storage-buckets': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      // A deleted bucket keeps its row (deleted_at set), so the unique name stays taken for good.
      await db.schema
        .createTable('storage_buckets')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .addColumn('region', 'text', (c) => c.notNull())
        .addColumn('tier', 'text', (c) => c.notNull())
        .addColumn('is_public', 'integer', (c) => c.notNull())
        .addColumn('versioning', 'text', (c) => c.notNull())
        .addColumn('object_lock_enabled', 'integer', (c) => c.notNull())
        .addColumn('cors', 'text')
        .addColumn('lifecycle', 'text')
        .addColumn('created_via', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('deleted_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('storage_buckets_customer')
        .on('storage_buckets')
        .columns(['customer_id', 'deleted_at', 'created_at'])
        .execute();
      // Bucket keys (bucket_id set) and account keys (bucket_id null, grants in `grants`).
      await db.schema
        .createTable('storage_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('bucket_id', 'text', (c) => c.references('storage_buckets.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('access_key_id', 'text', (c) => c.notNull().unique())
        .addColumn('secret_sealed', 'text', (c) => c.notNull())
        .addColumn('full_access', 'integer', (c) => c.notNull())
        .addColumn('actions', 'text', (c) => c.notNull())
        .addColumn('grants', 'text', (c) => c.notNull())
        .addColumn('is_default', 'integer', (c) => c.notNull())
        .addColumn('is_legacy', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('storage_keys_bucket')
        .on('storage_keys')
        .columns(['bucket_id', 'created_at'])
        .execute();
      await db.schema
        .createIndex('storage_keys_customer')
        .on('storage_keys')
        .columns(['customer_id', 'kind', 'created_at'])
        .execute();
    },
  },
  '2026-11-26-1131-storage-bucket-sse-lock': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      // S3 PutBucketEncryption and an object-lock bucket's default retention (JSON), null when unset.
      await db.schema.alterTable('storage_buckets').addColumn('default_encryption', 'text').execute();
      await db.schema.alterTable('storage_buckets').addColumn('object_lock_default', 'text').execute();
    },
  },
  '2026-11-26-1500-storage-bucket-access': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      // S3 ACL grants, object ownership, public access block and bucket policy; null when unset.
      for (const column of ['acl', 'object_ownership', 'public_access_block', 'policy'])
        await db.schema.alterTable('storage_buckets').addColumn(column, 'text').execute();
    },
  },
  '2026-11-26-1830-storage-kms-keys': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      // SSE-KMS keys per customer; every version's material sealed with the data key (JSON).
      await db.schema
        .createTable('storage_kms_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
        .addColumn('alias', 'text')
        .addColumn('description', 'text')
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('is_default', 'integer', (c) => c.notNull())
        .addColumn('versions', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('rotated_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('storage_kms_keys_customer')
        .on('storage_kms_keys')
        .columns(['customer_id', 'created_at'])
        .execute();
    },
  },
  '2026-11-26-2040-storage-kms-key-deletion': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      // When a key scheduled for deletion (state PendingDeletion) is destroyed, epoch ms; else null.
      await db.schema.alterTable('storage_kms_keys').addColumn('deletion_date', 'bigint').execute();
    },
  },
  '2026-11-29-0445-storage-bucket-tags': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      // S3 bucket tagging: JSON `{key: value}`, null when the bucket has no tag set.
      await db.schema.alterTable('storage_buckets').addColumn('tags', 'text').execute();
    },
  },
};

export interface StorageBucketsTable {
  id: string;
  customer_id: string;
  name: string;
  region: string;
  tier: string;
  is_public: number;
  versioning: string;
  object_lock_enabled: number;
  /** `AES256` when S3 PutBucketEncryption set it, else null. */
  default_encryption: string | null;
  /** JSON `ObjectLockDefault`, null when the bucket has no default retention. */
  object_lock_default: string | null;
  /**
   * The S3 ACL beyond the public READ of `is_public` (bucket-acl.ts): a JSON `AclGrant[]` of grants
   * beyond the owner's FULL_CONTROL, or `{v:2, owner, grants}` with the owner's own grants as sent.
   */
  acl: string | null;
  /** S3 object ownership; null is the default (`BucketOwnerEnforced`), `none` once deleted. */
  object_ownership: string | null;
  /** JSON `PublicAccessBlock`, null when the bucket has none (the operator's default applies). */
  public_access_block: string | null;
  /** The bucket policy as the client sent it (JSON text), null when none. */
  policy: string | null;
  /** JSON `CorsRule[]`, null when no CORS document is set. */
  cors: string | null;
  /** JSON `LifecycleRule[]`, null when none is set. */
  lifecycle: string | null;
  /** S3 bucket tagging: JSON `{key: value}`, null when no tag set is set. */
  tags?: string | null;
  /** `api` or `s3`. */
  created_via: string;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

export interface StorageKeysTable {
  id: string;
  customer_id: string;
  /** `bucket` or `account`. */
  kind: string;
  bucket_id: string | null;
  name: string;
  description: string | null;
  access_key_id: string;
  /** The secret key, sealed with the data key (SigV4 needs it back). */
  secret_sealed: string;
  full_access: number;
  /** JSON string[]: a bucket key's actions, or an account key's account-level actions. */
  actions: string;
  /** JSON `StoredGrant[]`: an account key's per-bucket grants ('[]' for bucket keys). Names are never reused, so grants name buckets. */
  grants: string;
  is_default: number;
  /** The account key `GET /v1/storage/credentials` hands out. */
  is_legacy: number;
  created_at: number;
  updated_at: number;
  last_used_at: number | null;
}

export interface StorageKmsKeysTable {
  /** A UUID, as AWS KMS key ids are. */
  id: string;
  customer_id: string;
  /** `alias/…`, unique per customer when set. */
  alias: string | null;
  description: string | null;
  /**
   * `Enabled`, `Disabled`, `PendingDeletion`, or `Deleted`: the material destroyed, the row kept so
   * objects sealed under the key are refused as such (never shown by the API).
   */
  state: string;
  /** The key S3 uses when a request names none (AWS's `aws/s3`); one per customer. */
  is_default: number;
  /** JSON `KmsKeyVersion[]`, oldest first; the last one wraps new data keys. */
  versions: string;
  created_at: number;
  updated_at: number;
  rotated_at: number | null;
  /** While `PendingDeletion`: when the material is destroyed (epoch ms). */
  deletion_date: number | null;
}

export interface StorageTables {
  storage_buckets: StorageBucketsTable;
  storage_keys: StorageKeysTable;
  storage_kms_keys: StorageKmsKeysTable;
}

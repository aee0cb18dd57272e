import { type Kysely, type Migration, PostgresAdapter, sql } from 'kysely';

/**
 * Tables of the S3 data plane. Keys sort byte-wise (UTF-8 binary order, as S3 lists them):
 * SQLite's default BINARY collation does that; on PostgreSQL the column is COLLATE "C".
 */
export const objectMigrations: Record<string, Migration> = {
  '2026-11-22-0350-storage-objects': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      const pg = db.getExecutor().adapter instanceof PostgresAdapter;
      const keyType = pg ? sql`text COLLATE "C"` : sql`text`;
      await db.schema
        .createTable('storage_objects')
        // UUIDv7: also the order of a key's versions
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('bucket_id', 'text', (c) => c.notNull())
        .addColumn('key', keyType, (c) => c.notNull())
        .addColumn('version_id', 'text', (c) => c.notNull())
        .addColumn('is_latest', 'integer', (c) => c.notNull())
        .addColumn('is_delete_marker', 'integer', (c) => c.notNull())
        .addColumn('size', 'bigint', (c) => c.notNull())
        .addColumn('etag', 'text', (c) => c.notNull())
        .addColumn('content_type', 'text')
        .addColumn('headers', 'text', (c) => c.notNull())
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('tags', 'text', (c) => c.notNull())
        .addColumn('checksum', 'text')
        .addColumn('blob', 'text', (c) => c.notNull())
        .addColumn('last_modified', 'bigint', (c) => c.notNull())
        .addColumn('noncurrent_since', 'bigint')
        .execute();
      // The listing index: current versions of a bucket in key order.
      await sql`CREATE UNIQUE INDEX storage_objects_latest ON storage_objects (bucket_id, key) WHERE is_latest = 1`.execute(
        db,
      );
      await db.schema
        .createIndex('storage_objects_versions')
        .on('storage_objects')
        .columns(['bucket_id', 'key', 'id'])
        .execute();
      await db.schema
        .createIndex('storage_objects_noncurrent')
        .on('storage_objects')
        .columns(['bucket_id', 'noncurrent_since'])
        .execute();

      await db.schema
        .createTable('storage_uploads')
        .addColumn('upload_id', 'text', (c) => c.primaryKey())
        .addColumn('bucket_id', 'text', (c) => c.notNull())
        .addColumn('key', keyType, (c) => c.notNull())
        .addColumn('content_type', 'text')
        .addColumn('headers', 'text', (c) => c.notNull())
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('tags', 'text', (c) => c.notNull())
        .addColumn('checksum_algorithm', 'text')
        .addColumn('initiated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('storage_uploads_key')
        .on('storage_uploads')
        .columns(['bucket_id', 'key', 'upload_id'])
        .execute();
      await db.schema
        .createTable('storage_upload_parts')
        .addColumn('upload_id', 'text', (c) => c.notNull())
        .addColumn('part_number', 'integer', (c) => c.notNull())
        .addColumn('size', 'bigint', (c) => c.notNull())
        .addColumn('etag', 'text', (c) => c.notNull())
        .addColumn('checksum', 'text')
        .addColumn('blob', 'text', (c) => c.notNull())
        .addColumn('last_modified', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('storage_upload_parts_pk', ['upload_id', 'part_number'])
        .execute();

      // Counters kept with every write, so usage never needs a scan.
      await db.schema
        .createTable('storage_usage')
        .addColumn('bucket_id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull())
        .addColumn('objects', 'bigint', (c) => c.notNull())
        .addColumn('bytes', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('storage_usage_customer')
        .on('storage_usage')
        .columns(['customer_id'])
        .execute();
    },
  },
  '2026-11-22-0351-storage-object-version-unique': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      // Two concurrent writers of a key's `null` version must collide (one retries), never both land.
      await db.schema
        .createIndex('storage_objects_version_unique')
        .on('storage_objects')
        .columns(['bucket_id', 'key', 'version_id'])
        .unique()
        .execute();
    },
  },
  '2026-11-25-0300-storage-bandwidth': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      // Bytes the S3 data plane sent for a customer's buckets, per UTC month (plan: bandwidth per month).
      await db.schema
        .createTable('storage_bandwidth')
        .addColumn('customer_id', 'text', (c) => c.notNull())
        .addColumn('month', 'text', (c) => c.notNull())
        .addColumn('bytes', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('storage_bandwidth_pk', ['customer_id', 'month'])
        .execute();
    },
  },
  '2026-11-25-0500-storage-completed-uploads': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      // Uploads completed in the last day, so a retried CompleteMultipartUpload gets the same answer.
      await db.schema
        .createTable('storage_completed_uploads')
        .addColumn('upload_id', 'text', (c) => c.primaryKey())
        .addColumn('bucket_id', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('parts', 'text', (c) => c.notNull())
        .addColumn('etag', 'text', (c) => c.notNull())
        .addColumn('version_id', 'text', (c) => c.notNull())
        .addColumn('completed_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  '2026-11-26-1130-storage-object-sse-lock': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      // Sealing (SSE-S3, SSE-C) and object lock, per version and per multipart upload.
      for (const table of ['storage_objects', 'storage_uploads']) {
        await db.schema.alterTable(table).addColumn('sse', 'text').execute();
        await db.schema.alterTable(table).addColumn('object_lock', 'text').execute();
      }
    },
  },
  '2026-11-26-1500-storage-object-acl': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      // An object's ACL grants (JSON `AclGrant[]`), per version and per multipart upload; null is private.
      for (const table of ['storage_objects', 'storage_uploads'])
        await db.schema.alterTable(table).addColumn('acl', 'text').execute();
    },
  },
  '2026-11-26-2100-storage-objects-no-noncurrent-index': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      // No query reads it (lifecycle walks versions by id), and every version written, replaced
      // or made noncurrent paid for keeping it: a fifth of each row's index work.
      await db.schema.dropIndex('storage_objects_noncurrent').ifExists().execute();
    },
  },
  '2026-11-26-2200-storage-object-class': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      // S3's storage class (a label: every class is on the same disk), per version and per
      // multipart upload; null is STANDARD, so existing rows need no rewrite.
      for (const table of ['storage_objects', 'storage_uploads'])
        await db.schema.alterTable(table).addColumn('storage_class', 'text').execute();
    },
  },
  '2026-11-27-0630-storage-upload-checksum-type': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      // How an upload's part checksums become the object's (COMPOSITE or FULL_OBJECT), and the
      // checksum a completed upload answered with, for a retried Complete. Null: no checksum.
      await db.schema.alterTable('storage_uploads').addColumn('checksum_type', 'text').execute();
      await db.schema.alterTable('storage_completed_uploads').addColumn('checksum', 'text').execute();
    },
  },
  '2026-11-29-0430-storage-upload-initiator': {
    // biome-ignore lint/suspicious/noExplicitAny: migrations are written against the raw schema
    async up(db: Kysely<any>) {
      // The account whose key started a multipart upload (S3's `Initiator`); null: the bucket's
      // owner, which every upload started before this column was.
      await db.schema.alterTable('storage_uploads').addColumn('initiator', 'text').execute();
    },
  },
};

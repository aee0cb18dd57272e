/** Row shapes of the data plane's tables (see migrations.ts). */
export interface ObjectRow {
  id: string;
  bucket_id: string;
  key: string;
  version_id: string;
  is_latest: number;
  is_delete_marker: number;
  size: number;
  etag: string;
  content_type: string | null;
  headers: string;
  metadata: string;
  tags: string;
  checksum: string | null;
  blob: string;
  last_modified: number;
  noncurrent_since: number | null;
  /** How the bytes are sealed at rest (sse.ts), null for plaintext. */
  sse: string | null;
  /** Retention and legal hold (lock.ts), null when nothing protects the version. */
  object_lock: string | null;
  /** The object's ACL (s3/object-acl.ts): null or `AclGrant[]` beyond the bucket owner's FULL_CONTROL, or `{v:2, owner, grants}`. */
  acl: string | null;
  /** S3's storage class, a label (storage-class.ts); null is STANDARD. */
  storage_class: string | null;
}

/** Every column of `storage_objects`, for statements written as text (kernel/store/compiled.ts). */
export const OBJECT_COLUMNS = [
  'id',
  'bucket_id',
  'key',
  'version_id',
  'is_latest',
  'is_delete_marker',
  'size',
  'etag',
  'content_type',
  'headers',
  'metadata',
  'tags',
  'checksum',
  'blob',
  'last_modified',
  'noncurrent_since',
  'sse',
  'object_lock',
  'acl',
  'storage_class',
] as const satisfies readonly (keyof ObjectRow)[];
// A column added to ObjectRow and not listed above fails to compile here.
const everyColumnListed: Exclude<keyof ObjectRow, (typeof OBJECT_COLUMNS)[number]> extends never
  ? true
  : never = true;
void everyColumnListed;

export interface UploadRow {
  upload_id: string;
  bucket_id: string;
  key: string;
  content_type: string | null;
  headers: string;
  metadata: string;
  tags: string;
  checksum_algorithm: string | null;
  /** COMPOSITE or FULL_OBJECT when `checksum_algorithm` is set (multipart-checksums.ts). */
  checksum_type: string | null;
  initiated_at: number;
  /** The sealing every part uses (sse.ts): one data key for the whole object. */
  sse: string | null;
  /** The lock the completed object gets. */
  object_lock: string | null;
  /** The ACL the completed object gets (same shapes as `ObjectRow.acl`). */
  acl: string | null;
  /** The storage class the completed object gets; null is STANDARD. */
  storage_class: string | null;
  /** The account whose key started the upload; null: the bucket's owner. */
  initiator: string | null;
}

export interface PartRow {
  upload_id: string;
  part_number: number;
  size: number;
  etag: string;
  checksum: string | null;
  blob: string;
  last_modified: number;
}

export interface UsageRow {
  bucket_id: string;
  customer_id: string;
  objects: number;
  bytes: number;
}

/** A multipart upload completed recently: a retried Complete with the same parts gets the same answer. */
export interface CompletedUploadRow {
  upload_id: string;
  bucket_id: string;
  key: string;
  /** The completed parts as listed, `number:etag` joined by commas. */
  parts: string;
  etag: string;
  version_id: string;
  /** The object's checksum as stored on it (JSON), null when it has none. */
  checksum: string | null;
  completed_at: number;
}

export interface ObjectTables {
  storage_completed_uploads: CompletedUploadRow;
  storage_objects: ObjectRow;
  storage_uploads: UploadRow;
  storage_upload_parts: PartRow;
  storage_usage: UsageRow;
}

/** Where an object's bytes are: one blob per part (a multipart object keeps its parts' blobs). */
export interface BlobPart {
  ref: string;
  size: number;
}

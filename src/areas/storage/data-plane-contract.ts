import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
/**
 * The seam between the storage control plane (buckets, keys, CORS, lifecycle, versioning
 * configuration — `service.ts`) and the S3 data plane (objects, versions, multipart uploads and
 * the protocol server — `objects/` and `s3/`). Each side is built against these interfaces so
 * that neither reaches into the other's tables.
 */

export type VersioningState = 'Unversioned' | 'Enabled' | 'Suspended';

export interface CorsRule {
  /** Rule id (S3's `ID`); the API fills one in when the client gives none. */
  id?: string;
  allowed_origins: string[];
  allowed_methods: string[];
  allowed_headers: string[];
  expose_headers: string[];
  max_age_seconds: number | null;
}

export interface LifecycleRule {
  id: string;
  enabled: boolean;
  /** Only keys starting with this prefix ('' = every key). */
  prefix: string;
  /** Current versions expire this many days after their last modification. */
  expiration_days: number | null;
  /** Noncurrent versions are removed this many days after they became noncurrent. */
  noncurrent_version_expiration_days: number | null;
  /**
   * With `noncurrent_version_expiration_days`: the newest this many noncurrent versions of each
   * key are kept however old they are (S3's `NewerNoncurrentVersions`, 1-100).
   */
  newer_noncurrent_versions?: number | null;
  /** Incomplete multipart uploads are aborted this many days after they were initiated. */
  abort_incomplete_multipart_upload_days: number | null;
  // The forms only S3's PutBucketLifecycleConfiguration writes (absent in rules from the API):
  /** Current versions expire from this instant on (S3's `Expiration.Date`, a midnight UTC), ms. */
  expiration_date?: number | null;
  /** Lone delete markers (no other version of their key) are removed. */
  expired_object_delete_marker?: boolean;
  /** Only objects carrying every one of these tags. */
  tags?: Record<string, string> | null;
  /** Only objects larger than this many bytes. */
  object_size_greater_than?: number | null;
  /** Only objects smaller than this many bytes. */
  object_size_less_than?: number | null;
  /** Current versions move to another storage class (S3's `Transition`), a label change only. */
  transitions?: LifecycleTransition[] | null;
  /** Noncurrent versions move to another storage class (S3's `NoncurrentVersionTransition`). */
  noncurrent_version_transitions?: NoncurrentVersionTransition[] | null;
  /** The prefix was given as the rule's own `Prefix` (S3's older form) and is shown back that way. */
  rule_prefix?: boolean;
}

/** A current version's move to `storage_class`, `days` after its last modification or at `date`. */
export interface LifecycleTransition {
  days: number | null;
  /** A midnight UTC, ms (S3's `Transition.Date`; only S3 writes it). */
  date?: number | null;
  storage_class: string;
}

/** A noncurrent version's move to `storage_class`, `noncurrent_days` after it became noncurrent. */
export interface NoncurrentVersionTransition {
  noncurrent_days: number;
  storage_class: string;
  /** The newest this many noncurrent versions of each key stay where they are (1-100). */
  newer_noncurrent_versions?: number | null;
}

/** A lock bucket's default retention (S3 PutObjectLockConfiguration): days or years, never both. */
export interface ObjectLockDefault {
  mode: 'GOVERNANCE' | 'COMPLIANCE';
  days: number | null;
  years: number | null;
}

/** One S3 ACL grant. Groups are S3's AllUsers and AuthenticatedUsers. */
export interface AclGrant {
  grantee:
    | { type: 'CanonicalUser'; id: string }
    | { type: 'Group'; group: 'AllUsers' | 'AuthenticatedUsers' };
  permission: 'READ' | 'WRITE' | 'READ_ACP' | 'WRITE_ACP' | 'FULL_CONTROL';
}

/** S3 object ownership; `BucketOwnerEnforced` (the default) turns ACLs off. */
export type ObjectOwnership = 'BucketOwnerEnforced' | 'BucketOwnerPreferred' | 'ObjectWriter';

/** S3 PutPublicAccessBlock's four switches. */
export interface PublicAccessBlock {
  blockPublicAcls: boolean;
  ignorePublicAcls: boolean;
  blockPublicPolicy: boolean;
  restrictPublicBuckets: boolean;
}

/** What S3 can change about who reaches a bucket; fields left out stay as they are. */
export interface BucketAccessChange {
  isPublic?: boolean;
  acl?: AclGrant[];
  /** The owner's own grants in the bucket ACL, exactly as sent (may be none). */
  ownerPermissions?: AclGrant['permission'][];
  /** null: ownership controls deleted (ACLs on, as for buckets made before AWS changed its default). */
  objectOwnership?: ObjectOwnership | null;
  publicAccessBlock?: PublicAccessBlock | null;
  policy?: string | null;
}

export interface BucketRecord {
  id: string;
  name: string;
  customerId: string;
  region: string;
  tier: string;
  isPublic: boolean;
  versioning: VersioningState;
  objectLockEnabled: boolean;
  /** Default retention of new versions in a lock bucket, or null. */
  objectLockDefault: ObjectLockDefault | null;
  /** Sealing applied to writes that ask for none (S3 PutBucketEncryption): `AES256`, `aws:kms`, or null. */
  defaultEncryption: 'AES256' | 'aws:kms' | null;
  /** With `aws:kms`: the ARN of the key named by the bucket default, null for the customer's default key. */
  defaultKmsKeyId?: string | null;
  cors: CorsRule[] | null;
  lifecycle: LifecycleRule[] | null;
  /** S3 bucket tagging, null when the bucket has no tag set. */
  tags?: Record<string, string> | null;
  /** Bucket ACL grants beyond the owner's own and the public READ that `isPublic` stands for. */
  acl: AclGrant[];
  /**
   * The owner's own grants in the bucket ACL; absent means FULL_CONTROL (every ACL stored before
   * ACLs were kept exactly as sent, and every ACL that gives the owner just that).
   */
  ownerPermissions?: AclGrant['permission'][];
  /** null when the ownership controls were deleted (ACLs enabled). */
  objectOwnership: ObjectOwnership | null;
  /** The bucket's own public access block, null when none (the operator's default still applies). */
  publicAccessBlock: PublicAccessBlock | null;
  /** The bucket policy document as stored, null when none. */
  policy: string | null;
  createdAt: number;
}

/** What one S3 access key may do. `actions` are `s3:*` action names from `GET /v1/storage/actions`. */
export interface AccessGrant {
  /** A bucket name, or '*' for every bucket of the customer (account keys). */
  bucket: string;
  actions: string[] | 'all';
}

export interface AccessKeyRecord {
  accessKeyId: string;
  /** The secret, decrypted: SigV4 needs it to recompute signatures. */
  secretKey: string;
  customerId: string;
  customerDisplayName: string;
  /** 'bucket' keys belong to one bucket; 'account' keys span several (`/v1/storage/keys`). */
  kind: 'bucket' | 'account';
  grants: AccessGrant[];
  /** Account keys only: may create buckets through S3 (`s3:CreateBucket`). */
  mayCreateBuckets: boolean;
  /** Account-level actions (`s3:ListAllMyBuckets`, `s3:CreateBucket`); bucket keys have none. */
  accountActions?: string[];
}

/** Implemented by the control plane; used by the data plane on every request. */
export interface BucketDirectory {
  /** The key, or null when unknown, revoked or deleted (the data plane must not cache beyond one request unless invalidated). */
  findAccessKey(accessKeyId: string): Promise<AccessKeyRecord | null>;
  findBucket(name: string): Promise<BucketRecord | null>;
  listBuckets(customerId: string): Promise<BucketRecord[]>;
  /** S3 CreateBucket by an account key. Throws the same AppErrors as the API (name taken → conflict). */
  createBucketViaS3(
    customerId: string,
    name: string,
    region: string,
    /** The creating account key: it gets full access to the new bucket (as Garage does). */
    accessKeyId?: string,
    /** `x-amz-bucket-object-lock-enabled: true` (turns versioning on for good). */
    objectLockEnabled?: boolean,
  ): Promise<BucketRecord>;
  /** S3 DeleteBucket: the caller has checked emptiness through ObjectStats. */
  deleteBucketViaS3(customerId: string, name: string): Promise<void>;
  putCors(bucketName: string, rules: CorsRule[]): Promise<void>;
  deleteCors(bucketName: string): Promise<void>;
  putVersioning(bucketName: string, state: 'Enabled' | 'Suspended'): Promise<void>;
  putLifecycle(bucketName: string, rules: LifecycleRule[] | null): Promise<void>;
  /** S3 Put/DeleteBucketTagging (null deletes the tag set). */
  putBucketTags(bucketName: string, tags: Record<string, string> | null): Promise<void>;
  /** S3 Put/DeleteBucketEncryption. */
  putDefaultEncryption(
    bucketName: string,
    algorithm: 'AES256' | 'aws:kms' | null,
    kmsKeyId?: string | null,
  ): Promise<void>;
  /** The customer's SSE-KMS keys; a data plane without them refuses `aws:kms`. */
  kms?: KmsKeyring;
  /** S3 bucket ACL, ownership controls, public access block and policy. */
  putBucketAccess(bucketName: string, change: BucketAccessChange): Promise<void>;
  /** S3 PutObjectLockConfiguration (the caller has checked the bucket has object lock). */
  /** `enable`: turn object lock on for a bucket created without it (its versioning is Enabled). */
  putObjectLockDefault(bucketName: string, rule: ObjectLockDefault | null, enable?: boolean): Promise<void>;
  /** Whether an account (a canonical id in an ACL grant) exists; without it, grants are not checked. */
  accountExists?(accountId: string): Promise<boolean>;
  /** Tell the control plane a key signed a request (shown as `last_used_at`; written at most once a minute). */
  recordKeyUse?(accessKeyId: string): void | Promise<void>;
  /**
   * Called when a bucket changes, so caches in the data plane can drop it. Listeners get ''
   * when notices may have been lost (PostgreSQL reconnect, emulator reset): drop everything.
   */
  onBucketChanged(listener: (bucketName: string) => void): void;
  onAccessKeyChanged(listener: (accessKeyId: string) => void): void;
}

export interface BucketUsage {
  objects: number;
  bytes: number;
}

/** Implemented by the data plane; used by the control plane. Counters are kept with each write. */
export interface ObjectStats {
  usage(bucketId: string): Promise<BucketUsage>;
  usageOfCustomer(customerId: string): Promise<BucketUsage>;
  /**
   * Empty means no object, no version and no delete marker (incomplete multipart uploads are
   * dropped with the bucket, as on AWS). `db` is the caller's
   * transaction (bucket deletion checks inside the transaction that holds the bucket's lock).
   */
  // biome-ignore lint/suspicious/noExplicitAny: a transaction of the shared store
  isEmpty(bucketId: string, db?: Kysely<any>): Promise<boolean>;
  /**
   * The current version of one object, whole, when it is at most `maxBytes` (other areas read a
   * customer's files through StorageService.readObject: chatbot knowledge, speech uploads).
   * Null when there is no such object; throws when it is larger.
   */
  readObject?(
    bucketId: string,
    key: string,
    maxBytes: number,
  ): Promise<{ body: Buffer; contentType: string } | null>;
  /** Drops every object and upload of a bucket (used after the bucket row is gone, and by reset). */
  purgeBucket(bucketId: string): Promise<void>;
  /**
   * Applies a bucket's lifecycle rules as of `now` (epoch ms): expires current and noncurrent
   * versions and aborts old multipart uploads. The control plane's `storage.lifecycle` job calls
   * it for every bucket with rules, hourly.
   */
  applyLifecycle?(
    bucket: BucketRecord,
    now: number,
  ): Promise<{ expired: number; aborted: number; transitioned?: number }>;
  /**
   * Removes stored blobs that no object or part refers to, last written more than `olderThanMs`
   * ago (wall clock); resolves to how many. Run daily by the `storage.blobs.sweep` job.
   */
  sweepOrphanBlobs?(olderThanMs: number): Promise<number>;
  /**
   * One pass of pack compaction (small objects' pack files on the `fs` store; see
   * objects/pack-compaction.ts). Stores without packs leave it out. Run by `storage.packs.compact`.
   */
  compactPacks?(): Promise<PackCompactionResult>;
}

/** What one pass of pack compaction did. */
export interface PackCompactionResult {
  /** Packs whose live entries were copied out and whose rows now name the copies. */
  packsCompacted: number;
  entriesMoved: number;
  bytesMoved: number;
  /** Object versions and parts switched to the copies. */
  rowsSwitched: number;
  /** Pack files removed (no row named them any more) and the bytes they took. */
  packsRemoved: number;
  bytesFreed: number;
  /** Packs that could not be read (damaged, or removed meanwhile by another process): left as they are. */
  packsSkipped: number;
}

/**
 * Objects Fjord stores for its own use (database snapshots) in the data plane: the same blob
 * store and atomic commit as customers' objects, in a bucket no customer can name.
 */
export interface InternalObjects {
  /** For the banner and the docs: which store holds them. */
  readonly location: string;
  /** Streams `body` in; visible only once every byte is durable. */
  put(key: string, body: Readable, contentType: string): Promise<{ size: number; etag: string }>;
  /** Fails (before any byte) when the key holds nothing. */
  get(key: string): Promise<Readable>;
  delete(key: string): Promise<void>;
  usage(): Promise<BucketUsage>;
  /**
   * A SigV4 presigned URL through which any HTTP client may PUT this one key, at most `maxBytes`,
   * for `expiresSeconds` (on the kernel clock). The S3 listener accepts nothing else with it.
   */
  presignPut(key: string, maxBytes: number, expiresSeconds: number): string;
}

/** A bucket's default sealing (S3 PutBucketEncryption), null for none. */
export type DefaultEncryption = 'AES256' | 'aws:kms' | null;

/** A data key for one object (or multipart upload), and the same key wrapped by a KMS key version. */
export interface KmsDataKey {
  keyId: string;
  arn: string;
  version: number;
  plaintext: Buffer;
  wrapped: string;
}

/**
 * The SSE-KMS keys of customers, as the data plane uses them. `ref` is a key id, key ARN or alias
 * (null: the customer's default key, made on first use). Unknown keys and other customers' keys
 * fail with `kms_key_not_found`, disabled ones with `kms_key_disabled`.
 */
export interface KmsKeyring {
  resolve(customerId: string, ref: string | null): Promise<{ keyId: string; arn: string }>;
  /** `context`: the writer's encryption context (canonical JSON), bound to the wrapped key. */
  generateDataKey(customerId: string, ref: string | null, context?: string | null): Promise<KmsDataKey>;
  decryptDataKey(
    customerId: string,
    keyId: string,
    version: number,
    wrapped: string,
    context?: string | null,
  ): Promise<Buffer>;
}

/**
 * One S3 request by a bucket's owner, made through the control API (the console's object
 * browser): the data plane answers it on `res` with its own handlers, as to the owner's account
 * key. Resolves with the S3 error it refused with (nothing written yet), or null when answered.
 */
export type OwnerObjectRequest = (
  req: IncomingMessage,
  res: ServerResponse,
  request: {
    customerId: string;
    bucket: string;
    /** null: a bucket request (a listing). */
    key: string | null;
    /** S3's query (`list-type=2`, `versionId` …). */
    query: URLSearchParams;
    /** Reads only (a PAT without `storage:write`). */
    readOnly: boolean;
  },
) => Promise<{ failed: { status: number; code: string; message: string } | null }>;

import type { AuditTrail } from '../../kernel/audit/audit.js';
import type { Credential } from '../../kernel/auth/principal.js';
import type { Clock } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import { fromBool, fromJson, isUniqueViolation, toBool } from '../../kernel/store/dialect.js';
import type { Units } from '../../kernel/store/unit-of-work.js';
import type { AccessKeyService } from './access-keys.js';
import { storageAuditor } from './audit.js';
import { type BucketChanges, BucketSettings } from './bucket-settings.js';
import { STORAGE_TIERS } from './catalogue.js';
import type { StorageChangeNotices } from './change-notices.js';
import type {
  BucketDirectory,
  BucketRecord,
  InternalObjects,
  ObjectOwnership,
  ObjectStats,
} from './data-plane-contract.js';
import { storageErrors } from './errors.js';
import type { StorageBucketsTable } from './migrations.js';
import type { StorageRepo } from './repo.js';
import { presignUrl } from './s3/sigv4.js';
import { normaliseRegion } from './validation.js';
import { bucketRecord, bucketView } from './views.js';

export interface CreateBucketInput {
  name: string;
  tier?: 'standard' | 'enterprise';
  region?: string;
  isPublic?: boolean;
  objectLockEnabled?: boolean;
}

/**
 * Buckets: their life, visibility and share links; their configuration documents (CORS, lifecycle,
 * versioning, object lock, tags, encryption, access) are `settings` (bucket-settings.ts). Object
 * data and its counters belong to the data plane, reached through `ObjectStats`. Every change is
 * announced through `StorageChangeNotices`, so S3 processes drop what they cached.
 */
export class StorageService {
  /** The data plane's view of this control plane (set once the directory is built). */
  directory: BucketDirectory | null = null;
  /** Fjord's own buckets in the data plane, for other areas (set once the data plane is built). */
  internalBucket: (purpose: string) => InternalObjects = () => {
    throw new Error('the storage data plane is not built yet');
  };

  /** Each bucket's configuration documents (bucket-settings.ts). */
  readonly settings: BucketSettings;

  private readonly repo: StorageRepo;
  constructor(
    private readonly data: Units<StorageRepo>,
    readonly keys: AccessKeyService,
    private readonly stats: () => ObjectStats,
    private readonly clock: Clock,
    private readonly audit: AuditTrail,
    private readonly notices: StorageChangeNotices,
    readonly endpoint: () => string,
    private readonly limits: Limits,
    /** FJORD_S3_BLOCK_PUBLIC_ACCESS includes BlockPublicAcls: no bucket may be made public. */
    private readonly operatorBlocksPublicAcls = false,
    /** FJORD_S3_DEFAULT_OBJECT_OWNERSHIP: what a bucket created without `x-amz-object-ownership` gets. */
    private readonly defaultObjectOwnership: ObjectOwnership = 'BucketOwnerEnforced',
  ) {
    this.repo = data.read;
    this.settings = new BucketSettings(
      {
        bucket: (customerId, name) => this.bucket(customerId, name),
        bucketForDataPlane: (name) => this.bucketForDataPlane(name),
        change: (row, changes) => this.change(row, changes),
        record: (...entry) => this.record(...entry),
      },
      limits,
    );
  }

  // Buckets

  async listBuckets(customerId: string) {
    const rows = await this.repo.listBuckets(customerId);
    return Promise.all(rows.map(async (r) => bucketView(r, await this.stats().usage(r.id))));
  }

  async getBucket(customerId: string, name: string) {
    const row = await this.bucket(customerId, name);
    return bucketView(row, await this.stats().usage(row.id));
  }

  /**
   * A presigned GET link to one object of the customer's bucket, for sharing: SigV4 in the query
   * string, signed with the account's S3 key (the older form's, made on first use), so any HTTP
   * client can fetch it from the S3 endpoint until it expires or that key is deleted.
   */
  async presignDownload(
    customerId: string,
    actor: Credential,
    bucketName: string,
    key: string,
    expiresSeconds: number,
  ): Promise<{ url: string; expires_at: string }> {
    await this.bucket(customerId, bucketName);
    const creds = await this.keys.legacyCredentials(customerId, actor);
    const now = this.clock.nowMs();
    const url = presignUrl({
      method: 'GET',
      endpoint: creds.endpoint_url,
      path: `/${bucketName}/${key}`,
      accessKeyId: creds.access_key_id,
      secret: creds.secret_access_key,
      region: creds.region,
      nowMs: now,
      expiresSeconds,
    });
    return { url, expires_at: new Date(now + expiresSeconds * 1000).toISOString() };
  }

  /** The customer's live bucket, or 404 (also for another customer's bucket). */
  async bucket(customerId: string, name: string): Promise<StorageBucketsTable> {
    const row = await this.repo.customerBucket(customerId, name);
    if (!row) throw storageErrors.bucketNotFound();
    return row;
  }

  async createBucket(customerId: string, actor: Credential, input: CreateBucketInput) {
    const { bucket, secret, accessKeyId } = await this.insertBucket(customerId, input, 'api', null);
    await this.record(customerId, actor, 'storage.bucket.created', bucket.id, {
      bucket_name: bucket.name,
      tier: bucket.tier,
      is_public: toBool(bucket.is_public),
    });
    return {
      success: true,
      bucket_name: bucket.name,
      message: `Bucket ${bucket.name} created. Store the secret key now: it is shown only once.`,
      endpoint: this.endpoint(),
      region: bucket.region,
      tier: bucket.tier as 'standard' | 'enterprise',
      access_key: accessKeyId,
      secret_key: secret,
    };
  }

  /** S3 CreateBucket by an account key: same rules, and the key gets full access to the bucket. */
  async createBucketViaS3(
    customerId: string,
    name: string,
    region: string,
    accessKeyId: string | null,
    objectLockEnabled = false,
  ) {
    const { bucket } = await this.insertBucket(
      customerId,
      { name, region, objectLockEnabled },
      's3',
      accessKeyId,
    );
    await this.record(customerId, null, 'storage.bucket.created', bucket.id, {
      bucket_name: bucket.name,
      via: 's3',
      access_key: accessKeyId,
    });
    return bucketRecord(bucket);
  }

  private async insertBucket(
    customerId: string,
    input: CreateBucketInput,
    via: 'api' | 's3',
    creatorKey: string | null,
  ) {
    const region = normaliseRegion(input.region);
    const maxBuckets = this.limits.of('storage.buckets');
    const now = this.clock.nowMs();
    const lock = input.objectLockEnabled ?? false;
    const bucket: StorageBucketsTable = {
      id: newId(),
      customer_id: customerId,
      name: input.name,
      region,
      tier: input.tier ?? STORAGE_TIERS.find((t) => t.is_default)!.tier,
      is_public: fromBool(input.isPublic ?? false),
      // Object lock needs versions to protect, so S3 turns versioning on with it, for good.
      versioning: lock ? 'Enabled' : 'Unversioned',
      object_lock_enabled: fromBool(lock),
      default_encryption: null,
      object_lock_default: null,
      acl: null,
      // null stands for BucketOwnerEnforced, the default of rows written before the setting existed.
      object_ownership:
        this.defaultObjectOwnership === 'BucketOwnerEnforced' ? null : this.defaultObjectOwnership,
      public_access_block: null,
      policy: null,
      cors: null,
      lifecycle: null,
      created_via: via,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    try {
      // Counted and written under the customer's lock: requests at once cannot pass the limit together.
      const key = await this.data.run([`storage:buckets:${customerId}`], async (repo) => {
        if (maxBuckets !== null && (await repo.countBuckets(customerId)) >= maxBuckets)
          throw storageErrors.bucketLimit(maxBuckets);
        await repo.insertBucket(bucket);
        if (creatorKey) await this.keys.grantCreatedBucket(repo, creatorKey, bucket.name);
        return this.keys.createDefaultKey(repo, bucket);
      });
      await this.notices.bucketChanged(bucket.name);
      if (creatorKey) await this.notices.keyChanged(creatorKey);
      return { bucket, secret: key.secret, accessKeyId: key.row.access_key_id };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      // The name is taken by a live bucket, or retired with a deleted one: names never return.
      const live = await this.repo.bucketByName(input.name);
      throw live ? storageErrors.bucketNameTaken() : storageErrors.bucketNameRetired();
    }
  }

  async deleteBucket(customerId: string, actor: Credential | null, name: string) {
    const row = await this.bucket(customerId, name);
    if (!(await this.stats().isEmpty(row.id))) throw storageErrors.bucketNotEmpty();
    const keys = await this.repo.keysOfBucket(row.id);
    const changedAccountKeys = await this.data.run([`storage:bucket:${row.id}`], async (repo, { tx }) => {
      // Retiring takes the bucket row's lock; every write of the data plane takes it first too,
      // so emptiness checked here holds: a write racing the delete either landed (409 here) or
      // will find the bucket gone (NoSuchBucket there). Nothing acknowledged is purged.
      if (!(await repo.retireBucket(row.id, this.clock.nowMs()))) throw storageErrors.bucketNotFound();
      if (!(await this.stats().isEmpty(row.id, tx))) throw storageErrors.bucketNotEmpty();
      return this.keys.forgetBucket(repo, customerId, row.name);
    });
    // Drops what an abandoned upload of the dead bucket might still reference (nothing normally).
    await this.stats().purgeBucket(row.id);
    await this.notices.bucketChanged(row.name);
    for (const k of [...keys.map((k) => k.access_key_id), ...changedAccountKeys])
      await this.notices.keyChanged(k);
    await this.record(customerId, actor, 'storage.bucket.deleted', row.id, { bucket_name: row.name });
    return { success: true, message: `Bucket ${row.name} deleted. Its name cannot be used again.` };
  }

  async setVisibility(customerId: string, actor: Credential, name: string, isPublic: boolean) {
    const row = await this.bucket(customerId, name);
    // `is_public` is a public ACL: the public access block refuses it as S3 refuses public-read.
    if (isPublic && !toBool(row.is_public)) {
      const own = fromJson<{ blockPublicAcls?: boolean } | null>(row.public_access_block, null);
      if (this.operatorBlocksPublicAcls || own?.blockPublicAcls) throw storageErrors.publicAccessBlocked();
    }
    await this.change(row, { is_public: fromBool(isPublic) });
    await this.record(customerId, actor, 'storage.bucket.visibility', row.id, { is_public: isPublic });
    return {
      success: true,
      bucket_name: row.name,
      is_public: isPublic,
      message: isPublic
        ? `Bucket ${row.name} is public: anonymous clients can read its objects.`
        : `Bucket ${row.name} is private.`,
    };
  }

  // For the data plane and the lifecycle job

  /**
   * One of the customer's objects, whole (at most `maxBytes`): for other areas that take a
   * customer's files as input. 404 for a bucket or object the customer does not have.
   */
  async readObject(customerId: string, bucketName: string, key: string, maxBytes: number) {
    const bucket = await this.bucket(customerId, bucketName);
    const read = this.stats().readObject;
    if (!read) throw storageErrors.objectNotFound(key);
    const found = await read.call(this.stats(), bucket.id, key, maxBytes);
    if (!found) throw storageErrors.objectNotFound(key);
    return found;
  }

  async findBucket(name: string): Promise<BucketRecord | null> {
    const row = await this.repo.bucketByName(name);
    return row ? bucketRecord(row) : null;
  }

  async listBucketRecords(customerId: string): Promise<BucketRecord[]> {
    return (await this.repo.listBuckets(customerId)).map(bucketRecord);
  }

  async bucketsWithLifecycle(): Promise<BucketRecord[]> {
    return (await this.repo.bucketsWithLifecycle()).map(bucketRecord);
  }

  /** By bucket name alone: the data plane has already authorised the caller for this bucket. */
  async bucketForDataPlane(name: string): Promise<StorageBucketsTable> {
    const row = await this.repo.bucketByName(name);
    if (!row) throw storageErrors.bucketNotFound();
    return row;
  }

  private async change(row: StorageBucketsTable, changes: BucketChanges) {
    if (!(await this.repo.updateBucket(row.id, changes, this.clock.nowMs())))
      throw storageErrors.bucketNotFound();
    await this.notices.bucketChanged(row.name);
  }

  private record(...entry: Parameters<ReturnType<typeof storageAuditor>>) {
    return storageAuditor(this.audit, 'storage_bucket', { kind: 'system', id: null })(...entry);
  }
}

export type { InternalObjects } from './data-plane-contract.js';

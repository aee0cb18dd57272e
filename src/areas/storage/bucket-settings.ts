import type { Credential } from '../../kernel/auth/principal.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import { fromBool, fromJson, toBool, toJson } from '../../kernel/store/dialect.js';
import type { storageAuditor } from './audit.js';
import { encodeBucketAcl } from './bucket-acl.js';
import type {
  BucketAccessChange,
  CorsRule,
  DefaultEncryption,
  LifecycleRule,
  ObjectLockDefault,
} from './data-plane-contract.js';
import { storageErrors } from './errors.js';
import type { StorageBucketsTable } from './migrations.js';
import type { StorageRepo } from './repo.js';
import {
  type CorsDialect,
  type CorsRuleInput,
  checkCorsRules,
  checkLifecycleRules,
  type LifecycleRuleInput,
} from './validation.js';
import { normaliseCors, versioningView } from './views.js';

// A bucket's configuration documents are a file of their own: the service (service.ts) keeps a
// bucket's life (create, delete, visibility) and the reads the data plane needs; each setting
// here is one column of the bucket's row, checked, written and announced, set alike from the API
// and from S3.

/** The columns of a bucket's row a change may set. */
export type BucketChanges = Parameters<StorageRepo['updateBucket']>[1];

/** What the settings need of the service: a bucket's row, and a change written, announced and audited. */
export interface BucketRows {
  /** The customer's live bucket, or 404 (also for another customer's bucket). */
  bucket(customerId: string, name: string): Promise<StorageBucketsTable>;
  /** By bucket name alone: the data plane has already authorised the caller for this bucket. */
  bucketForDataPlane(name: string): Promise<StorageBucketsTable>;
  change(row: StorageBucketsTable, changes: BucketChanges): Promise<void>;
  record(...entry: Parameters<ReturnType<typeof storageAuditor>>): Promise<unknown>;
}

/** CORS, lifecycle, versioning, object lock, tags, default encryption and access of a bucket. */
export class BucketSettings {
  constructor(
    private readonly rows: BucketRows,
    private readonly limits: Limits,
  ) {}

  // CORS

  async getCors(customerId: string, name: string) {
    const row = await this.rows.bucket(customerId, name);
    if (row.cors === null) throw storageErrors.corsNotFound();
    return { rules: normaliseCors(fromJson<CorsRule[]>(row.cors, [])) };
  }

  async putCors(
    customerId: string,
    actor: Credential | null,
    name: string,
    rules: CorsRuleInput[],
    dialect: CorsDialect = 'api',
  ) {
    const row = await this.rows.bucket(customerId, name);
    const checked = checkCorsRules(rules, this.limits.of('storage.cors_rules'), dialect);
    await this.rows.change(row, { cors: toJson(checked) });
    await this.rows.record(customerId, actor, 'storage.bucket.cors.put', row.id, { rules: checked.length });
    return { rules: normaliseCors(checked) };
  }

  async deleteCors(customerId: string, actor: Credential | null, name: string) {
    const row = await this.rows.bucket(customerId, name);
    if (row.cors !== null) {
      await this.rows.change(row, { cors: null });
      await this.rows.record(customerId, actor, 'storage.bucket.cors.deleted', row.id);
    }
  }

  // Lifecycle

  async getLifecycle(customerId: string, name: string) {
    const row = await this.rows.bucket(customerId, name);
    if (row.lifecycle === null) throw storageErrors.lifecycleNotFound();
    const rules = fromJson<LifecycleRule[]>(row.lifecycle, []);
    return { rules: rules.map(lifecycleRuleOut) };
  }

  async putLifecycle(
    customerId: string,
    actor: Credential | null,
    name: string,
    rules: LifecycleRuleInput[],
  ) {
    const row = await this.rows.bucket(customerId, name);
    const checked = checkLifecycleRules(rules);
    await this.rows.change(row, { lifecycle: toJson(checked) });
    await this.rows.record(customerId, actor, 'storage.bucket.lifecycle.put', row.id, {
      rules: checked.length,
    });
    return { rules: checked.map(lifecycleRuleOut) };
  }

  async deleteLifecycle(customerId: string, actor: Credential | null, name: string) {
    const row = await this.rows.bucket(customerId, name);
    if (row.lifecycle !== null) {
      await this.rows.change(row, { lifecycle: null });
      await this.rows.record(customerId, actor, 'storage.bucket.lifecycle.deleted', row.id);
    }
  }

  // Versioning and object lock

  async getVersioning(customerId: string, name: string) {
    const row = await this.rows.bucket(customerId, name);
    return versioningView(row);
  }

  async putVersioning(
    customerId: string,
    actor: Credential | null,
    name: string,
    status: 'Enabled' | 'Suspended',
  ) {
    const row = await this.rows.bucket(customerId, name);
    if (status === 'Suspended' && toBool(row.object_lock_enabled)) throw storageErrors.versioningLocked();
    await this.rows.change(row, { versioning: status });
    await this.rows.record(customerId, actor, 'storage.bucket.versioning', row.id, { status });
    return versioningView({ ...row, versioning: status });
  }

  async getObjectLock(customerId: string, name: string) {
    const row = await this.rows.bucket(customerId, name);
    return {
      bucket_name: row.name,
      object_lock_enabled: toBool(row.object_lock_enabled),
      versioning: row.versioning as 'Unversioned' | 'Enabled' | 'Suspended',
      default_retention: fromJson<ObjectLockDefault | null>(row.object_lock_default, null),
    };
  }

  /** S3 PutObjectLockConfiguration's default retention; the data plane checked the bucket has object lock. */
  async putObjectLockDefault(bucketName: string, rule: ObjectLockDefault | null, enable = false) {
    const row = await this.rows.bucketForDataPlane(bucketName);
    await this.rows.change(row, {
      object_lock_default: rule === null ? null : toJson(rule),
      ...(enable ? { object_lock_enabled: fromBool(true) } : {}),
    });
    await this.rows.record(row.customer_id, null, 'storage.bucket.object_lock', row.id, {
      default_retention: rule,
    });
  }

  /** S3 Put/DeleteBucketTagging: the tag set whole (checked by the S3 handler), null to delete it. */
  async putBucketTags(bucketName: string, tags: Record<string, string> | null) {
    const row = await this.rows.bucketForDataPlane(bucketName);
    await this.rows.change(row, { tags: tags === null ? null : toJson(tags) });
    await this.rows.record(row.customer_id, null, 'storage.bucket.tagging', row.id, {
      tags: tags === null ? 0 : Object.keys(tags).length,
    });
  }

  /** S3 Put/DeleteBucketEncryption (`aws:kms` keeps the key's ARN: `aws:kms <arn>`). */
  async putDefaultEncryption(bucketName: string, algorithm: DefaultEncryption, kmsKeyId?: string | null) {
    const row = await this.rows.bucketForDataPlane(bucketName);
    const kms_key_id = algorithm === 'aws:kms' ? (kmsKeyId ?? null) : null;
    await this.rows.change(row, { default_encryption: kms_key_id ? `aws:kms ${kms_key_id}` : algorithm });
    await this.rows.record(row.customer_id, null, 'storage.bucket.encryption', row.id, {
      algorithm,
      kms_key_id,
    });
  }

  /** S3 PutBucketAcl, ownership controls, public access block and bucket policy. */
  async putBucketAccess(bucketName: string, change: BucketAccessChange) {
    const row = await this.rows.bucketForDataPlane(bucketName);
    const changes: BucketChanges = {};
    if (change.isPublic !== undefined) changes.is_public = fromBool(change.isPublic);
    if (change.acl !== undefined) changes.acl = encodeBucketAcl(change.acl, change.ownerPermissions);
    if (change.objectOwnership !== undefined) changes.object_ownership = change.objectOwnership ?? 'none';
    if (change.publicAccessBlock !== undefined)
      changes.public_access_block = change.publicAccessBlock ? toJson(change.publicAccessBlock) : null;
    if (change.policy !== undefined) changes.policy = change.policy;
    await this.rows.change(row, changes);
    await this.rows.record(row.customer_id, null, 'storage.bucket.access', row.id, {
      ...change,
      policy: change.policy === undefined ? undefined : change.policy !== null,
    });
  }
}

/** A stored lifecycle rule as the control API shows it: the optional fields as null when absent. */
const lifecycleRuleOut = (r: LifecycleRule) => ({
  ...r,
  newer_noncurrent_versions: r.newer_noncurrent_versions ?? null,
  transitions: r.transitions ?? null,
  noncurrent_version_transitions: r.noncurrent_version_transitions ?? null,
});

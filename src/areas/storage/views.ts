import { fromJson, toBool } from '../../kernel/store/dialect.js';
import { decodeBucketAcl } from './bucket-acl.js';
import { BUCKET_ACTIONS } from './catalogue.js';
import type {
  BucketRecord,
  BucketUsage,
  CorsRule,
  LifecycleRule,
  ObjectLockDefault,
  ObjectOwnership,
  PublicAccessBlock,
  VersioningState,
} from './data-plane-contract.js';
import type { StorageBucketsTable, StorageKeysTable } from './migrations.js';

/** Rows → JSON answers and data-plane records. */

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function bucketView(row: StorageBucketsTable, usage: BucketUsage) {
  return {
    bucket_name: row.name,
    storage_tier: row.tier as 'standard' | 'enterprise',
    region: row.region,
    created_at: new Date(row.created_at).toISOString(),
    is_active: true,
    is_public: toBool(row.is_public),
    total_storage_gb: usage.bytes / 1e9,
    total_objects: usage.objects,
    name: row.name,
    size_bytes: usage.bytes,
    object_count: usage.objects,
  };
}

export function bucketRecord(row: StorageBucketsTable): BucketRecord {
  return {
    id: row.id,
    name: row.name,
    customerId: row.customer_id,
    region: row.region,
    tier: row.tier,
    isPublic: toBool(row.is_public),
    versioning: row.versioning as VersioningState,
    objectLockEnabled: toBool(row.object_lock_enabled),
    objectLockDefault:
      row.object_lock_default === null
        ? null
        : fromJson<ObjectLockDefault | null>(row.object_lock_default, null),
    defaultEncryption:
      row.default_encryption === 'AES256'
        ? 'AES256'
        : row.default_encryption?.startsWith('aws:kms')
          ? 'aws:kms'
          : null,
    defaultKmsKeyId: row.default_encryption?.startsWith('aws:kms ') ? row.default_encryption.slice(8) : null,
    cors: row.cors === null ? null : fromJson<CorsRule[]>(row.cors, []),
    lifecycle: row.lifecycle === null ? null : fromJson<LifecycleRule[]>(row.lifecycle, []),
    tags: row.tags ? fromJson<Record<string, string> | null>(row.tags, null) : null,
    ...decodeBucketAcl(row.acl),
    objectOwnership:
      row.object_ownership === null
        ? 'BucketOwnerEnforced'
        : row.object_ownership === 'none'
          ? null
          : (row.object_ownership as ObjectOwnership),
    publicAccessBlock:
      row.public_access_block === null
        ? null
        : fromJson<PublicAccessBlock | null>(row.public_access_block, null),
    policy: row.policy,
    createdAt: row.created_at,
  };
}

/** A bucket key's actions as shown: every bucket action when it has full access. */
export const keyActions = (row: StorageKeysTable): string[] =>
  toBool(row.full_access) ? [...BUCKET_ACTIONS] : fromJson<string[]>(row.actions, []);

export function bucketKeyView(row: StorageKeysTable) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    access_key: row.access_key_id,
    actions: keyActions(row),
    full_access: toBool(row.full_access),
    is_default: toBool(row.is_default),
    created_at: new Date(row.created_at).toISOString(),
    last_used_at: iso(row.last_used_at),
  };
}

/** An account key's grant as stored: a bucket name or '*', and its actions unless full access. */
export interface StoredGrant {
  bucket: string;
  full_access: boolean;
  actions: string[];
}

export const storedGrants = (row: StorageKeysTable) => fromJson<StoredGrant[]>(row.grants, []);

export function accountKeyView(row: StorageKeysTable) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    access_key: row.access_key_id,
    actions: fromJson<string[]>(row.actions, []),
    buckets: storedGrants(row).map((g) => ({
      bucket_name: g.bucket,
      actions: g.full_access ? [...BUCKET_ACTIONS] : g.actions,
      full_access: g.full_access,
    })),
    created_at: new Date(row.created_at).toISOString(),
    last_used_at: iso(row.last_used_at),
  };
}

export function versioningView(row: StorageBucketsTable) {
  return {
    bucket_name: row.name,
    status: row.versioning as 'Unversioned' | 'Enabled' | 'Suspended',
    object_lock_enabled: toBool(row.object_lock_enabled),
  };
}

/** Rules written by S3 PutBucketCors may lack an id; the API always shows one. */
export function normaliseCors(rules: CorsRule[]) {
  return rules.map((r, i) => ({
    ...r,
    id: r.id ?? `rule-${i + 1}`,
    max_age_seconds: r.max_age_seconds ?? null,
  }));
}

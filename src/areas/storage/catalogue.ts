/**
 * The fixed catalogues of object storage: the S3 actions a key can be granted
 * (`GET /v1/storage/actions`), the storage tiers (`GET /v1/storage/tiers`), the region and the
 * signing region. The data plane imports `S3_ACTIONS` to name what each request needs.
 */

export type ActionScope = 'bucket' | 'account';

export interface S3Action {
  action: string;
  /** `bucket`: granted per bucket; `account`: only on account-level keys (`/v1/storage/keys`). */
  scope: ActionScope;
  category: 'read' | 'write' | 'list' | 'config';
  description: string;
  /** The S3 operations this action allows, as the data plane names them. */
  operations: string[];
}

const bucket = (
  action: string,
  category: S3Action['category'],
  description: string,
  operations: string[],
): S3Action => ({ action, scope: 'bucket', category, description, operations });

/** Names as AWS IAM spells them, so policies people already know read the same. */
export const S3_ACTIONS: readonly S3Action[] = [
  {
    action: 's3:ListAllMyBuckets',
    scope: 'account',
    category: 'list',
    description: 'List every bucket of the account (S3 ListBuckets).',
    operations: ['ListBuckets'],
  },
  {
    action: 's3:CreateBucket',
    scope: 'account',
    category: 'write',
    description: 'Create buckets through the S3 protocol; the key gets full access to what it creates.',
    operations: ['CreateBucket'],
  },
  bucket('s3:ListBucket', 'list', 'List the objects of the bucket; HeadBucket.', [
    'ListObjects',
    'ListObjectsV2',
    'HeadBucket',
  ]),
  bucket('s3:ListBucketVersions', 'list', 'List object versions.', ['ListObjectVersions']),
  bucket('s3:ListBucketMultipartUploads', 'list', 'List incomplete multipart uploads.', [
    'ListMultipartUploads',
  ]),
  bucket('s3:ListMultipartUploadParts', 'list', 'List the parts of a multipart upload.', ['ListParts']),
  bucket('s3:GetBucketLocation', 'read', 'Read the bucket’s region.', ['GetBucketLocation']),
  bucket('s3:GetObject', 'read', 'Download objects and read their metadata (GET, HEAD).', [
    'GetObject',
    'HeadObject',
  ]),
  bucket('s3:GetObjectVersion', 'read', 'Download a specific object version.', [
    'GetObject?versionId',
    'HeadObject?versionId',
  ]),
  bucket('s3:GetObjectTagging', 'read', 'Read object tags.', ['GetObjectTagging']),
  bucket('s3:PutObject', 'write', 'Upload objects: PUT, POST form, copy, multipart upload.', [
    'PutObject',
    'PostObject',
    'CopyObject',
    'CreateMultipartUpload',
    'UploadPart',
    'UploadPartCopy',
    'CompleteMultipartUpload',
  ]),
  bucket('s3:PutObjectTagging', 'write', 'Set object tags.', ['PutObjectTagging']),
  bucket('s3:DeleteObjectTagging', 'write', 'Remove object tags.', ['DeleteObjectTagging']),
  bucket('s3:AbortMultipartUpload', 'write', 'Abort a multipart upload.', ['AbortMultipartUpload']),
  bucket('s3:DeleteObject', 'write', 'Delete objects (adds a delete marker when versioned).', [
    'DeleteObject',
    'DeleteObjects',
  ]),
  bucket('s3:DeleteObjectVersion', 'write', 'Delete a specific object version for good.', [
    'DeleteObject?versionId',
  ]),
  bucket('s3:GetBucketCORS', 'config', 'Read the CORS document.', ['GetBucketCors']),
  bucket('s3:PutBucketCORS', 'config', 'Replace or delete the CORS document.', [
    'PutBucketCors',
    'DeleteBucketCors',
  ]),
  bucket('s3:GetBucketTagging', 'config', 'Read the bucket tag set.', ['GetBucketTagging']),
  bucket('s3:PutBucketTagging', 'config', 'Replace or delete the bucket tag set.', [
    'PutBucketTagging',
    'DeleteBucketTagging',
  ]),
  bucket('s3:GetBucketVersioning', 'config', 'Read the versioning state.', ['GetBucketVersioning']),
  bucket('s3:PutBucketVersioning', 'config', 'Enable or suspend versioning.', ['PutBucketVersioning']),
  bucket('s3:GetLifecycleConfiguration', 'config', 'Read the lifecycle rules.', [
    'GetBucketLifecycleConfiguration',
  ]),
  bucket('s3:PutLifecycleConfiguration', 'config', 'Replace or delete the lifecycle rules.', [
    'PutBucketLifecycleConfiguration',
    'DeleteBucketLifecycle',
  ]),
  bucket('s3:GetBucketObjectLockConfiguration', 'config', 'Read the object-lock configuration.', [
    'GetObjectLockConfiguration',
  ]),
  bucket('s3:PutBucketObjectLockConfiguration', 'config', 'Set the default retention of a lock bucket.', [
    'PutObjectLockConfiguration',
  ]),
  bucket('s3:GetObjectRetention', 'read', 'Read a version’s retention.', ['GetObjectRetention']),
  bucket('s3:PutObjectRetention', 'write', 'Set or lengthen a version’s retention.', ['PutObjectRetention']),
  bucket('s3:GetObjectLegalHold', 'read', 'Read a version’s legal hold.', ['GetObjectLegalHold']),
  bucket('s3:PutObjectLegalHold', 'write', 'Place or remove a legal hold.', ['PutObjectLegalHold']),
  bucket(
    's3:BypassGovernanceRetention',
    'write',
    'Delete or shorten GOVERNANCE retention with x-amz-bypass-governance-retention.',
    ['DeleteObject', 'DeleteObjects', 'PutObjectRetention'],
  ),
  bucket('s3:GetEncryptionConfiguration', 'config', 'Read the bucket’s default encryption.', [
    'GetBucketEncryption',
  ]),
  bucket('s3:PutEncryptionConfiguration', 'config', 'Set or remove the bucket’s default encryption.', [
    'PutBucketEncryption',
    'DeleteBucketEncryption',
  ]),
  bucket('s3:GetBucketAcl', 'config', 'Read the bucket’s ACL.', ['GetBucketAcl']),
  bucket('s3:PutBucketAcl', 'config', 'Replace the bucket’s ACL (when its object ownership allows ACLs).', [
    'PutBucketAcl',
  ]),
  bucket('s3:GetObjectAcl', 'read', 'Read an object’s ACL.', ['GetObjectAcl']),
  bucket('s3:PutObjectAcl', 'write', 'Replace an object’s ACL, or write one with an upload (x-amz-acl).', [
    'PutObjectAcl',
  ]),
  bucket('s3:GetObjectVersionAcl', 'read', 'Read the ACL of a specific object version.', [
    'GetObjectAcl?versionId',
  ]),
  bucket('s3:PutObjectVersionAcl', 'write', 'Replace the ACL of a specific object version.', [
    'PutObjectAcl?versionId',
  ]),
  bucket('s3:GetBucketOwnershipControls', 'config', 'Read the bucket’s object ownership.', [
    'GetBucketOwnershipControls',
  ]),
  bucket('s3:PutBucketOwnershipControls', 'config', 'Set or remove the bucket’s object ownership.', [
    'PutBucketOwnershipControls',
    'DeleteBucketOwnershipControls',
  ]),
  bucket('s3:GetBucketPublicAccessBlock', 'config', 'Read the bucket’s public access block.', [
    'GetPublicAccessBlock',
  ]),
  bucket('s3:PutBucketPublicAccessBlock', 'config', 'Set or remove the bucket’s public access block.', [
    'PutPublicAccessBlock',
    'DeletePublicAccessBlock',
  ]),
  bucket('s3:GetBucketPolicy', 'config', 'Read the bucket policy.', ['GetBucketPolicy']),
  bucket('s3:PutBucketPolicy', 'config', 'Replace the bucket policy.', ['PutBucketPolicy']),
  bucket('s3:DeleteBucketPolicy', 'config', 'Remove the bucket policy.', ['DeleteBucketPolicy']),
  bucket('s3:GetBucketPolicyStatus', 'config', 'Read whether the bucket policy makes the bucket public.', [
    'GetBucketPolicyStatus',
  ]),
  bucket('s3:DeleteBucket', 'config', 'Delete the bucket through S3 (only when empty).', ['DeleteBucket']),
];

export const BUCKET_ACTIONS: readonly string[] = S3_ACTIONS.filter((a) => a.scope === 'bucket').map(
  (a) => a.action,
);
export const ACCOUNT_ACTIONS: readonly string[] = S3_ACTIONS.filter((a) => a.scope === 'account').map(
  (a) => a.action,
);

export interface StorageTier {
  tier: 'standard' | 'enterprise';
  name: string;
  description: string;
  is_default: boolean;
}

export const STORAGE_TIERS: readonly StorageTier[] = [
  {
    tier: 'standard',
    name: 'Standard',
    description: 'General-purpose object storage with the S3 protocol.',
    is_default: true,
  },
  {
    tier: 'enterprise',
    name: 'Enterprise',
    description: 'The same protocol and features, for workloads under an enterprise agreement.',
    is_default: false,
  },
];
export const TIER_NAMES = STORAGE_TIERS.map((t) => t.tier);

/** The one storage region, and the legacy spelling accepted for it (doc 1, Versioning §3). */
export const STORAGE_REGION = 'no';
export const LEGACY_REGION_SPELLINGS = ['no-oslo-1'];
/** The region clients sign S3 requests for. */
export const SIGNING_REGION = 'eu-north-1';

import * as access from './handlers/access.js';
import * as buckets from './handlers/buckets.js';
import * as configuration from './handlers/configuration.js';
import * as encryption from './handlers/encryption-config.js';
import * as lifecycle from './handlers/lifecycle.js';
import * as listing from './handlers/listing.js';
import * as objectLock from './handlers/object-lock.js';
import * as policy from './handlers/policy.js';
import { postObject } from './handlers/post-object.js';
import { OBJECT_OPERATIONS } from './object-operations.js';
import { notKept, op, type S3Operation, sub } from './operation-declare.js';

export type { S3Level, S3Operation } from './operation-declare.js';

/** Bucket sub-resources AWS has and Fjord does not keep, by the name of their GET operation. */
const UNKEPT_BUCKET_SUBRESOURCES: [string, string][] = [
  ['website', 'GetBucketWebsite'],
  ['replication', 'GetBucketReplication'],
  ['logging', 'GetBucketLogging'],
  ['notification', 'GetBucketNotificationConfiguration'],
  ['accelerate', 'GetBucketAccelerateConfiguration'],
  ['requestPayment', 'GetBucketRequestPayment'],
  ['analytics', 'GetBucketAnalyticsConfiguration'],
  ['metrics', 'GetBucketMetricsConfiguration'],
  ['inventory', 'GetBucketInventoryConfiguration'],
  ['intelligent-tiering', 'GetBucketIntelligentTieringConfiguration'],
];

/**
 * Every S3 operation Fjord answers. For one method and level the first whose selectors all match
 * is the request's operation, so a sub-resource comes before the plain form of its method.
 */
export const S3_OPERATIONS: readonly S3Operation[] = [
  op('ListBuckets', 'GET', 'service', 's3:ListAllMyBuckets', buckets.listBuckets),

  op(
    'GetBucketLocation',
    'GET',
    'bucket',
    's3:GetBucketLocation',
    buckets.getBucketLocation,
    sub('location'),
  ),
  op('GetBucketCors', 'GET', 'bucket', 's3:GetBucketCORS', configuration.getCors, sub('cors')),
  op(
    'GetBucketVersioning',
    'GET',
    'bucket',
    's3:GetBucketVersioning',
    configuration.getVersioning,
    sub('versioning'),
  ),
  op(
    'GetBucketLifecycleConfiguration',
    'GET',
    'bucket',
    's3:GetLifecycleConfiguration',
    lifecycle.getLifecycle,
    sub('lifecycle'),
  ),
  op(
    'ListMultipartUploads',
    'GET',
    'bucket',
    's3:ListBucketMultipartUploads',
    listing.listMultipartUploads,
    sub('uploads'),
  ),
  op(
    'ListObjectVersions',
    'GET',
    'bucket',
    's3:ListBucketVersions',
    listing.listObjectVersions,
    sub('versions'),
  ),
  op(
    'GetObjectLockConfiguration',
    'GET',
    'bucket',
    's3:GetBucketObjectLockConfiguration',
    objectLock.getObjectLockConfiguration,
    sub('object-lock'),
  ),
  op(
    'GetBucketEncryption',
    'GET',
    'bucket',
    's3:GetEncryptionConfiguration',
    encryption.getBucketEncryption,
    sub('encryption'),
  ),
  op('GetBucketAcl', 'GET', 'bucket', 's3:GetBucketAcl', access.getBucketAcl, sub('acl')),
  op(
    'GetBucketOwnershipControls',
    'GET',
    'bucket',
    's3:GetBucketOwnershipControls',
    access.getOwnershipControls,
    sub('ownershipControls'),
  ),
  op(
    'GetPublicAccessBlock',
    'GET',
    'bucket',
    's3:GetBucketPublicAccessBlock',
    access.getPublicAccessBlock,
    sub('publicAccessBlock'),
  ),
  op('GetBucketPolicy', 'GET', 'bucket', 's3:GetBucketPolicy', policy.getBucketPolicy, sub('policy')),
  op(
    'GetBucketPolicyStatus',
    'GET',
    'bucket',
    's3:GetBucketPolicyStatus',
    policy.getBucketPolicyStatus,
    sub('policyStatus'),
  ),
  op(
    'GetBucketTagging',
    'GET',
    'bucket',
    's3:GetBucketTagging',
    configuration.getBucketTagging,
    sub('tagging'),
  ),
  ...UNKEPT_BUCKET_SUBRESOURCES.map(([q, name]) =>
    op(name, 'GET', 'bucket', 's3:ListBucket', notKept(), sub(q)),
  ),
  op('ListObjectsV2', 'GET', 'bucket', 's3:ListBucket', listing.listObjects, sub('list-type')),
  op('ListObjects', 'GET', 'bucket', 's3:ListBucket', listing.listObjects),
  op('HeadBucket', 'HEAD', 'bucket', 's3:ListBucket', buckets.headBucket),

  op('PutBucketCors', 'PUT', 'bucket', 's3:PutBucketCORS', configuration.putCors, sub('cors')),
  op(
    'PutBucketVersioning',
    'PUT',
    'bucket',
    's3:PutBucketVersioning',
    configuration.putVersioning,
    sub('versioning'),
  ),
  op(
    'PutBucketLifecycleConfiguration',
    'PUT',
    'bucket',
    's3:PutLifecycleConfiguration',
    lifecycle.putLifecycle,
    sub('lifecycle'),
  ),
  op(
    'PutBucketEncryption',
    'PUT',
    'bucket',
    's3:PutEncryptionConfiguration',
    encryption.putBucketEncryption,
    sub('encryption'),
  ),
  op(
    'PutObjectLockConfiguration',
    'PUT',
    'bucket',
    's3:PutBucketObjectLockConfiguration',
    objectLock.putObjectLockConfiguration,
    sub('object-lock'),
  ),
  op('PutBucketAcl', 'PUT', 'bucket', 's3:PutBucketAcl', access.putBucketAcl, sub('acl')),
  op(
    'PutBucketOwnershipControls',
    'PUT',
    'bucket',
    's3:PutBucketOwnershipControls',
    access.putOwnershipControls,
    sub('ownershipControls'),
  ),
  op(
    'PutPublicAccessBlock',
    'PUT',
    'bucket',
    's3:PutBucketPublicAccessBlock',
    access.putPublicAccessBlock,
    sub('publicAccessBlock'),
  ),
  op('PutBucketPolicy', 'PUT', 'bucket', 's3:PutBucketPolicy', policy.putBucketPolicy, sub('policy')),
  op(
    'PutBucketTagging',
    'PUT',
    'bucket',
    's3:PutBucketTagging',
    configuration.putBucketTagging,
    sub('tagging'),
  ),
  // Creating a bucket is allowed by the caller's key, not by a policy of a bucket not yet there.
  op('CreateBucket', 'PUT', 'bucket', 's3:CreateBucket', buckets.createBucket, { bareQuery: true }),
  op('PutBucketUnsupported', 'PUT', 'bucket', 's3:ListBucket', notKept()),

  op('DeleteBucketCors', 'DELETE', 'bucket', 's3:PutBucketCORS', configuration.deleteCors, sub('cors')),
  op(
    'DeleteBucketLifecycle',
    'DELETE',
    'bucket',
    's3:PutLifecycleConfiguration',
    lifecycle.deleteLifecycle,
    sub('lifecycle'),
  ),
  op(
    'DeleteBucketEncryption',
    'DELETE',
    'bucket',
    's3:PutEncryptionConfiguration',
    encryption.deleteBucketEncryption,
    sub('encryption'),
  ),
  op(
    'DeleteBucketOwnershipControls',
    'DELETE',
    'bucket',
    's3:PutBucketOwnershipControls',
    access.deleteOwnershipControls,
    sub('ownershipControls'),
  ),
  op(
    'DeletePublicAccessBlock',
    'DELETE',
    'bucket',
    's3:PutBucketPublicAccessBlock',
    access.deletePublicAccessBlock,
    sub('publicAccessBlock'),
  ),
  op(
    'DeleteBucketPolicy',
    'DELETE',
    'bucket',
    's3:DeleteBucketPolicy',
    policy.deleteBucketPolicy,
    sub('policy'),
  ),
  op(
    'DeleteBucketTagging',
    'DELETE',
    'bucket',
    's3:PutBucketTagging',
    configuration.deleteBucketTagging,
    sub('tagging'),
  ),
  op('DeleteBucket', 'DELETE', 'bucket', 's3:DeleteBucket', buckets.deleteBucket, { bareQuery: true }),
  op('DeleteBucketUnsupported', 'DELETE', 'bucket', 's3:ListBucket', notKept()),

  // Each key is authorised on its own too (s3:DeleteObject, per object, in the handler).
  op('DeleteObjects', 'POST', 'bucket', 's3:DeleteObject', buckets.deleteObjects, sub('delete')),
  op('PostObject', 'POST', 'bucket', 's3:PutObject', postObject, {
    contentType: /^multipart\/form-data/i,
    formAuth: true,
  }),

  ...OBJECT_OPERATIONS,
];

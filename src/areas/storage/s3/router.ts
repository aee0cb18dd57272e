import type { S3Call } from './context.js';
import { s3Errors } from './errors.js';
import {
  deleteOwnershipControls,
  deletePublicAccessBlock,
  getBucketAcl,
  getObjectAcl,
  getOwnershipControls,
  getPublicAccessBlock,
  putBucketAcl,
  putObjectAcl,
  putOwnershipControls,
  putPublicAccessBlock,
} from './handlers/access.js';
import {
  createBucket,
  deleteBucket,
  deleteObjects,
  getBucketLocation,
  headBucket,
  listBuckets,
} from './handlers/buckets.js';
import {
  deleteBucketTagging,
  deleteCors,
  deleteObjectTagging,
  getBucketTagging,
  getCors,
  getObjectTagging,
  getVersioning,
  putBucketTagging,
  putCors,
  putObjectTagging,
  putVersioning,
} from './handlers/configuration.js';
import {
  deleteBucketEncryption,
  getBucketEncryption,
  putBucketEncryption,
} from './handlers/encryption-config.js';
import { deleteLifecycle, getLifecycle, putLifecycle } from './handlers/lifecycle.js';
import { listMultipartUploads, listObjects, listObjectVersions } from './handlers/listing.js';
import {
  abortMultipartUpload,
  completeMultipartUpload,
  createMultipartUpload,
  listParts,
  uploadPart,
} from './handlers/multipart.js';
import { getObjectAttributes } from './handlers/object-attributes.js';
import {
  getObjectLegalHold,
  getObjectLockConfiguration,
  getObjectRetention,
  putObjectLegalHold,
  putObjectLockConfiguration,
  putObjectRetention,
} from './handlers/object-lock.js';
import { copyObject, deleteObject, getObject, putObject } from './handlers/objects.js';
import {
  deleteBucketPolicy,
  getBucketPolicy,
  getBucketPolicyStatus,
  putBucketPolicy,
} from './handlers/policy.js';
import { postObject } from './handlers/post-object.js';

/** Which S3 operation a request is, from its method, address and sub-resource. */

export async function routeService(call: S3Call): Promise<void> {
  if (call.req.method === 'GET') return listBuckets(call);
  throw s3Errors.methodNotAllowed();
}

export async function routeBucket(call: S3Call): Promise<void> {
  const q = call.query;
  switch (call.req.method) {
    case 'GET':
      if (q.has('location')) return getBucketLocation(call);
      if (q.has('cors')) return getCors(call);
      if (q.has('versioning')) return getVersioning(call);
      if (q.has('lifecycle')) return getLifecycle(call);
      if (q.has('uploads')) return listMultipartUploads(call);
      if (q.has('versions')) return listObjectVersions(call);
      if (q.has('object-lock')) return getObjectLockConfiguration(call);
      if (q.has('encryption')) return getBucketEncryption(call);
      if (q.has('acl')) return getBucketAcl(call);
      if (q.has('ownershipControls')) return getOwnershipControls(call);
      if (q.has('publicAccessBlock')) return getPublicAccessBlock(call);
      if (q.has('policy')) return getBucketPolicy(call);
      if (q.has('policyStatus')) return getBucketPolicyStatus(call);
      if (q.has('tagging')) return getBucketTagging(call);
      if (
        q.has('website') ||
        q.has('replication') ||
        q.has('logging') ||
        q.has('notification') ||
        q.has('accelerate') ||
        q.has('requestPayment') ||
        q.has('analytics') ||
        q.has('metrics') ||
        q.has('inventory') ||
        q.has('intelligent-tiering')
      ) {
        await call.requireBucket('s3:ListBucket');
        throw s3Errors.notImplemented();
      }
      return listObjects(call);
    case 'HEAD':
      return headBucket(call);
    case 'PUT':
      if (q.has('cors')) return putCors(call);
      if (q.has('versioning')) return putVersioning(call);
      if (q.has('lifecycle')) return putLifecycle(call);
      if (q.has('encryption')) return putBucketEncryption(call);
      if (q.has('object-lock')) return putObjectLockConfiguration(call);
      if (q.has('acl')) return putBucketAcl(call);
      if (q.has('ownershipControls')) return putOwnershipControls(call);
      if (q.has('publicAccessBlock')) return putPublicAccessBlock(call);
      if (q.has('policy')) return putBucketPolicy(call);
      if (q.has('tagging')) return putBucketTagging(call);
      if (q.size > 0 && !q.has('x-id')) {
        await call.requireBucket('s3:ListBucket');
        throw s3Errors.notImplemented();
      }
      return createBucket(call);
    case 'DELETE':
      if (q.has('cors')) return deleteCors(call);
      if (q.has('lifecycle')) return deleteLifecycle(call);
      if (q.has('encryption')) return deleteBucketEncryption(call);
      if (q.has('ownershipControls')) return deleteOwnershipControls(call);
      if (q.has('publicAccessBlock')) return deletePublicAccessBlock(call);
      if (q.has('policy')) return deleteBucketPolicy(call);
      if (q.has('tagging')) return deleteBucketTagging(call);
      if (q.size > 0 && !q.has('x-id')) {
        await call.requireBucket('s3:ListBucket');
        throw s3Errors.notImplemented();
      }
      return deleteBucket(call);
    case 'POST':
      if (q.has('delete')) return deleteObjects(call);
      if (/^multipart\/form-data/i.test(call.header('content-type') ?? '')) return postObject(call);
      throw s3Errors.methodNotAllowed();
    default:
      throw s3Errors.methodNotAllowed();
  }
}

export async function routeObject(call: S3Call): Promise<void> {
  const q = call.query;
  switch (call.req.method) {
    case 'GET':
    case 'HEAD':
      if (q.has('uploadId') && call.req.method === 'GET') return listParts(call);
      if (q.has('tagging') && call.req.method === 'GET') return getObjectTagging(call);
      if (q.has('retention') && call.req.method === 'GET') return getObjectRetention(call);
      if (q.has('legal-hold') && call.req.method === 'GET') return getObjectLegalHold(call);
      if (q.has('attributes') && call.req.method === 'GET') return getObjectAttributes(call);
      // BitTorrent files are not served: refused, never answered with the object's bytes.
      if (q.has('torrent')) {
        await call.requireBucket('s3:GetObject');
        throw s3Errors.notImplemented('Fjord does not serve objects over BitTorrent (GetObjectTorrent).');
      }
      if (q.has('acl') && call.req.method === 'GET') return getObjectAcl(call);
      return getObject(call);
    case 'PUT':
      if (q.has('partNumber') && q.has('uploadId')) return uploadPart(call);
      if (q.has('tagging')) return putObjectTagging(call);
      if (q.has('retention')) return putObjectRetention(call);
      if (q.has('legal-hold')) return putObjectLegalHold(call);
      if (q.has('acl')) return putObjectAcl(call);
      if (call.header('x-amz-copy-source')) return copyObject(call);
      return putObject(call);
    case 'DELETE':
      if (q.has('uploadId')) return abortMultipartUpload(call);
      if (q.has('tagging')) return deleteObjectTagging(call);
      return deleteObject(call);
    case 'POST':
      if (q.has('uploads')) return createMultipartUpload(call);
      if (q.has('uploadId')) return completeMultipartUpload(call);
      throw s3Errors.methodNotAllowed();
    default:
      throw s3Errors.methodNotAllowed();
  }
}

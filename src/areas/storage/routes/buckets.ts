import { defineRoute } from '../../../kernel/http/route.js';
import {
  Bucket,
  BucketList,
  BucketListQuery,
  BucketParams,
  CreateBucketBody,
  CreatedBucket,
  Success,
  Visibility,
  VisibilityBody,
} from '../schemas.js';
import type { StorageService } from '../service.js';
import { storageRead, storageWrite, TAG } from './access.js';

export function bucketRoutes(storage: StorageService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/storage/buckets',
      operationId: 'listStorageBuckets',
      tag: TAG,
      summary: 'List buckets',
      description:
        'An array of buckets, oldest first (empty when none). With `page` or `per_page` the answer takes the older `{buckets, total}` form. Every bucket carries the current and the older field names.',
      access: storageRead,
      query: BucketListQuery,
      response: { 200: BucketList },
      handler: async ({ principal, query }) => {
        const buckets = await storage.listBuckets(principal.customerId);
        if (query.page === undefined && query.per_page === undefined) return buckets;
        const size = query.per_page ?? 100;
        const start = ((query.page ?? 1) - 1) * size;
        return { buckets: buckets.slice(start, start + size), total: buckets.length };
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/storage/buckets',
      operationId: 'createStorageBucket',
      tag: TAG,
      summary: 'Create a bucket and its default key',
      description:
        'Names are unique across all customers and never reused after deletion (409). The default key’s `secret_key` is shown once, in this response.',
      access: storageWrite,
      body: CreateBucketBody,
      response: { 201: CreatedBucket },
      errors: [409],
      handler: async ({ principal, body }) =>
        storage.createBucket(principal.customerId, principal.credential, {
          name: body.bucket_name,
          tier: body.tier,
          region: body.region,
          isPublic: body.is_public,
          objectLockEnabled: body.object_lock_enabled,
        }),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/storage/buckets/:bucket_name',
      operationId: 'getStorageBucket',
      tag: TAG,
      summary: 'Get a bucket with its usage',
      access: storageRead,
      params: BucketParams,
      response: { 200: Bucket },
      errors: [404],
      handler: async ({ principal, params }) => storage.getBucket(principal.customerId, params.bucket_name),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/storage/buckets/:bucket_name',
      operationId: 'deleteStorageBucket',
      tag: TAG,
      summary: 'Delete an empty bucket',
      description:
        'Only an empty bucket (no object, version or incomplete multipart upload) can be deleted (409 `bucket_not_empty`). Its keys stop working at once, and its name can never be used again.',
      access: storageWrite,
      params: BucketParams,
      response: { 200: Success },
      errors: [404, 409],
      handler: async ({ principal, params }) =>
        storage.deleteBucket(principal.customerId, principal.credential, params.bucket_name),
    }),
    defineRoute({
      method: 'PATCH',
      url: '/v1/storage/buckets/:bucket_name/visibility',
      operationId: 'setStorageBucketVisibility',
      tag: TAG,
      summary: 'Make a bucket public or private',
      description:
        'A public bucket lets anonymous clients read (GET, HEAD, list) its objects; writes always need a key. This is the S3 bucket ACL `public-read` (set it either way: the two are one setting). A bucket whose public access block (or the operator’s) blocks public ACLs cannot be made public (409 `public_access_blocked`).',
      access: storageWrite,
      params: BucketParams,
      body: VisibilityBody,
      response: { 200: Visibility },
      errors: [404, 409],
      handler: async ({ principal, params, body }) =>
        storage.setVisibility(principal.customerId, principal.credential, params.bucket_name, body.is_public),
    }),
  ];
}

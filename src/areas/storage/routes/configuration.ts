import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../../kernel/http/route.js';
import {
  BucketParams,
  CorsBody,
  CorsDocument,
  LifecycleBody,
  LifecycleDocument,
  ObjectLock,
  Versioning,
  VersioningBody,
} from '../schemas.js';
import type { StorageService } from '../service.js';
import { storageRead, storageWrite, TAG } from './access.js';

const Empty = Type.Null({ description: 'No content' });

/** Per-bucket documents: CORS, lifecycle, versioning, object lock. */
export function configurationRoutes(storage: StorageService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/storage/buckets/:bucket_name/cors',
      operationId: 'getStorageBucketCors',
      tag: TAG,
      summary: 'Get the CORS document',
      description: '404 `cors_not_found` when the bucket has none.',
      access: storageRead,
      params: BucketParams,
      response: { 200: CorsDocument },
      errors: [404],
      handler: async ({ principal, params }) =>
        storage.settings.getCors(principal.customerId, params.bucket_name),
    }),
    defineRoute({
      method: 'PUT',
      url: '/v1/storage/buckets/:bucket_name/cors',
      operationId: 'putStorageBucketCors',
      tag: TAG,
      summary: 'Replace the CORS document',
      description:
        '1-100 rules. Origins are `*` or `scheme://host[:port]` without a path; methods GET, PUT, HEAD, POST, DELETE, OPTIONS; `max_age_seconds` 0-86400. The S3 endpoint answers preflights from it at once (GetBucketCors shows the same document).',
      access: storageWrite,
      params: BucketParams,
      body: CorsBody,
      response: { 200: CorsDocument },
      errors: [404],
      handler: async ({ principal, params, body }) =>
        storage.settings.putCors(principal.customerId, principal.credential, params.bucket_name, body.rules),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/storage/buckets/:bucket_name/cors',
      operationId: 'deleteStorageBucketCors',
      tag: TAG,
      summary: 'Remove the CORS document',
      description: 'Idempotent, as S3 DeleteBucketCors: 204 whether or not a document was set.',
      access: storageWrite,
      params: BucketParams,
      response: { 204: Empty },
      errors: [404],
      handler: async ({ principal, params }) => {
        await storage.settings.deleteCors(principal.customerId, principal.credential, params.bucket_name);
        return null;
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/storage/buckets/:bucket_name/lifecycle',
      operationId: 'getStorageBucketLifecycle',
      tag: TAG,
      summary: 'Get the lifecycle rules',
      description: '404 `lifecycle_not_found` when the bucket has none.',
      access: storageRead,
      params: BucketParams,
      response: { 200: LifecycleDocument },
      errors: [404],
      handler: async ({ principal, params }) =>
        storage.settings.getLifecycle(principal.customerId, params.bucket_name),
    }),
    defineRoute({
      method: 'PUT',
      url: '/v1/storage/buckets/:bucket_name/lifecycle',
      operationId: 'putStorageBucketLifecycle',
      tag: TAG,
      summary: 'Replace the lifecycle rules',
      description:
        '1-1000 rules, each with a `prefix` filter and at least one of `expiration_days`, `noncurrent_version_expiration_days`, `abort_incomplete_multipart_upload_days` (1-36500). `newer_noncurrent_versions` (1-100, with `noncurrent_version_expiration_days`) keeps that many of the newest noncurrent versions of each key however old. Applied hourly by the `storage.lifecycle` job.',
      access: storageWrite,
      params: BucketParams,
      body: LifecycleBody,
      response: { 200: LifecycleDocument },
      errors: [404],
      handler: async ({ principal, params, body }) =>
        storage.settings.putLifecycle(
          principal.customerId,
          principal.credential,
          params.bucket_name,
          body.rules,
        ),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/storage/buckets/:bucket_name/lifecycle',
      operationId: 'deleteStorageBucketLifecycle',
      tag: TAG,
      summary: 'Remove the lifecycle rules',
      description: 'Idempotent: 204 whether or not rules were set.',
      access: storageWrite,
      params: BucketParams,
      response: { 204: Empty },
      errors: [404],
      handler: async ({ principal, params }) => {
        await storage.settings.deleteLifecycle(
          principal.customerId,
          principal.credential,
          params.bucket_name,
        );
        return null;
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/storage/buckets/:bucket_name/versioning',
      operationId: 'getStorageBucketVersioning',
      tag: TAG,
      summary: 'Get the versioning state',
      description:
        '`Unversioned` until versioning is first enabled; then `Enabled` or `Suspended`, as in S3.',
      access: storageRead,
      params: BucketParams,
      response: { 200: Versioning },
      errors: [404],
      handler: async ({ principal, params }) =>
        storage.settings.getVersioning(principal.customerId, params.bucket_name),
    }),
    defineRoute({
      method: 'PUT',
      url: '/v1/storage/buckets/:bucket_name/versioning',
      operationId: 'putStorageBucketVersioning',
      tag: TAG,
      summary: 'Enable or suspend versioning',
      description:
        'As S3 PutBucketVersioning: a bucket never returns to `Unversioned`; a bucket with object lock cannot be suspended (409 `invalid_bucket_state`).',
      access: storageWrite,
      params: BucketParams,
      body: VersioningBody,
      response: { 200: Versioning },
      errors: [404, 409],
      handler: async ({ principal, params, body }) =>
        storage.settings.putVersioning(
          principal.customerId,
          principal.credential,
          params.bucket_name,
          body.status,
        ),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/storage/buckets/:bucket_name/object-lock',
      operationId: 'getStorageBucketObjectLock',
      tag: TAG,
      summary: 'Get the object-lock configuration',
      description:
        'Object lock is chosen when the bucket is created (`object_lock_enabled`) and needs versioning.',
      access: storageRead,
      params: BucketParams,
      response: { 200: ObjectLock },
      errors: [404],
      handler: async ({ principal, params }) =>
        storage.settings.getObjectLock(principal.customerId, params.bucket_name),
    }),
  ];
}

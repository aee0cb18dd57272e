import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../../kernel/http/route.js';
import {
  AccountKey,
  BucketKey,
  BucketKeyParams,
  BucketParams,
  CreateAccountKeyBody,
  CreateBucketKeyBody,
  CreatedAccountKey,
  CreatedBucketKey,
  KeyParams,
  LegacyCredentials,
  Success,
  UpdateAccountKeyBody,
  UpdateBucketKeyBody,
} from '../schemas.js';
import type { StorageService } from '../service.js';
import { storageRead, storageWrite, TAG } from './access.js';

export function keyRoutes(storage: StorageService) {
  const keys = storage.keys;
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/storage/buckets/:bucket_name/keys',
      operationId: 'listStorageBucketKeys',
      tag: TAG,
      summary: 'List a bucket’s keys (never their secrets)',
      access: storageRead,
      params: BucketParams,
      response: { 200: Type.Array(BucketKey) },
      errors: [404],
      handler: async ({ principal, params }) =>
        keys.listBucketKeys(await storage.bucket(principal.customerId, params.bucket_name)),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/storage/buckets/:bucket_name/keys',
      operationId: 'createStorageBucketKey',
      tag: TAG,
      summary: 'Create a key for a bucket',
      description:
        '`actions` are names from `GET /v1/storage/actions` with scope `bucket`; omitted (or null) gives full access (`full_access: true`). The `secret_key` is shown once, in this response.',
      access: storageWrite,
      params: BucketParams,
      body: CreateBucketKeyBody,
      response: { 201: CreatedBucketKey },
      errors: [404, 409],
      handler: async ({ principal, params, body }) =>
        keys.createBucketKey(
          await storage.bucket(principal.customerId, params.bucket_name),
          principal.credential,
          {
            name: body.name,
            description: body.description ?? null,
            actions: body.actions ?? null,
          },
        ),
    }),
    defineRoute({
      method: 'PATCH',
      url: '/v1/storage/buckets/:bucket_name/keys/:key_id',
      operationId: 'updateStorageBucketKey',
      tag: TAG,
      summary: 'Rename a key or replace its grants',
      description:
        'Sending `actions` replaces the key’s grants (null restores full access); the change applies to the next S3 request.',
      access: storageWrite,
      params: BucketKeyParams,
      body: UpdateBucketKeyBody,
      response: { 200: BucketKey },
      errors: [404],
      handler: async ({ principal, params, body }) =>
        keys.updateBucketKey(
          await storage.bucket(principal.customerId, params.bucket_name),
          principal.credential,
          params.key_id,
          body,
        ),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/storage/buckets/:bucket_name/keys/:key_id',
      operationId: 'deleteStorageBucketKey',
      tag: TAG,
      summary: 'Delete a bucket key (not the default key)',
      description: 'The key stops working at once. The default key goes only with its bucket (409).',
      access: storageWrite,
      params: BucketKeyParams,
      response: { 200: Success },
      errors: [404, 409],
      handler: async ({ principal, params }) =>
        keys.deleteBucketKey(
          await storage.bucket(principal.customerId, params.bucket_name),
          principal.credential,
          params.key_id,
        ),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/storage/keys',
      operationId: 'listStorageAccountKeys',
      tag: TAG,
      summary: 'List account-level S3 keys (never their secrets)',
      access: storageRead,
      response: { 200: Type.Array(AccountKey) },
      handler: async ({ principal }) => keys.listAccountKeys(principal.customerId),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/storage/keys',
      operationId: 'createStorageAccountKey',
      tag: TAG,
      summary: 'Create an account-level S3 key over several buckets',
      description:
        '`buckets` grants actions per bucket (`bucket_name` `*` is every bucket of the account, present and future; `actions` omitted is full access on it). `actions` holds account-level actions: `s3:ListAllMyBuckets`, and `s3:CreateBucket` to create buckets through S3 (the key gets full access to those). The `secret_key` is shown once.',
      access: storageWrite,
      body: CreateAccountKeyBody,
      response: { 201: CreatedAccountKey },
      errors: [409],
      handler: async ({ principal, body }) =>
        keys.createAccountKey(principal.customerId, principal.credential, {
          name: body.name,
          description: body.description ?? null,
          actions: body.actions ?? [],
          buckets: body.buckets ?? [],
        }),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/storage/keys/:key_id',
      operationId: 'getStorageAccountKey',
      tag: TAG,
      summary: 'Get an account-level S3 key',
      access: storageRead,
      params: KeyParams,
      response: { 200: AccountKey },
      errors: [404],
      handler: async ({ principal, params }) => keys.getAccountKey(principal.customerId, params.key_id),
    }),
    defineRoute({
      method: 'PATCH',
      url: '/v1/storage/keys/:key_id',
      operationId: 'updateStorageAccountKey',
      tag: TAG,
      summary: 'Rename an account key or replace its grants',
      description: '`actions` and `buckets`, when sent, each replace what the key had.',
      access: storageWrite,
      params: KeyParams,
      body: UpdateAccountKeyBody,
      response: { 200: AccountKey },
      errors: [404],
      handler: async ({ principal, params, body }) =>
        keys.updateAccountKey(principal.customerId, principal.credential, params.key_id, body),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/storage/keys/:key_id',
      operationId: 'deleteStorageAccountKey',
      tag: TAG,
      summary: 'Delete an account-level S3 key',
      description: 'The key stops working at once.',
      access: storageWrite,
      params: KeyParams,
      response: { 200: Success },
      errors: [404],
      handler: async ({ principal, params }) =>
        keys.deleteAccountKey(principal.customerId, principal.credential, params.key_id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/storage/credentials',
      operationId: 'getStorageCredentials',
      tag: TAG,
      summary: 'S3 credentials of the account (older form)',
      description:
        'The older form: one account-level key with every right on every bucket, made on the first call and listed under `/v1/storage/keys`. Its secret is returned on every call (this form has no other way to hand it out), so the route needs write access; delete the key to rotate it.',
      access: storageWrite,
      response: { 200: LegacyCredentials },
      handler: async ({ principal }) => keys.legacyCredentials(principal.customerId, principal.credential),
    }),
  ];
}

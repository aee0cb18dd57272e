import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../../kernel/http/route.js';
import type { KmsKeyService } from '../kms-keys.js';
import { CreateKmsKeyBody, KmsKey, KmsKeyParams, ScheduleKmsKeyDeletionBody } from '../kms-schemas.js';
import { storageRead, storageWrite, TAG } from './access.js';

/** SSE-KMS keys of the account (docs/s3.md, "SSE-KMS"). */
export function kmsKeyRoutes(kms: KmsKeyService) {
  const action = (
    verb: 'rotate' | 'disable' | 'enable' | 'cancel-deletion',
    operationId: string,
    summary: string,
    description: string,
    run: (customerId: string, actor: Parameters<KmsKeyService['rotate']>[1], id: string) => Promise<unknown>,
  ) =>
    defineRoute({
      method: 'POST',
      url: `/v1/storage/kms-keys/:key_id/${verb}`,
      operationId,
      tag: TAG,
      summary,
      description,
      access: storageWrite,
      params: KmsKeyParams,
      response: { 200: KmsKey },
      errors: [404, 409],
      handler: async ({ principal, params }) =>
        run(principal.customerId, principal.credential, params.key_id) as ReturnType<KmsKeyService['get']>,
    });
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/storage/kms-keys',
      operationId: 'listStorageKmsKeys',
      tag: TAG,
      summary: 'List the account’s SSE-KMS keys',
      description:
        'Includes the default key (`alias/aws/s3`) once S3 has made it. Key material is never shown.',
      access: storageRead,
      response: { 200: Type.Array(KmsKey) },
      handler: async ({ principal }) => kms.list(principal.customerId),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/storage/kms-keys',
      operationId: 'createStorageKmsKey',
      tag: TAG,
      summary: 'Create an SSE-KMS key',
      description:
        'A random 256-bit key, kept sealed with the server’s data key. S3 requests name it by `key_id`, `arn` or `alias` in `x-amz-server-side-encryption-aws-kms-key-id`. The number of keys per account is limited by plan (`storage.kms_keys`, 409 `kms_key_limit_reached`).',
      access: storageWrite,
      body: CreateKmsKeyBody,
      response: { 201: KmsKey },
      errors: [409],
      handler: async ({ principal, body }) =>
        kms.create(principal.customerId, principal.credential, {
          alias: body.alias ?? null,
          description: body.description ?? null,
        }),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/storage/kms-keys/:key_id',
      operationId: 'getStorageKmsKey',
      tag: TAG,
      summary: 'Get an SSE-KMS key',
      description: '`key_id` may be the key id, its ARN or its alias.',
      access: storageRead,
      params: KmsKeyParams,
      response: { 200: KmsKey },
      errors: [404],
      handler: async ({ principal, params }) => kms.get(principal.customerId, params.key_id),
    }),
    action(
      'rotate',
      'rotateStorageKmsKey',
      'Rotate an SSE-KMS key',
      'Adds a key version that wraps new objects’ data keys from now on; objects sealed under older versions stay readable. 409 `kms_key_invalid_state` while the key is pending deletion.',
      (c, a, id) => kms.rotate(c, a, id),
    ),
    action(
      'disable',
      'disableStorageKmsKey',
      'Disable an SSE-KMS key',
      'S3 refuses reads and writes of objects under the key (400 `KMS.DisabledException`) until it is enabled again. 409 `kms_key_invalid_state` while the key is pending deletion (cancel the deletion first).',
      (c, a, id) => kms.setState(c, a, id, 'Disabled'),
    ),
    action(
      'enable',
      'enableStorageKmsKey',
      'Enable an SSE-KMS key',
      'Objects under the key can be read and written again. 409 `kms_key_invalid_state` while the key is pending deletion (cancel the deletion first).',
      (c, a, id) => kms.setState(c, a, id, 'Enabled'),
    ),
    defineRoute({
      method: 'POST',
      url: '/v1/storage/kms-keys/:key_id/schedule-deletion',
      operationId: 'scheduleStorageKmsKeyDeletion',
      tag: TAG,
      summary: 'Schedule an SSE-KMS key’s deletion',
      description:
        'The key becomes `PendingDeletion` at once: S3 refuses writes under it and reads of its objects (400 `KMS.KMSInvalidStateException`). When `pending_window_days` (7-30, default 30) have passed, the key material is destroyed and its objects can never be read again; until then the deletion can be cancelled. 409 `kms_key_not_deletable` for the default key (`alias/aws/s3`), 409 `kms_key_invalid_state` when deletion is already scheduled.',
      access: storageWrite,
      params: KmsKeyParams,
      body: Type.Optional(ScheduleKmsKeyDeletionBody),
      response: { 200: KmsKey },
      errors: [404, 409],
      handler: async ({ principal, params, body }) =>
        kms.scheduleDeletion(
          principal.customerId,
          principal.credential,
          params.key_id,
          body?.pending_window_days ?? 30,
        ),
    }),
    action(
      'cancel-deletion',
      'cancelStorageKmsKeyDeletion',
      'Cancel an SSE-KMS key’s scheduled deletion',
      'The key comes back `Disabled` (as on AWS KMS): enable it to read and write its objects again. 409 `kms_key_invalid_state` when no deletion is scheduled.',
      (c, a, id) => kms.cancelDeletion(c, a, id),
    ),
  ];
}

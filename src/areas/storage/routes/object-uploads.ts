import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../../kernel/http/route.js';
import { BucketParams } from '../schemas.js';
import { storageWrite, TAG } from './access.js';
import { ERRORS, type OwnerRun } from './objects.js';

const KeyQuery = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 1024, description: "The object's key" }),
});
const UploadParams = Type.Object({
  bucket_name: BucketParams.properties.bucket_name,
  upload_id: Type.String({ minLength: 1, maxLength: 1024, description: 'From `UploadId` of the start' }),
});
const PartQuery = Type.Object({
  key: KeyQuery.properties.key,
  part_number: Type.Integer({ minimum: 1, maximum: 10000, description: 'The part, 1-10000' }),
});

/**
 * A multipart upload by a bucket's owner through the API (the console's object browser, for a file
 * larger than one PUT may carry): start, parts, complete, abort. Each runs S3's own handler, as
 * the object routes do, so part sizes, the part limit and the bucket's rules are S3's.
 */
export function objectUploadRoutes(run: OwnerRun) {
  return [
    defineRoute({
      method: 'POST',
      url: '/v1/storage/buckets/:bucket_name/uploads',
      operationId: 'startStorageMultipartUpload',
      tag: TAG,
      summary: 'Start a multipart upload of an object (S3 CreateMultipartUpload)',
      description:
        "For objects larger than one `PUT …/object` may carry (5 GiB), up to 5 TiB: the answer is S3's `InitiateMultipartUploadResult` document with its `UploadId`. `Content-Type` becomes the object's type. Then send the parts, and complete.",
      access: storageWrite,
      params: BucketParams,
      query: KeyQuery,
      rawBody: true,
      produces: 'application/xml',
      idempotency: false,
      response: { 200: Type.String({ description: 'S3 InitiateMultipartUploadResult XML' }) },
      errors: ERRORS,
      handler: async ({ principal, params, query, raw, reply }) => {
        await run(
          principal,
          params.bucket_name,
          query.key,
          new URLSearchParams({ uploads: '' }),
          raw.raw,
          reply,
        );
      },
    }),
    defineRoute({
      method: 'PUT',
      url: '/v1/storage/buckets/:bucket_name/uploads/:upload_id',
      operationId: 'putStorageUploadPart',
      tag: TAG,
      summary: 'Send one part of a multipart upload (S3 UploadPart)',
      description:
        "The body is the part as sent: 5 MiB to 5 GiB, except the last, which may be smaller; at most 10,000 parts. The answer's `ETag` names the part in the completion.",
      access: storageWrite,
      params: UploadParams,
      query: PartQuery,
      rawBody: true,
      idempotency: false,
      response: { 200: Type.Null() },
      errors: [...ERRORS, 411],
      handler: async ({ principal, params, query, raw, reply }) => {
        const q = new URLSearchParams({ partNumber: String(query.part_number), uploadId: params.upload_id });
        await run(principal, params.bucket_name, query.key, q, raw.raw, reply);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/storage/buckets/:bucket_name/uploads/:upload_id',
      operationId: 'completeStorageMultipartUpload',
      tag: TAG,
      summary: 'Complete a multipart upload (S3 CompleteMultipartUpload): the parts become the object',
      description:
        "The body is S3's `CompleteMultipartUpload` document: each `Part` with its `PartNumber` and `ETag`, in order. The answer is S3's `CompleteMultipartUploadResult`.",
      access: storageWrite,
      params: UploadParams,
      query: KeyQuery,
      rawBody: true,
      produces: 'application/xml',
      idempotency: false,
      response: { 200: Type.String({ description: 'S3 CompleteMultipartUploadResult XML' }) },
      errors: ERRORS,
      handler: async ({ principal, params, query, raw, reply }) => {
        const q = new URLSearchParams({ uploadId: params.upload_id });
        await run(principal, params.bucket_name, query.key, q, raw.raw, reply);
      },
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/storage/buckets/:bucket_name/uploads/:upload_id',
      operationId: 'abortStorageMultipartUpload',
      tag: TAG,
      summary: 'Abort a multipart upload (S3 AbortMultipartUpload): its parts are deleted',
      access: storageWrite,
      params: UploadParams,
      query: KeyQuery,
      idempotency: false,
      response: { 204: Type.Null() },
      errors: ERRORS,
      handler: async ({ principal, params, query, raw, reply }) => {
        const q = new URLSearchParams({ uploadId: params.upload_id });
        await run(principal, params.bucket_name, query.key, q, raw.raw, reply);
      },
    }),
  ];
}

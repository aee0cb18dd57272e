import type { IncomingMessage, ServerResponse } from 'node:http';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { Principal } from '../../../kernel/auth/principal.js';
import { toHttpError } from '../../../kernel/http/errors-to-http.js';
import { defineRoute } from '../../../kernel/http/route.js';
import type { OwnerObjectRequest } from '../data-plane-contract.js';
import { storageErrors } from '../errors.js';
import { BucketParams } from '../schemas.js';
import type { StorageService } from '../service.js';
import { storageRead, storageWrite, TAG } from './access.js';

const ListQuery = Type.Object({
  prefix: Type.Optional(Type.String({ maxLength: 1024, description: 'Only keys starting with this' })),
  delimiter: Type.Optional(
    Type.String({ maxLength: 8, description: 'Group keys by this (`/`: folders) into CommonPrefixes' }),
  ),
  continuation_token: Type.Optional(Type.String({ maxLength: 2048, description: 'The next page' })),
  max_keys: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  versions: Type.Optional(
    Type.Boolean({ description: 'List every version and delete marker (ListObjectVersions)' }),
  ),
  key_marker: Type.Optional(Type.String({ maxLength: 1024, description: 'Versions: the next page' })),
  version_id_marker: Type.Optional(Type.String({ maxLength: 256 })),
});

const ObjectQuery = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 1024, description: "The object's key" }),
  version_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
});
const PutQuery = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 1024, description: "The object's key" }),
});

export const ERRORS = [400, 403, 404, 409, 413, 503, 507] as const;

/**
 * A bucket's objects through the API, for the bucket's owner (the console's object browser): the
 * same origin and credential as the rest of the API, no access key or signature. Each request runs
 * through the S3 data plane's own handlers (see s3/owner-requests.ts), so what S3 would refuse is
 * refused here too; the answers are S3's own (ListObjectsV2 XML, the object's bytes and headers).
 */
export function objectRoutes(storage: StorageService, serve: OwnerObjectRequest) {
  return objectRouteList(storage, ownerRunner(storage, serve));
}

export type OwnerRun = ReturnType<typeof ownerRunner>;

/** Runs one S3 operation on the customer's own bucket and writes its answer (or the API's error). */
export function ownerRunner(storage: StorageService, serve: OwnerObjectRequest) {
  return async (
    principal: Principal,
    bucket: string,
    key: string | null,
    s3Query: URLSearchParams,
    raw: IncomingMessage,
    reply: FastifyReply,
    extraHeaders: Record<string, string> = {},
  ) => {
    // Another customer's bucket is a 404 here, as everywhere in the API (not S3's AccessDenied).
    await storage.bucket(principal.customerId, bucket);
    const readOnly =
      principal.credential.kind === 'pat' &&
      !principal.credential.scopes.includes('storage:write') &&
      !principal.credential.scopes.includes('*');
    reply.hijack();
    const res: ServerResponse = reply.raw;
    for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) res.setHeader(k, v);
    for (const [k, v] of Object.entries(extraHeaders)) res.setHeader(k, v);
    let failure: unknown = null;
    try {
      const { failed } = await serve(raw, res, {
        customerId: principal.customerId,
        bucket,
        key,
        query: s3Query,
        readOnly,
      });
      if (failed)
        failure =
          failed.status === 404 && key !== null
            ? storageErrors.objectNotFound(key)
            : storageErrors.objectRequestRefused(failed.status, failed.code, failed.message);
    } catch (err) {
      failure = err;
    }
    if (failure === null) return;
    if (res.headersSent) {
      // The status line is gone: cutting the connection is the only way to say the body is wrong.
      res.destroy();
      return;
    }
    const http = toHttpError(failure);
    for (const k of Object.keys(extraHeaders)) res.removeHeader(k);
    for (const h of ['content-length', 'etag', 'last-modified', 'content-disposition']) res.removeHeader(h);
    for (const [k, v] of Object.entries(http.headers)) res.setHeader(k, v);
    res.statusCode = http.status;
    res.setHeader('content-type', 'application/json; charset=utf-8');
    // An unread upload would stall a keep-alive connection: close rather than read it all.
    if (!raw.complete) res.setHeader('connection', 'close');
    res.end(JSON.stringify(http.body));
    if (!raw.complete) raw.resume();
  };
}

function objectRouteList(storage: StorageService, run: OwnerRun) {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/storage/buckets/:bucket_name/objects',
      operationId: 'listStorageObjects',
      tag: TAG,
      summary: "List a bucket's objects (S3 ListObjectsV2 or ListObjectVersions, as XML)",
      description:
        "The bucket owner's listing without an S3 key: the answer is S3's own `ListBucketResult` (or `ListVersionsResult` with `versions=true`) document. With `delimiter=/`, keys are grouped into folders (`CommonPrefixes`). The next page: `continuation_token` from `NextContinuationToken` (versions: `key_marker` and `version_id_marker`).",
      access: storageRead,
      params: BucketParams,
      query: ListQuery,
      produces: 'application/xml',
      idempotency: false,
      response: { 200: Type.String({ description: 'S3 ListBucketResult or ListVersionsResult XML' }) },
      errors: ERRORS,
      handler: async ({ principal, params, query, raw, reply }) => {
        const q = new URLSearchParams();
        if (query.versions) {
          q.set('versions', '');
          if (query.key_marker !== undefined) q.set('key-marker', query.key_marker);
          if (query.version_id_marker !== undefined) q.set('version-id-marker', query.version_id_marker);
        } else {
          q.set('list-type', '2');
          if (query.continuation_token !== undefined) q.set('continuation-token', query.continuation_token);
        }
        if (query.prefix !== undefined) q.set('prefix', query.prefix);
        if (query.delimiter !== undefined) q.set('delimiter', query.delimiter);
        if (query.max_keys !== undefined) q.set('max-keys', String(query.max_keys));
        await run(principal, params.bucket_name, null, q, raw.raw, reply);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/storage/buckets/:bucket_name/object',
      operationId: 'getStorageObject',
      tag: TAG,
      summary: "Download an object (S3 GetObject): its bytes, with S3's headers",
      description:
        'Answered as an attachment, sandboxed (`Content-Security-Policy: sandbox`) and with `X-Content-Type-Options: nosniff`, so a stored page never runs as part of Fjord. `Range` is honoured as by S3.',
      access: storageRead,
      params: BucketParams,
      query: ObjectQuery,
      produces: 'application/octet-stream',
      idempotency: false,
      response: {
        200: Type.String({ format: 'binary' }),
        206: Type.String({ format: 'binary', description: 'A `Range` of the object' }),
        304: Type.Null({ description: '`If-None-Match` or `If-Modified-Since` matched' }),
      },
      errors: [...ERRORS, 416],
      handler: async ({ principal, params, query, raw, reply }) => {
        const q = new URLSearchParams();
        if (query.version_id !== undefined) q.set('versionId', query.version_id);
        const name = query.key.split('/').pop() || 'object';
        await run(principal, params.bucket_name, query.key, q, raw.raw, reply, {
          'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(name)}`,
          'x-content-type-options': 'nosniff',
          'content-security-policy': "sandbox; default-src 'none'",
        });
      },
    }),
    defineRoute({
      method: 'PUT',
      url: '/v1/storage/buckets/:bucket_name/object',
      operationId: 'putStorageObject',
      tag: TAG,
      summary: 'Upload an object (S3 PutObject): the body is stored as sent',
      description:
        "`Content-Type` becomes the object's type, `x-amz-meta-*` headers its metadata, as on S3; at most 5 GiB in one request. The answer is S3's: `ETag` and, in a versioned bucket, `x-amz-version-id`.",
      access: storageWrite,
      params: BucketParams,
      query: PutQuery,
      rawBody: true,
      idempotency: false,
      response: { 200: Type.Null() },
      errors: [...ERRORS, 411],
      handler: async ({ principal, params, query, raw, reply }) => {
        await run(principal, params.bucket_name, query.key, new URLSearchParams(), raw.raw, reply);
      },
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/storage/buckets/:bucket_name/object',
      operationId: 'deleteStorageObject',
      tag: TAG,
      summary: 'Delete an object, or one version of it (S3 DeleteObject)',
      description:
        'In a versioned bucket, deleting without `version_id` adds a delete marker; with it, that version is removed (unless object lock keeps it).',
      access: storageWrite,
      params: BucketParams,
      query: ObjectQuery,
      idempotency: false,
      response: { 204: Type.Null() },
      errors: ERRORS,
      handler: async ({ principal, params, query, raw, reply }) => {
        const q = new URLSearchParams();
        if (query.version_id !== undefined) q.set('versionId', query.version_id);
        await run(principal, params.bucket_name, query.key, q, raw.raw, reply);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/storage/buckets/:bucket_name/presign',
      operationId: 'presignStorageObject',
      tag: TAG,
      summary: 'A presigned download link to an object, valid for a chosen time',
      description:
        "The link is SigV4 in the query string (`X-Amz-Expires`), on the S3 endpoint, signed with the account's S3 key (the key of `GET /v1/storage/credentials`, made on first use and listed under `/v1/storage/keys`): anyone holding the link can download the object until it expires, at most 7 days, or until that key is deleted. It names the object's latest version.",
      access: storageWrite,
      params: BucketParams,
      body: Type.Object(
        {
          key: Type.String({ minLength: 1, maxLength: 1024, description: "The object's key" }),
          expires_in_seconds: Type.Integer({
            minimum: 1,
            maximum: 604800,
            description: 'How long the link works (SigV4 allows at most 7 days)',
          }),
        },
        { additionalProperties: false },
      ),
      idempotency: false,
      response: {
        200: Type.Object({
          url: Type.String({ description: 'The presigned GET address' }),
          expires_at: Type.String({ format: 'date-time' }),
        }),
      },
      errors: [404],
      handler: async ({ principal, params, body }) =>
        storage.presignDownload(
          principal.customerId,
          principal.credential,
          params.bucket_name,
          body.key,
          body.expires_in_seconds,
        ),
    }),
  ];
}

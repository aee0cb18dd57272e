/**
 * The routes of image uploads: a presigned URL to PUT an image archive to, its state, its removal.
 * Apart from routes.ts because uploads are a resource of the account, not of one app.
 */
import { defineRoute } from '../../kernel/http/route.js';
import type { AppImages } from './images.js';
import { BUCKET, read, TAG, write } from './routes-common.js';
import { CreateUploadBody, Deleted, UploadParams, UploadView } from './schemas.js';

export function imageRoutes(images: AppImages) {
  return [
    defineRoute({
      method: 'POST',
      url: '/v1/apps/image-uploads',
      operationId: 'appsCreateImageUpload',
      tag: TAG,
      summary: 'A presigned URL to PUT an OCI or Docker image archive to; deploy it with image: {upload_id}',
      access: write,
      rateLimit: BUCKET,
      body: CreateUploadBody,
      response: { 201: UploadView },
      errors: [403],
      handler: async ({ principal, body }) => images.createUpload(principal.customerId, body.size_bytes),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/apps/image-uploads/:upload_id',
      operationId: 'appsGetImageUpload',
      tag: TAG,
      summary: 'An image upload: awaiting its archive, uploaded or expired',
      access: read,
      rateLimit: BUCKET,
      params: UploadParams,
      response: { 200: UploadView },
      errors: [404],
      handler: async ({ principal, params }) => images.getUpload(principal.customerId, params.upload_id),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/apps/image-uploads/:upload_id',
      operationId: 'appsDeleteImageUpload',
      tag: TAG,
      summary: 'Delete an image upload and its archive (refused while a revision uses it)',
      access: write,
      rateLimit: BUCKET,
      params: UploadParams,
      response: { 200: Deleted },
      errors: [404, 409],
      handler: async ({ principal, params }) => images.deleteUpload(principal.customerId, params.upload_id),
    }),
  ];
}

import { Type } from '@sinclair/typebox';
import { type CustomerAccess, publicAccess } from '../../kernel/auth/principal.js';
import { defineRoute } from '../../kernel/http/route.js';
import type { ExportFormat } from './exports.js';
import {
  ArtifactParams,
  ArtifactView,
  CreateBody,
  CreatedView,
  DeletedView,
  DownloadQuery,
  ExportBody,
  JobParams,
  JobView,
  ListQuery,
  ListView,
  UploadCompleteBody,
} from './schemas.js';
import type { SpeechService } from './service.js';

const TAG = 'Speech';
const access = (scope: string): CustomerAccess => ({
  kind: 'customer',
  services: ['transcript'],
  scopes: [scope],
  oidc: true,
  bearer: true,
});

export function speechRoutes(speech: SpeechService) {
  return [
    defineRoute({
      method: 'POST',
      url: '/v1/transcript/jobs',
      operationId: 'speechCreateJob',
      tag: TAG,
      summary: 'Create a job and get a presigned address to PUT the file to (valid one hour)',
      access: access('transcript:write'),
      body: CreateBody,
      response: { 201: CreatedView },
      handler: async ({ principal, body, reply }) => {
        reply.status(201);
        return speech.create(principal, body);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/transcript/jobs/:job_id/upload-complete',
      operationId: 'speechUploadComplete',
      tag: TAG,
      summary:
        'Check the uploaded file (it must have an audio stream) and queue the job; for a job already queued, processing or ready, its status as it is',
      access: access('transcript:write'),
      params: JobParams,
      body: UploadCompleteBody,
      response: { 200: JobView },
      errors: [404],
      handler: async ({ principal, params }) => speech.uploadComplete(principal.customerId, params.job_id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/transcript/jobs',
      operationId: 'speechListJobs',
      tag: TAG,
      summary: 'The account’s jobs, newest first',
      access: access('transcript:read'),
      query: ListQuery,
      response: { 200: ListView },
      handler: async ({ principal, query }) => speech.list(principal.customerId, query),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/transcript/jobs/:job_id',
      operationId: 'speechGetJob',
      tag: TAG,
      summary: 'A job; `segments` and `artifacts` once it is ready',
      access: access('transcript:read'),
      params: JobParams,
      response: { 200: JobView },
      errors: [404],
      handler: async ({ principal, params }) => speech.get(principal.customerId, params.job_id) as never,
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/transcript/jobs/:job_id',
      operationId: 'speechDeleteJob',
      tag: TAG,
      summary: 'Delete a job with its uploaded file and every artifact',
      access: access('transcript:write'),
      params: JobParams,
      response: { 200: DeletedView },
      errors: [404],
      handler: async ({ principal, params }) => speech.remove(principal.customerId, params.job_id),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/transcript/jobs/:job_id/export',
      operationId: 'speechExport',
      tag: TAG,
      summary:
        'An export of a ready job: txt and json exist already; srt and vtt are made on first request and kept',
      access: access('transcript:write'),
      params: JobParams,
      body: ExportBody,
      response: { 200: ArtifactView },
      errors: [404],
      handler: async ({ principal, params, body }) =>
        speech.export(principal.customerId, params.job_id, body.format as ExportFormat),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/transcript/artifacts/:artifact_id/download',
      operationId: 'speechDownloadArtifact',
      tag: TAG,
      summary: 'Download an artifact through the address in `download_url` (signed, valid one hour)',
      access: publicAccess,
      params: ArtifactParams,
      query: DownloadQuery,
      produces: 'application/octet-stream',
      response: {
        200: Type.String({
          description: 'The file (text/plain, application/json, application/x-subrip, text/vtt)',
        }),
      },
      errors: [404],
      handler: async ({ params, query, reply }) => {
        const file = await speech.downloadArtifact(params.artifact_id, query.token);
        return reply
          .header('content-disposition', `attachment; filename="${file.filename}"`)
          .type(file.contentType)
          .send(file.body);
      },
    }),
  ];
}

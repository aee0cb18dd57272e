import { Type } from '@sinclair/typebox';
import { type CustomerAccess, publicAccess } from '../../kernel/auth/principal.js';
import { defineRoute } from '../../kernel/http/route.js';
import {
  EngineView,
  JobBody,
  JobParams,
  JobView,
  LinkQuery,
  OutputParams,
  PresetView,
  PriceView,
} from './schemas.js';
import type { GpuService } from './service.js';

const TAG = 'GPU';
const access = (scope: string): CustomerAccess => ({
  kind: 'customer',
  services: ['gpu'],
  scopes: [scope],
  oidc: true,
  bearer: true,
});

/** The customer's side: the catalogue, jobs and output downloads. */
export function gpuRoutes(gpu: GpuService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/gpu/engines',
      operationId: 'gpuEngines',
      tag: TAG,
      summary: 'Engines; `available` while a worker serving the engine has called in the last minute',
      access: publicAccess,
      response: { 200: Type.Array(EngineView) },
      handler: async () => gpu.engines(),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/gpu/presets',
      operationId: 'gpuPresets',
      tag: TAG,
      summary: 'Presets',
      access: publicAccess,
      response: { 200: Type.Array(PresetView) },
      handler: async () => gpu.catalogue.presets,
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/gpu/pricing',
      operationId: 'gpuPricing',
      tag: TAG,
      summary: 'Current prices per engine, in every currency',
      access: publicAccess,
      response: { 200: Type.Array(PriceView) },
      handler: async () => gpu.catalogue.pricing(),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/gpu/jobs',
      operationId: 'gpuCreateJob',
      tag: TAG,
      summary: 'Queue a job; its estimated cost is fixed now from the pricing',
      access: access('gpu:write'),
      rateLimit: ['gpu'],
      body: JobBody,
      response: { 201: JobView },
      errors: [403],
      handler: async ({ principal, body }) => gpu.create(principal, body),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/gpu/jobs',
      operationId: 'gpuListJobs',
      tag: TAG,
      summary: 'The account’s jobs, newest first (at most 100)',
      access: access('gpu:read'),
      rateLimit: ['gpu'],
      response: { 200: Type.Array(JobView) },
      handler: async ({ principal }) => gpu.list(principal.customerId),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/gpu/jobs/:job_id',
      operationId: 'gpuGetJob',
      tag: TAG,
      summary: 'A job (status checks have their own rate limit)',
      access: access('gpu:read'),
      rateLimit: ['gpu.status'],
      params: JobParams,
      response: { 200: JobView },
      errors: [404],
      handler: async ({ principal, params }) => gpu.get(principal.customerId, params.job_id),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/gpu/jobs/:job_id',
      operationId: 'gpuCancelJob',
      tag: TAG,
      summary: 'Cancel a queued or processing job; any other state answers 409 and does not move',
      access: access('gpu:write'),
      rateLimit: ['gpu'],
      params: JobParams,
      response: { 200: JobView },
      errors: [404, 409],
      handler: async ({ principal, params }) => gpu.cancel(principal.customerId, params.job_id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/gpu/outputs/:job_id/:name',
      operationId: 'gpuDownloadOutput',
      tag: TAG,
      summary: 'Download an output: the address in `output_files` (signed, valid one hour)',
      access: publicAccess,
      params: OutputParams,
      query: LinkQuery,
      produces: 'application/octet-stream',
      response: { 200: Type.String({ description: 'The file (image/png, video/mp4, …)' }) },
      errors: [404],
      handler: async ({ params, query, reply }) => {
        const { body, contentType } = await gpu.download(params.job_id, params.name, query.token);
        // Streamed: a video output may be hundreds of megabytes.
        return reply.header('cache-control', 'private, max-age=3600').type(contentType).send(body);
      },
    }),
  ];
}

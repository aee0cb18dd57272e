import { Type } from '@sinclair/typebox';
import { type CustomerAccess, operatorAccess, publicAccess } from '../../kernel/auth/principal.js';
import { kernelErrors } from '../../kernel/errors.js';
import { defineRoute } from '../../kernel/http/route.js';
import { PRESETS, pricing } from './catalogue.js';
import {
  CompleteBody,
  EngineView,
  FailBody,
  HeartbeatBody,
  JobBody,
  JobParams,
  JobView,
  LeaseBody,
  LeasedJob,
  OutputBody,
  PresetView,
  PriceView,
  WorkerView,
} from './schemas.js';
import type { GpuService } from './service.js';
import type { GpuWorkers } from './workers.js';

const TAG = 'GPU';
const access = (scope: string): CustomerAccess => ({
  kind: 'customer',
  services: ['gpu'],
  scopes: [scope],
  oidc: true,
  bearer: true,
});
const Empty = Type.Null({ description: 'No content' });

export function gpuRoutes(gpu: GpuService, workers: GpuWorkers) {
  /** Worker routes authenticate the operator-issued worker token themselves. */
  const worker = async (authorization: string | undefined) => {
    const w = await workers.authenticate(authorization);
    if (!w) throw kernelErrors.unauthenticated('A worker token is required: Authorization: Bearer fjw_…');
    return w;
  };
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
      handler: async () => PRESETS,
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/gpu/pricing',
      operationId: 'gpuPricing',
      tag: TAG,
      summary: 'Current prices per engine, in every currency',
      access: publicAccess,
      response: { 200: Type.Array(PriceView) },
      handler: async () => pricing(),
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
      params: Type.Object({
        job_id: Type.String({ minLength: 1, maxLength: 64 }),
        name: Type.String({ minLength: 1, maxLength: 72 }),
      }),
      query: Type.Object(
        { token: Type.String({ minLength: 10, maxLength: 4000 }) },
        { additionalProperties: false },
      ),
      produces: 'application/octet-stream',
      response: { 200: Type.String({ description: 'The file (image/png, video/mp4, …)' }) },
      errors: [404],
      handler: async ({ params, query, reply }) => {
        const { body, contentType } = await gpu.download(params.job_id, params.name, query.token);
        const chunks: Buffer[] = [];
        for await (const chunk of body) chunks.push(chunk as Buffer);
        reply.header('cache-control', 'private, max-age=3600').type(contentType);
        return Buffer.concat(chunks);
      },
    }),
    // The worker protocol.
    defineRoute({
      method: 'POST',
      url: '/v1/gpu/worker/lease',
      operationId: 'gpuWorkerLease',
      tag: TAG,
      summary: 'Worker: lease the oldest queued job of these engines (204 when there is none)',
      description:
        'Authorization: Bearer fjw_… (a worker token from the operator API). The lease lasts 60 s; heartbeats renew it.',
      access: publicAccess,
      body: LeaseBody,
      response: { 200: LeasedJob, 204: Empty },
      errors: [401],
      handler: async ({ body, raw, reply }) => {
        const job = await gpu.lease(await worker(raw.headers.authorization), body.engines);
        if (!job) return reply.code(204).send();
        return job;
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/gpu/worker/jobs/:job_id/heartbeat',
      operationId: 'gpuWorkerHeartbeat',
      tag: TAG,
      summary: 'Worker: report progress and renew the lease; `cancel: true` means stop now',
      access: publicAccess,
      params: JobParams,
      body: HeartbeatBody,
      response: {
        200: Type.Object({
          cancel: Type.Boolean(),
          lease_expires_at: Type.Union([Type.String(), Type.Null()]),
        }),
      },
      errors: [401, 409],
      handler: async ({ params, body, raw }) =>
        gpu.heartbeat(await worker(raw.headers.authorization), params.job_id, body.progress),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/gpu/worker/jobs/:job_id/outputs/:name',
      operationId: 'gpuWorkerPutOutput',
      tag: TAG,
      summary: 'Worker: store an output file of the leased job (base64, up to the API body limit)',
      access: publicAccess,
      params: Type.Object({
        job_id: Type.String({ minLength: 1, maxLength: 64 }),
        name: Type.String({ minLength: 1, maxLength: 72 }),
      }),
      body: OutputBody,
      response: { 201: Type.Object({ name: Type.String(), size: Type.Integer() }) },
      errors: [401, 409],
      handler: async ({ params, body, raw }) =>
        gpu.putOutput(
          await worker(raw.headers.authorization),
          params.job_id,
          params.name,
          Buffer.from(body.content_base64, 'base64'),
          body.content_type,
        ),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/gpu/worker/jobs/:job_id/complete',
      operationId: 'gpuWorkerComplete',
      tag: TAG,
      summary: 'Worker: the job is done; its outputs are stored',
      access: publicAccess,
      params: JobParams,
      body: CompleteBody,
      response: { 204: Empty },
      errors: [401, 409],
      handler: async ({ params, body, raw }) => {
        await gpu.complete(await worker(raw.headers.authorization), params.job_id, body.units);
        return null;
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/gpu/worker/jobs/:job_id/fail',
      operationId: 'gpuWorkerFail',
      tag: TAG,
      summary: 'Worker: the job failed (the message is shown to the customer)',
      access: publicAccess,
      params: JobParams,
      body: FailBody,
      response: { 204: Empty },
      errors: [401, 409],
      handler: async ({ params, body, raw }) => {
        await gpu.fail(await worker(raw.headers.authorization), params.job_id, body.error_message);
        return null;
      },
    }),
    // The operator's side.
    defineRoute({
      method: 'POST',
      url: '/admin/v1/gpu/workers',
      operationId: 'adminCreateGpuWorker',
      tag: 'Operator',
      summary: 'Issue a GPU worker token (shown once)',
      access: operatorAccess,
      body: Type.Object(
        {
          name: Type.String({ minLength: 1, maxLength: 100 }),
          engines: Type.Array(Type.String({ minLength: 1 }), { maxItems: 50 }),
        },
        { additionalProperties: false },
      ),
      response: { 201: Type.Object({ ...WorkerView.properties, token: Type.String() }) },
      handler: async ({ body }) => workers.create(body.name, body.engines),
    }),
    defineRoute({
      method: 'GET',
      url: '/admin/v1/gpu/workers',
      operationId: 'adminListGpuWorkers',
      tag: 'Operator',
      summary: 'GPU workers, their engines and whether they called in the last minute',
      access: operatorAccess,
      response: { 200: Type.Array(WorkerView) },
      handler: async () => workers.list(),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/admin/v1/gpu/workers/:worker_id',
      operationId: 'adminRevokeGpuWorker',
      tag: 'Operator',
      summary: 'Revoke a worker token: the worker is refused from its next call',
      access: operatorAccess,
      params: Type.Object({ worker_id: Type.String({ minLength: 1, maxLength: 64 }) }),
      response: { 204: Empty },
      errors: [404],
      handler: async ({ params }) => {
        if (!(await workers.revoke(params.worker_id))) throw kernelErrors.notFound('Worker');
        return null;
      },
    }),
  ];
}

import { Type } from '@sinclair/typebox';
import { operatorAccess, publicAccess } from '../../kernel/auth/principal.js';
import { kernelErrors } from '../../kernel/errors.js';
import { defineRoute } from '../../kernel/http/route.js';
import {
  CompleteBody,
  FailBody,
  HeartbeatBody,
  JobParams,
  LeaseBody,
  LeasedJob,
  LinkQuery,
  OutputParams,
  UploadAddress,
  UploadBody,
  WorkerView,
} from './schemas.js';
import type { GpuWorkerProtocol } from './worker-protocol.js';
import type { GpuWorkers } from './workers.js';

const TAG = 'GPU';
const Empty = Type.Null({ description: 'No content' });

/** The worker protocol (worker tokens) and the operator's management of workers. */
export function gpuWorkerRoutes(protocol: GpuWorkerProtocol, workers: GpuWorkers) {
  /** Worker routes authenticate the operator-issued worker token themselves. */
  const worker = async (authorization: string | undefined) => {
    const w = await workers.authenticate(authorization);
    if (!w) throw kernelErrors.unauthenticated('A worker token is required: Authorization: Bearer fjw_…');
    return w;
  };
  return [
    // The worker protocol.
    defineRoute({
      method: 'POST',
      url: '/v1/gpu/worker/lease',
      operationId: 'gpuWorkerLease',
      tag: TAG,
      summary: 'Worker: lease the oldest queued job of these engines (204 when there is none)',
      description:
        'Authorization: Bearer fjw_… (a worker token from the operator API). `engines` may narrow the engines the token was issued for, never add to them (403 `engine_not_issued`). The lease lasts 60 s; heartbeats renew it.',
      access: publicAccess,
      body: LeaseBody,
      response: { 200: LeasedJob, 204: Empty },
      errors: [401, 403],
      handler: async ({ body, raw, reply }) => {
        const job = await protocol.lease(await worker(raw.headers.authorization), body.engines);
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
        protocol.heartbeat(await worker(raw.headers.authorization), params.job_id, body.progress),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/gpu/worker/jobs/:job_id/uploads',
      operationId: 'gpuWorkerUploadAddress',
      tag: TAG,
      summary: 'Worker: a signed address to PUT one output file of the leased job to (valid one hour)',
      access: publicAccess,
      params: JobParams,
      body: UploadBody,
      response: { 201: UploadAddress },
      errors: [401, 409, 413],
      handler: async ({ params, body, raw }) =>
        protocol.uploadAddress(await worker(raw.headers.authorization), params.job_id, body),
    }),
    defineRoute({
      method: 'PUT',
      url: '/v1/gpu/uploads/:job_id/:name',
      operationId: 'gpuWorkerUpload',
      tag: TAG,
      summary: 'Worker: the file itself, PUT to the address `uploads` gave (any HTTP client: curl -T)',
      description:
        'The body is stored as sent, streamed into object storage. It must be exactly the size stated when the address was made.',
      access: publicAccess,
      rawBody: true,
      idempotency: false,
      params: OutputParams,
      query: LinkQuery,
      response: { 200: Type.Object({ name: Type.String(), size: Type.Integer() }) },
      errors: [403, 409],
      handler: async ({ params, query, raw }) => {
        const length = raw.headers['content-length'];
        return protocol.receiveUpload(
          params.job_id,
          params.name,
          query.token,
          raw.raw,
          length === undefined ? undefined : Number(length),
        );
      },
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
        await protocol.complete(await worker(raw.headers.authorization), params.job_id, body.units);
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
        await protocol.fail(await worker(raw.headers.authorization), params.job_id, body.error_message);
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

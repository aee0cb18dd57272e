import { Type } from '@sinclair/typebox';
import { sql } from 'kysely';
import { Registry } from 'prom-client';
import { publicAccess } from '../kernel/auth/principal.js';
import { freeBytes } from '../kernel/disk-space.js';
import { AppError } from '../kernel/errors.js';
import type { HttpMetrics } from '../kernel/http/metrics.js';
import { defineRoute } from '../kernel/http/route.js';
import type { Kernel } from '../kernel/kernel.js';

const TAG = 'System';

/** This API's OpenAPI 3.1 document, as `/openapi.json` and Swagger UI's `/docs/json` serve it. */
export const OpenApiDocument = Type.Object(
  { openapi: Type.String() },
  { additionalProperties: true, description: 'OpenAPI 3.1 document' },
);

export interface Health {
  rolesUp(): boolean;
  roles(): string[];
}

export function systemRoutes(kernel: Kernel, metrics: HttpMetrics, health: Health, openapi: () => unknown) {
  const Status = Type.Object({ status: Type.String(), roles: Type.Array(Type.String()) });
  return [
    defineRoute({
      method: 'GET',
      url: '/healthz',
      operationId: 'getHealth',
      tag: TAG,
      summary: 'Liveness: 200 once every role of this process is up',
      access: publicAccess,
      response: { 200: Status },
      errors: [503],
      handler: async () => {
        if (!health.rolesUp()) throw new AppError('unavailable', 'starting', 'Fjord is still starting.');
        return { status: 'ok', roles: health.roles() };
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/readyz',
      operationId: 'getReadiness',
      tag: TAG,
      summary: 'Readiness: every role is up, the store answers and the data dir has free space',
      access: publicAccess,
      response: { 200: Status },
      errors: [503],
      handler: async () => {
        if (!health.rolesUp()) throw new AppError('unavailable', 'starting', 'Fjord is still starting.');
        try {
          await sql`SELECT 1`.execute(kernel.store.db);
        } catch (cause) {
          throw new AppError('unavailable', 'store_unavailable', 'The store does not answer.', { cause });
        }
        await refuseWhenLowOnDisk(kernel.config.dataDir, kernel.config.minFreeBytes);
        return { status: 'ready', roles: health.roles() };
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/metrics',
      operationId: 'getMetrics',
      tag: TAG,
      summary: 'Prometheus metrics',
      access: publicAccess,
      produces: 'text/plain; version=0.0.4; charset=utf-8',
      response: { 200: Type.String() },
      // The API's own metrics and the protocol planes', in one exposition.
      handler: async () => Registry.merge([metrics.registry, kernel.metrics.registry]).metrics(),
    }),
    defineRoute({
      method: 'GET',
      url: '/openapi.json',
      operationId: 'getOpenApi',
      tag: TAG,
      summary: 'This API’s OpenAPI 3.1 document',
      access: publicAccess,
      response: { 200: OpenApiDocument },
      handler: async () => openapi(),
    }),
  ];
}

/**
 * Not ready while the data dir is under its free-space floor: a balancer then stops sending new
 * work here, and readiness returns by itself once space is freed (each probe measures again).
 */
async function refuseWhenLowOnDisk(dataDir: string, minFreeBytes: number): Promise<void> {
  if (minFreeBytes <= 0) return;
  const free = await freeBytes(dataDir).catch(() => null);
  if (free === null || free >= minFreeBytes) return;
  throw new AppError(
    'unavailable',
    'low_disk_space',
    `The data dir has ${free} bytes free, under FJORD_MIN_FREE_BYTES (${minFreeBytes}).`,
  );
}

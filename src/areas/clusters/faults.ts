import { Type } from '@sinclair/typebox';
import { operatorAccess } from '../../kernel/auth/principal.js';
import type { Clock } from '../../kernel/clock.js';
import { Nullable } from '../../kernel/http/common-schemas.js';
import { defineRoute } from '../../kernel/http/route.js';
import type { Store } from '../../kernel/store/store.js';
import { regionOf } from './catalogue.js';
import { clusterErrors } from './errors.js';
import { PROVISIONING_STEPS, phaseOf } from './lifecycle.js';
import { ClusterRepo } from './repo.js';
import { historyEntry } from './service.js';

const FAULTS = ['error', 'degraded', 'suspended'] as const;
type Fault = (typeof FAULTS)[number];
const OPERATOR = 'operator:fault-injection';

/**
 * Fault injection for the simulated driver, as LocalStack offers it: the operator makes a
 * cluster fail (`error`, optionally at a provisioning step), run `degraded` or be `suspended`,
 * or a region run out of capacity, so customers can test their own error handling. Each change
 * is in the cluster's history; clearing the fault gives the clock's state back.
 */
export class ClusterFaults {
  private readonly repo: ClusterRepo;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {
    this.repo = ClusterRepo.of(store);
  }

  async setFault(
    clusterId: string,
    input: { fault: Fault | null; step?: string | null; message?: string | null },
  ) {
    if (input.step && input.fault !== 'error')
      throw clusterErrors.invalid('A step applies to the error fault only.', '/body/step');
    const now = this.clock.nowMs();
    const row = await this.store.unitOfWork({}, async ({ tx }) => {
      const repo = ClusterRepo.over(tx);
      const found = await repo.db
        .selectFrom('k8s_clusters')
        .selectAll()
        .where('id', '=', clusterId)
        .executeTakeFirst();
      if (!found || (found.delete_requested_at !== null && phaseOf(found, now).status !== 'deleting'))
        throw clusterErrors.notFound();
      const patch = {
        fault: input.fault,
        fault_step: input.fault === 'error' ? (input.step ?? null) : null,
        fault_message: input.fault ? (input.message ?? null) : null,
        fault_at: input.fault ? now : null,
      };
      await repo.update(clusterId, patch);
      await repo.record(
        historyEntry(
          clusterId,
          OPERATOR,
          input.fault ? 'cluster.fault' : 'cluster.fault-cleared',
          patch,
          now,
        ),
      );
      return { ...found, ...patch };
    });
    const phase = phaseOf(row, now);
    return {
      cluster_id: clusterId,
      fault: row.fault as Fault | null,
      step: row.fault_step,
      message: row.fault_message,
      status: phase.status,
      provisioning_step: phase.provisioning_step,
    };
  }

  async setCapacity(region: string, input: { available: boolean; message?: string | null }) {
    if (!regionOf(region)) throw clusterErrors.notFound('Region');
    const db = this.repo.db;
    if (input.available) await db.deleteFrom('k8s_capacity').where('region', '=', region).execute();
    else
      await db
        .insertInto('k8s_capacity')
        .values({ region, message: input.message ?? null, updated_at: this.clock.nowMs() })
        .onConflict((oc) =>
          oc.column('region').doUpdateSet({ message: input.message ?? null, updated_at: this.clock.nowMs() }),
        )
        .execute();
    return { region, available: input.available, message: input.available ? null : (input.message ?? null) };
  }
}

export function clusterFaultRoutes(faults: ClusterFaults) {
  return [
    defineRoute({
      method: 'PUT',
      url: '/admin/v1/kubernetes/clusters/:id/fault',
      operationId: 'injectClusterFault',
      tag: 'Operator',
      summary: 'Operator: make a simulated cluster fail, run degraded or be suspended (null clears it)',
      access: operatorAccess,
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }),
      body: Type.Object(
        {
          fault: Nullable(Type.Union(FAULTS.map((f) => Type.Literal(f)))),
          step: Type.Optional(
            Nullable(
              Type.Union(
                PROVISIONING_STEPS.map(([s]) => Type.Literal(s)),
                { description: 'error only: the provisioning step that fails (default: now)' },
              ),
            ),
          ),
          message: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
        },
        { additionalProperties: false },
      ),
      response: {
        200: Type.Object({
          cluster_id: Type.String(),
          fault: Nullable(Type.String()),
          step: Nullable(Type.String()),
          message: Nullable(Type.String()),
          status: Type.String(),
          provisioning_step: Nullable(Type.String()),
        }),
      },
      errors: [404],
      handler: async ({ params, body }) =>
        faults.setFault(params.id, {
          fault: body.fault as Fault | null,
          step: body.step ?? null,
          message: body.message ?? null,
        }),
    }),
    defineRoute({
      method: 'PUT',
      url: '/admin/v1/kubernetes/regions/:region/capacity',
      operationId: 'setClusterRegionCapacity',
      tag: 'Operator',
      summary: 'Operator: mark a region out of capacity (creates there answer 503 capacity) or back',
      access: operatorAccess,
      params: Type.Object({ region: Type.String({ minLength: 1, maxLength: 32 }) }),
      body: Type.Object(
        { available: Type.Boolean(), message: Type.Optional(Nullable(Type.String({ maxLength: 500 }))) },
        { additionalProperties: false },
      ),
      response: {
        200: Type.Object({
          region: Type.String(),
          available: Type.Boolean(),
          message: Nullable(Type.String()),
        }),
      },
      errors: [404],
      handler: async ({ params, body }) => faults.setCapacity(params.region, body),
    }),
  ];
}

import { Type } from '@sinclair/typebox';
import { type CustomerAccess, publicAccess } from '../../kernel/auth/principal.js';
import { defineRoute } from '../../kernel/http/route.js';
import { planViews, REGIONS, VERSIONS } from './catalogue.js';
import {
  ApiAccessBody,
  ClusterBody,
  ClusterParams,
  ClusterView,
  DeleteBody,
  EstimateBody,
  EstimateView,
  HistoryView,
  PlansQuery,
  PlanView,
  PoolBody,
  PoolParams,
  PoolView,
  RegionView,
  ScaleBody,
  TimelineView,
  UpgradeBody,
  VersionView,
} from './schemas.js';
import type { ClusterService } from './service.js';

const TAG = 'Managed clusters';
const rateLimit = ['kubernetes'];
/** A PAT with `kubernetes:read` or `kubernetes:write` as `Authorization: Bearer`, or an OIDC token. */
const access = (write: boolean): CustomerAccess => ({
  kind: 'customer',
  scopes: [write ? 'kubernetes:write' : 'kubernetes:read'],
  oidc: true,
  bearer: true,
});

export function clusterRoutes(k8s: ClusterService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/kubernetes/plans',
      operationId: 'k8sPlans',
      tag: TAG,
      summary: 'Plans with monthly prices and hourly rates in every currency, for a region',
      access: publicAccess,
      query: PlansQuery,
      response: { 200: Type.Object({ plans: Type.Array(PlanView) }) },
      errors: [422],
      handler: async ({ query }) => ({
        plans: planViews(query.kind, k8s.region(query.region).price_multiplier),
      }),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/kubernetes/regions',
      operationId: 'k8sRegions',
      tag: TAG,
      summary: 'Regions and whether they offer managed clusters',
      access: publicAccess,
      response: { 200: Type.Object({ regions: Type.Array(RegionView) }) },
      handler: async () => ({ regions: REGIONS }),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/kubernetes/versions',
      operationId: 'k8sVersions',
      tag: TAG,
      summary: 'Offered Kubernetes versions, oldest first, with the default and end of support',
      access: publicAccess,
      response: { 200: Type.Object({ versions: Type.Array(VersionView) }) },
      handler: async () => ({ versions: VERSIONS }),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/kubernetes/estimate',
      operationId: 'k8sEstimate',
      tag: TAG,
      summary: 'Monthly estimate: control plane, each pool’s nodes, the included gateway IP',
      access: publicAccess,
      body: EstimateBody,
      response: { 200: EstimateView },
      errors: [422],
      handler: async ({ body }) => k8s.estimate(body),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/kubernetes/clusters',
      operationId: 'k8sListClusters',
      tag: TAG,
      summary: 'The account’s clusters (deleted ones leave once removal is confirmed)',
      access: access(false),
      rateLimit,
      response: { 200: Type.Object({ clusters: Type.Array(ClusterView), total: Type.Integer() }) },
      handler: async ({ principal }) => k8s.list(principal.customerId),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/kubernetes/clusters',
      operationId: 'k8sCreateCluster',
      tag: TAG,
      summary: 'Create a cluster; it answers in `provisioning` and walks its steps on the clock',
      access: access(true),
      rateLimit,
      body: ClusterBody,
      response: { 202: ClusterView },
      errors: [403, 409, 422, 503],
      handler: async ({ principal, body, reply }) => {
        reply.code(202);
        return k8s.create(principal, body);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/kubernetes/clusters/:id',
      operationId: 'k8sGetCluster',
      tag: TAG,
      summary: 'A cluster',
      access: access(false),
      rateLimit,
      params: ClusterParams,
      response: { 200: ClusterView },
      errors: [404],
      handler: async ({ principal, params }) => k8s.get(principal.customerId, params.id),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/kubernetes/clusters/:id',
      operationId: 'k8sDeleteCluster',
      tag: TAG,
      summary: 'Delete a cluster: `confirm_name` must equal its name; a final backup is kept 30 days',
      access: access(true),
      rateLimit,
      params: ClusterParams,
      body: DeleteBody,
      response: { 202: ClusterView },
      errors: [404, 409, 422],
      handler: async ({ principal, params, body, reply }) => {
        reply.code(202);
        return k8s.remove(principal, params.id, body.confirm_name);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/kubernetes/clusters/:id/history',
      operationId: 'k8sHistory',
      tag: TAG,
      summary: 'Every action on the cluster with its actor, time and details, oldest first',
      access: access(false),
      rateLimit,
      params: ClusterParams,
      response: { 200: HistoryView },
      errors: [404],
      handler: async ({ principal, params }) => k8s.history(principal.customerId, params.id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/kubernetes/clusters/:id/timeline',
      operationId: 'k8sTimeline',
      tag: TAG,
      summary: 'The current long operation (provisioning, upgrade, deletion) as steps with their times',
      description:
        'Each step is `done`, `current`, `pending` or `failed` (an injected fault). `next_change_in_seconds` says when to look again, so a watcher needs no polling loop.',
      access: access(false),
      rateLimit,
      params: ClusterParams,
      response: { 200: TimelineView },
      errors: [404],
      handler: async ({ principal, params }) => k8s.timeline(principal.customerId, params.id),
    }),
    defineRoute({
      method: 'PUT',
      url: '/v1/kubernetes/clusters/:id/api-access',
      operationId: 'k8sSetApiAccess',
      tag: TAG,
      summary: 'Replace the CIDRs allowed to reach the cluster API (empty: any source)',
      access: access(true),
      rateLimit,
      params: ClusterParams,
      body: ApiAccessBody,
      response: { 200: ClusterView },
      errors: [404, 409, 422],
      handler: async ({ principal, params, body }) => k8s.setApiAccess(principal, params.id, body.cidrs),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/kubernetes/clusters/:id/upgrade',
      operationId: 'k8sUpgradeTargets',
      tag: TAG,
      summary: 'Versions the cluster can upgrade to: the next offered minor version',
      access: access(false),
      rateLimit,
      params: ClusterParams,
      response: { 200: Type.Object({ versions: Type.Array(Type.String()) }) },
      errors: [404],
      handler: async ({ principal, params }) => k8s.upgradeTargets(principal.customerId, params.id),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/kubernetes/clusters/:id/upgrade',
      operationId: 'k8sUpgrade',
      tag: TAG,
      summary:
        'Upgrade a running cluster: a backup first, then `upgrading`, then `running` on the new version',
      access: access(true),
      rateLimit,
      params: ClusterParams,
      body: UpgradeBody,
      response: { 202: ClusterView },
      errors: [404, 409, 422],
      handler: async ({ principal, params, body, reply }) => {
        reply.code(202);
        return k8s.upgrade(principal, params.id, body.version);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/kubernetes/clusters/:id/node-pools',
      operationId: 'k8sAddNodePool',
      tag: TAG,
      summary: 'Add a node pool to a running cluster (at most 8); its nodes join on the clock',
      access: access(true),
      rateLimit,
      params: ClusterParams,
      body: PoolBody,
      response: { 201: PoolView },
      errors: [404, 409, 422],
      handler: async ({ principal, params, body, reply }) => {
        reply.code(201);
        return k8s.addPool(principal, params.id, body);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/kubernetes/clusters/:id/node-pools/:pool/scale',
      operationId: 'k8sScaleNodePool',
      tag: TAG,
      summary: 'Scale a pool to 0-16 nodes; scaling down drains the nodes first (`draining`)',
      access: access(true),
      rateLimit,
      params: PoolParams,
      body: ScaleBody,
      response: { 200: PoolView },
      errors: [404, 409, 422],
      handler: async ({ principal, params, body }) =>
        k8s.scalePool(principal, params.id, params.pool, body.count),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/kubernetes/clusters/:id/node-pools/:pool',
      operationId: 'k8sDeleteNodePool',
      tag: TAG,
      summary: 'Delete a node pool; a cluster keeps at least one',
      access: access(true),
      rateLimit,
      params: PoolParams,
      response: { 204: Type.Null({ description: 'No content' }) },
      errors: [404, 409, 422],
      handler: async ({ principal, params, reply }) => {
        await k8s.deletePool(principal, params.id, params.pool);
        return reply.code(204).send();
      },
    }),
  ];
}

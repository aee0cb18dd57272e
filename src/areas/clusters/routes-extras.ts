import { Type } from '@sinclair/typebox';
import type { CustomerAccess } from '../../kernel/auth/principal.js';
import { defineRoute } from '../../kernel/http/route.js';
import type { BackupService } from './backups.js';
import type { ClusterIpService } from './ips.js';
import type { KubeconfigService } from './kubeconfig.js';
import {
  AllocateIpBody,
  BackupParams,
  BackupPolicyBody,
  BackupPolicyView,
  BackupView,
  ClusterParams,
  IpParams,
  KubeconfigQuery,
  KubeconfigYaml,
  NamespacesBody,
  PtrBody,
  PublicIp,
  RestoreView,
} from './schemas.js';

const TAG = 'Managed clusters';
const rateLimit = ['kubernetes'];
const access = (write: boolean): CustomerAccess => ({
  kind: 'customer',
  scopes: [write ? 'kubernetes:write' : 'kubernetes:read'],
  oidc: true,
  bearer: true,
});

/** Kubeconfig, public addresses and backups of a cluster. */
export function clusterExtraRoutes(deps: {
  kubeconfig: KubeconfigService;
  ips: ClusterIpService;
  backups: BackupService;
}) {
  const { kubeconfig, ips, backups } = deps;
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/kubernetes/clusters/:id/kubeconfig',
      operationId: 'k8sKubeconfig',
      tag: TAG,
      summary: 'A kubeconfig with a client certificate issued for this download (YAML); recorded in history',
      description:
        'Needs `kubernetes:write`: it grants cluster-admin. The certificate expires after `expiry_seconds` (default a week); the YAML states when, in a comment and in the `fjord.credential` user extension.',
      access: access(true),
      rateLimit,
      params: ClusterParams,
      query: KubeconfigQuery,
      produces: 'application/x-yaml',
      response: { 200: KubeconfigYaml },
      errors: [404, 409, 422],
      handler: async ({ principal, params, query, reply }) => {
        reply.header('cache-control', 'no-store');
        return kubeconfig.download(principal, params.id, query.expiry_seconds);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/kubernetes/clusters/:id/ips',
      operationId: 'k8sAllocateIp',
      tag: TAG,
      summary: 'Allocate a floating IPv4 address to a running cluster (billed per day)',
      access: access(true),
      rateLimit,
      params: ClusterParams,
      body: Type.Optional(AllocateIpBody),
      response: { 201: PublicIp },
      errors: [403, 404, 409, 503],
      handler: async ({ principal, params, reply }) => {
        reply.code(201);
        return ips.allocate(principal, params.id);
      },
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/kubernetes/clusters/:id/ips/:ip',
      operationId: 'k8sReleaseIp',
      tag: TAG,
      summary: 'Release a floating address (the gateway address stays with the cluster)',
      access: access(true),
      rateLimit,
      params: IpParams,
      response: { 204: Type.Null({ description: 'No content' }) },
      errors: [404, 409, 422],
      handler: async ({ principal, params, reply }) => {
        await ips.release(principal, params.id, params.ip);
        return reply.code(204).send();
      },
    }),
    defineRoute({
      method: 'PUT',
      url: '/v1/kubernetes/clusters/:id/ips/:ip/ptr',
      operationId: 'k8sSetIpPtr',
      tag: TAG,
      summary: 'Set the reverse-DNS name of a floating address; the name must already resolve to it',
      access: access(true),
      rateLimit,
      params: IpParams,
      body: PtrBody,
      response: { 200: PublicIp },
      errors: [404, 409, 422],
      handler: async ({ principal, params, body }) =>
        ips.setPtr(principal, params.id, params.ip, body.ptr_record),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/kubernetes/clusters/:id/backup-policy',
      operationId: 'k8sGetBackupPolicy',
      tag: TAG,
      summary: 'The cluster’s backup policy',
      access: access(false),
      rateLimit,
      params: ClusterParams,
      response: { 200: BackupPolicyView },
      errors: [404],
      handler: async ({ principal, params }) => backups.getPolicy(principal.customerId, params.id),
    }),
    defineRoute({
      method: 'PUT',
      url: '/v1/kubernetes/clusters/:id/backup-policy',
      operationId: 'k8sPutBackupPolicy',
      tag: TAG,
      summary: 'Change the backup policy (fields left out keep their values)',
      access: access(true),
      rateLimit,
      params: ClusterParams,
      body: BackupPolicyBody,
      response: { 200: BackupPolicyView },
      errors: [404, 409, 422],
      handler: async ({ principal, params, body }) => backups.putPolicy(principal, params.id, body),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/kubernetes/clusters/:id/backups',
      operationId: 'k8sListBackups',
      tag: TAG,
      summary: 'The cluster’s backups not yet expired, newest first',
      access: access(false),
      rateLimit,
      params: ClusterParams,
      response: { 200: Type.Object({ backups: Type.Array(BackupView) }) },
      errors: [404],
      handler: async ({ principal, params }) => backups.list(principal.customerId, params.id),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/kubernetes/clusters/:id/backups',
      operationId: 'k8sCreateBackup',
      tag: TAG,
      summary: 'Take a backup now (`{}` for every namespace); it completes on the clock',
      access: access(true),
      rateLimit,
      params: ClusterParams,
      body: Type.Optional(NamespacesBody),
      response: {
        202: Type.Object({ id: Type.String(), name: Type.String(), status: Type.String() }),
      },
      errors: [404, 409, 422],
      handler: async ({ principal, params, body, reply }) => {
        reply.code(202);
        return backups.create(principal, params.id, body?.namespaces ?? null);
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/kubernetes/clusters/:id/backups/:backup/restore',
      operationId: 'k8sRestoreBackup',
      tag: TAG,
      summary: 'Restore a Completed backup into the same cluster (optionally some of its namespaces)',
      access: access(true),
      rateLimit,
      params: BackupParams,
      body: Type.Optional(NamespacesBody),
      response: { 202: Type.Object({ restore: Type.String(), status: Type.String() }) },
      errors: [404, 409, 422],
      handler: async ({ principal, params, body, reply }) => {
        reply.code(202);
        return backups.restore(principal, params.id, params.backup, body?.namespaces ?? null);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/kubernetes/clusters/:id/restores',
      operationId: 'k8sListRestores',
      tag: TAG,
      summary: 'The cluster’s latest restores with their progress, newest first',
      access: access(false),
      rateLimit,
      params: ClusterParams,
      response: { 200: Type.Object({ restores: Type.Array(RestoreView) }) },
      errors: [404],
      handler: async ({ principal, params }) => backups.restores(principal.customerId, params.id),
    }),
  ];
}

import { Type } from '@sinclair/typebox';
import { type CustomerAccess, publicAccess } from '../../kernel/auth/principal.js';
import { defineRoute } from '../../kernel/http/route.js';
import type { NicUpdateHandler } from './nic-update.js';
import {
  ActiveSourceBody,
  CreateCredentialBody,
  CreatedCredential,
  CreateHostnameBody,
  Credential,
  CredentialParams,
  Deleted,
  Entitlement,
  HistoryQuery,
  Hostname,
  HostnameParams,
  NicUpdateQuery,
  UpdateHistory,
} from './schemas.js';
import type { CredentialKind, DynService } from './service.js';

const TAG = 'Dynamic DNS';
const access = (scope: string): CustomerAccess => ({
  kind: 'customer',
  services: ['dyndns'],
  scopes: [scope],
});
const read = access('dyndns:read');
const write = access('dyndns:write');
const rateLimit = ['dyn'];

/** Router tokens and desktop updater credentials share one shape and one set of routes. */
const CREDENTIAL_KINDS: { path: string; kind: CredentialKind; noun: string; op: string }[] = [
  { path: 'router-tokens', kind: 'router_token', noun: 'router token', op: 'RouterToken' },
  {
    path: 'updater-credentials',
    kind: 'updater',
    noun: 'desktop updater credential',
    op: 'UpdaterCredential',
  },
];

export function dynRoutes(dyn: DynService, nic: NicUpdateHandler) {
  const credentialRoutes = CREDENTIAL_KINDS.flatMap(({ path, kind, noun, op }) => [
    defineRoute({
      method: 'POST',
      url: `/v1/dyn/hostnames/:hostname_id/${path}`,
      operationId: `createDyn${op}`,
      tag: TAG,
      summary: `Create a ${noun} (DynDNS2 username and password)`,
      description:
        'The password is shown once. The first credential of a hostname becomes its active source; later ones wait until `PUT …/active-source` switches to them.',
      access: write,
      rateLimit,
      params: HostnameParams,
      body: Type.Optional(CreateCredentialBody),
      response: { 201: CreatedCredential },
      errors: [403, 404],
      handler: async ({ principal, params, body }) =>
        dyn.createCredential(principal.customerId, params.hostname_id, kind, body?.description ?? null),
    }),
    defineRoute({
      method: 'GET',
      url: `/v1/dyn/hostnames/:hostname_id/${path}`,
      operationId: `listDyn${op}s`,
      tag: TAG,
      summary: `List a hostname's ${noun}s (never their passwords)`,
      access: read,
      rateLimit,
      params: HostnameParams,
      response: { 200: Type.Array(Credential) },
      errors: [404],
      handler: async ({ principal, params }) =>
        dyn.listCredentials(principal.customerId, params.hostname_id, kind),
    }),
    defineRoute({
      method: 'DELETE',
      url: `/v1/dyn/hostnames/:hostname_id/${path}/:credential_id`,
      operationId: `deleteDyn${op}`,
      tag: TAG,
      summary: `Delete a ${noun}; it gets \`badauth\` from then on`,
      access: write,
      rateLimit,
      params: CredentialParams,
      response: { 200: Deleted },
      errors: [404],
      handler: async ({ principal, params }) =>
        dyn.deleteCredential(principal.customerId, params.hostname_id, kind, params.credential_id),
    }),
  ]);

  return [
    defineRoute({
      method: 'GET',
      url: '/v1/dyn/entitlement',
      operationId: 'getDynEntitlement',
      tag: TAG,
      summary: "The customer's dynamic DNS plan and the limits enforced",
      description: '`home` for private customers, `fleet` for business customers.',
      access: read,
      rateLimit,
      response: { 200: Entitlement },
      handler: async ({ principal }) => dyn.entitlement(principal.customerId),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/dyn/hostnames',
      operationId: 'createDynHostname',
      tag: TAG,
      summary: 'Claim a hostname in the dynamic zone or in one of your Fjord DNS zones',
      access: write,
      rateLimit,
      body: CreateHostnameBody,
      response: { 201: Hostname },
      errors: [403, 409, 422],
      handler: async ({ principal, body }) => dyn.createHostname(principal.customerId, body),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/dyn/hostnames',
      operationId: 'listDynHostnames',
      tag: TAG,
      summary: 'List hostnames',
      access: read,
      rateLimit,
      response: { 200: Type.Array(Hostname) },
      handler: async ({ principal }) => dyn.listHostnames(principal.customerId),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/dyn/hostnames/:hostname_id',
      operationId: 'getDynHostname',
      tag: TAG,
      summary: 'Get a hostname with its current addresses and active source',
      access: read,
      rateLimit,
      params: HostnameParams,
      response: { 200: Hostname },
      errors: [404],
      handler: async ({ principal, params }) => dyn.getHostname(principal.customerId, params.hostname_id),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/dyn/hostnames/:hostname_id',
      operationId: 'deleteDynHostname',
      tag: TAG,
      summary: 'Release a hostname: its address records and credentials are removed',
      access: write,
      rateLimit,
      params: HostnameParams,
      response: { 200: Deleted },
      errors: [404],
      handler: async ({ principal, params }) => dyn.deleteHostname(principal.customerId, params.hostname_id),
    }),
    defineRoute({
      method: 'PUT',
      url: '/v1/dyn/hostnames/:hostname_id/active-source',
      operationId: 'setDynActiveSource',
      tag: TAG,
      summary: 'Switch the one credential allowed to update the hostname',
      description: 'Atomic: from this answer on, the previous source gets `badauth`.',
      access: write,
      rateLimit,
      params: HostnameParams,
      body: ActiveSourceBody,
      response: { 200: Hostname },
      errors: [404, 422],
      handler: async ({ principal, params, body }) =>
        dyn.setActiveSource(principal.customerId, params.hostname_id, body.source_id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/dyn/hostnames/:hostname_id/updates',
      operationId: 'listDynUpdates',
      tag: TAG,
      summary: 'Update history of a hostname, newest first',
      access: read,
      rateLimit,
      params: HostnameParams,
      query: HistoryQuery,
      response: { 200: UpdateHistory },
      errors: [404],
      handler: async ({ principal, params, query }) =>
        dyn.updates(principal.customerId, params.hostname_id, query.page ?? 1, query.page_size ?? 50),
    }),
    ...credentialRoutes,
    defineRoute({
      method: 'GET',
      url: '/nic/update',
      operationId: 'dynDns2Update',
      tag: TAG,
      summary: 'DynDNS2 update (routers, ddclient, inadyn)',
      description:
        'HTTP Basic auth with a router token or updater credential. Answers `text/plain`, one line per hostname: `good <ip>`, `nochg <ip>`, `nohost`, `notfqdn`, `abuse`; or once: `badauth` (401), `badagent`, `numhost`, `911`.',
      access: publicAccess,
      query: NicUpdateQuery,
      produces: 'text/plain; charset=utf-8',
      response: { 200: Type.String() },
      errors: [401],
      errorsProduce: 'text/plain; charset=utf-8',
      handler: async ({ raw, reply, query }) => {
        const answer = await nic.handle({
          authorization: raw.headers.authorization,
          userAgent: raw.headers['user-agent'],
          query,
          clientIp: raw.ip,
        });
        return reply
          .code(answer.status)
          .headers(answer.headers)
          .type('text/plain; charset=utf-8')
          .send(answer.body);
      },
    }),
  ];
}

/**
 * The routes of an app's custom domains, and the local CA that signs their certificates. Apart
 * from routes.ts because domains are a resource of their own, served by AppDomains.
 */
import { publicAccess } from '../../kernel/auth/principal.js';
import { defineRoute } from '../../kernel/http/route.js';
import type { AppDomains } from './domains.js';
import { BUCKET, read, TAG, write } from './routes-common.js';
import {
  AppParams,
  CaView,
  CreateDomainBody,
  Deleted,
  DomainList,
  DomainParams,
  DomainView,
} from './schemas.js';

export function domainRoutes(domains: AppDomains) {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/apps/certificate-authority',
      operationId: 'appsCertificateAuthority',
      tag: TAG,
      summary: 'The certificate of the local CA that signs custom domains’ certificates',
      access: publicAccess,
      response: { 200: CaView },
      handler: async () => ({ certificate_pem: await domains.caCertificate() }),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/apps/:app_id/domains',
      operationId: 'appsCreateDomain',
      tag: TAG,
      summary: 'Add a custom domain; it becomes active once proven and pointed at the app',
      access: write,
      rateLimit: BUCKET,
      params: AppParams,
      body: CreateDomainBody,
      response: { 201: DomainView },
      errors: [403, 404, 409],
      handler: async ({ principal, params, body }) =>
        domains.create(principal.customerId, params.app_id, body.host_name),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/apps/:app_id/domains',
      operationId: 'appsDomains',
      tag: TAG,
      summary: 'The app’s custom domains',
      access: read,
      rateLimit: BUCKET,
      params: AppParams,
      response: { 200: DomainList },
      errors: [404],
      handler: async ({ principal, params }) => domains.list(principal.customerId, params.app_id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/apps/:app_id/domains/:domain_id',
      operationId: 'appsDomain',
      tag: TAG,
      summary: 'A custom domain, by id or host name',
      access: read,
      rateLimit: BUCKET,
      params: DomainParams,
      response: { 200: DomainView },
      errors: [404],
      handler: async ({ principal, params }) =>
        domains.get(principal.customerId, params.app_id, params.domain_id),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/apps/:app_id/domains/:domain_id',
      operationId: 'appsDeleteDomain',
      tag: TAG,
      summary: 'Remove a custom domain; the ingress stops answering for it',
      access: write,
      rateLimit: BUCKET,
      params: DomainParams,
      response: { 200: Deleted },
      errors: [404],
      handler: async ({ principal, params }) =>
        domains.remove(principal.customerId, params.app_id, params.domain_id),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/apps/:app_id/domains/:domain_id/check',
      operationId: 'appsCheckDomain',
      tag: TAG,
      summary: 'Check proof and CNAME now; an active domain gets its certificate',
      access: write,
      rateLimit: BUCKET,
      params: DomainParams,
      response: { 200: DomainView },
      errors: [404],
      handler: async ({ principal, params }) =>
        domains.check(principal.customerId, params.app_id, params.domain_id),
    }),
  ];
}

import { Type } from '@sinclair/typebox';
import type { CustomerAccess } from '../../kernel/auth/principal.js';
import { defineRoute } from '../../kernel/http/route.js';
import {
  CreateDomainBody,
  DeletedDomain,
  DomainIdParams,
  DomainList,
  DomainVerification,
  HistoryEntry,
  ListDomainsQuery,
  UpdateDomainBody,
  VerifyResult,
} from './schemas.js';
import type { DomainVerificationService } from './service.js';

const TAG = 'Domain verification';
/** A `dns` service key (the area sits beside DNS in doc 1) or a PAT with the area's scopes. */
const access = (scope: string): CustomerAccess => ({ kind: 'customer', services: ['dns'], scopes: [scope] });
const read = access('domain-verification:read');
const write = access('domain-verification:write');
const rateLimit = ['domain-verification'];

export function domainVerificationRoutes(service: DomainVerificationService) {
  return [
    defineRoute({
      method: 'POST',
      url: '/v1/domain-verification/domains',
      operationId: 'createDomainVerification',
      tag: TAG,
      summary: 'Register a domain for verification and get its DNS instructions',
      description:
        'A domain inside one of your active Fjord DNS zones is verified at once (`INTERNAL_DNS_AUTHORITY`).',
      access: write,
      rateLimit,
      body: CreateDomainBody,
      response: { 201: DomainVerification },
      errors: [409],
      handler: async ({ principal, body }) => service.create(principal.customerId, body),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/domain-verification/domains',
      operationId: 'listDomainVerifications',
      tag: TAG,
      summary: 'List domains, filtered by purpose and status',
      access: read,
      rateLimit,
      query: ListDomainsQuery,
      response: { 200: DomainList },
      handler: async ({ principal, query }) =>
        service.list(
          principal.customerId,
          { purpose: query.purpose, status: query.status },
          query.page ?? 1,
          query.page_size ?? 20,
        ),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/domain-verification/domains/:domain_id',
      operationId: 'getDomainVerification',
      tag: TAG,
      summary: 'Get a domain verification record',
      access: read,
      rateLimit,
      params: DomainIdParams,
      response: { 200: DomainVerification },
      errors: [404],
      handler: async ({ principal, params }) => service.get(principal.customerId, params.domain_id),
    }),
    defineRoute({
      method: 'PATCH',
      url: '/v1/domain-verification/domains/:domain_id',
      operationId: 'updateDomainVerification',
      tag: TAG,
      summary: 'Revoke a verified domain or replace its metadata',
      access: write,
      rateLimit,
      params: DomainIdParams,
      body: UpdateDomainBody,
      response: { 200: DomainVerification },
      errors: [404, 422],
      handler: async ({ principal, params, body }) =>
        service.update(principal.customerId, params.domain_id, body),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/domain-verification/domains/:domain_id',
      operationId: 'deleteDomainVerification',
      tag: TAG,
      summary: 'Delete a domain verification (soft delete, kept for audit)',
      description: 'Answers `message` and, for older clients, `success`.',
      access: write,
      rateLimit,
      params: DomainIdParams,
      response: { 200: DeletedDomain },
      errors: [404],
      handler: async ({ principal, params }) => service.remove(principal.customerId, params.domain_id),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/domain-verification/domains/:domain_id/verify',
      operationId: 'verifyDomain',
      tag: TAG,
      summary: 'Look the verification record up now',
      description:
        'The record must already exist. A missing record answers 200 with `verified: false` and a message naming what was expected and what was found.',
      access: write,
      rateLimit,
      params: DomainIdParams,
      response: { 200: VerifyResult },
      errors: [404, 409],
      handler: async ({ principal, params }) => service.verify(principal.customerId, params.domain_id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/domain-verification/domains/:domain_id/history',
      operationId: 'getDomainVerificationHistory',
      tag: TAG,
      summary: 'Every check and status change of a domain',
      access: read,
      rateLimit,
      params: DomainIdParams,
      response: { 200: Type.Array(HistoryEntry) },
      errors: [404],
      handler: async ({ principal, params }) => service.history(principal.customerId, params.domain_id),
    }),
  ];
}

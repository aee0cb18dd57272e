import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { type CustomerAccess, operatorAccess } from '../../kernel/auth/principal.js';
import { defineRoute } from '../../kernel/http/route.js';
import { CATEGORIES } from './categories.js';
import { ipErrorFormat } from './errors.js';
import {
  AsnView,
  Categories,
  CountryView,
  DelistBody,
  DelistView,
  GeoView,
  IpParams,
  LiveFeed,
  RegisterBody,
  ReportBody,
  ReporterView,
  ReportView,
  SubscriptionView,
  Summary,
  ThreatView,
  VerifyBody,
} from './schemas.js';
import type { IpService } from './service.js';
import { TIERS } from './service.js';

const TAG = 'IP intelligence';
const ATTRIBUTION =
  'Geolocation and network data: DB-IP City Lite and the @ip-location-db ASN set (RouteViews, DB-IP), CC BY 4.0, unless the operator installed other files.';
const access = (scope: string): CustomerAccess => ({
  kind: 'customer',
  services: ['ip'],
  scopes: [scope],
  oidc: false,
  bearer: false,
});
const common = {
  tag: TAG,
  errorFormat: ipErrorFormat,
  rateLimit: ['ip'],
} as const;
const LOOKUP_ERRORS = [400, 403, 404, 429];

export function ipRoutes(ip: IpService) {
  /** Counts the request against the tier (403/429 before any work) and shows the day's quota. */
  const admitted = async (customerId: string, reply: FastifyReply) => {
    const q = await ip.admit(customerId);
    if (q.limit !== null) {
      reply.header('x-ratelimit-limit', q.limit);
      reply.header('x-ratelimit-remaining', Math.max(0, q.remaining ?? 0));
      reply.header('x-ratelimit-reset', Math.ceil(q.reset / 1000));
    }
  };
  return [
    defineRoute({
      ...common,
      method: 'GET',
      url: '/v1/ip/threats/live',
      operationId: 'getIpLiveThreats',
      summary: 'The most recently reported addresses scoring 25 or more',
      access: access('ip:read'),
      query: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })) }),
      response: { 200: LiveFeed },
      errors: LOOKUP_ERRORS,
      handler: async ({ principal, query, reply }) => {
        await admitted(principal.customerId, reply);
        return ip.live(query.limit ?? 25);
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/v1/ip/countries/:code',
      operationId: 'getIpCountry',
      summary: 'Threats reported in a country',
      access: access('ip:read'),
      params: Type.Object({ code: Type.String({ description: 'ISO 3166-1 alpha-2' }) }),
      response: { 200: CountryView },
      errors: LOOKUP_ERRORS,
      handler: async ({ principal, params, reply }) => {
        await admitted(principal.customerId, reply);
        return ip.country(params.code);
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/v1/ip/asn/:asn',
      operationId: 'getIpAsn',
      summary: 'An autonomous system: name, country, announced space, type and threats',
      access: access('ip:read'),
      params: Type.Object({ asn: Type.String({ description: '1-4294967295' }) }),
      response: { 200: AsnView },
      errors: LOOKUP_ERRORS,
      handler: async ({ principal, params, reply }) => {
        await admitted(principal.customerId, reply);
        return ip.asnView(params.asn);
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/v1/ip/categories',
      operationId: 'getIpCategories',
      summary: 'Report categories (AbuseIPDB’s numbers), their weight in the score and the flag they raise',
      access: access('ip:read'),
      response: { 200: Categories },
      handler: async () =>
        CATEGORIES.map((c) => ({ id: c.id, name: c.slug, weight: c.weight, flag: c.flag ?? null })),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/v1/ip/subscription',
      operationId: 'getIpSubscription',
      summary: 'The tier, its limits and today’s use (the free tier starts on first use)',
      access: access('ip:read'),
      response: { 200: SubscriptionView },
      handler: async ({ principal }) => ip.subscription(principal.customerId),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/v1/ip/:ip',
      operationId: 'getIpSummary',
      summary: 'Everything known of an address: reverse name, geolocation, network, threat score and flags',
      description: ATTRIBUTION,
      access: access('ip:read'),
      params: IpParams,
      response: { 200: Summary },
      errors: [400, 403, 429],
      handler: async ({ principal, params, reply }) => {
        await admitted(principal.customerId, reply);
        return ip.summary(params.ip);
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/v1/ip/:ip/geo',
      operationId: 'getIpGeo',
      summary: 'Geolocation and network of an address',
      description: ATTRIBUTION,
      access: access('ip:read'),
      params: IpParams,
      response: { 200: GeoView },
      errors: [400, 403, 429],
      handler: async ({ principal, params, reply }) => {
        await admitted(principal.customerId, reply);
        return ip.geoView(params.ip);
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      url: '/v1/ip/:ip/threat',
      operationId: 'getIpThreat',
      summary: 'The threat score of an address, from reports',
      access: access('ip:read'),
      params: IpParams,
      response: { 200: ThreatView },
      errors: [400, 403, 429],
      handler: async ({ principal, params, reply }) => {
        await admitted(principal.customerId, reply);
        return ip.threatView(params.ip);
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/v1/ip/report',
      operationId: 'reportIp',
      summary: 'Report abuse from an address (one report per address per 15 minutes)',
      access: access('ip:write'),
      body: ReportBody,
      response: { 201: ReportView },
      errors: [400, 403, 409, 422, 429],
      handler: async ({ principal, body, reply }) => {
        await admitted(principal.customerId, reply);
        return ip.reports.report(principal.customerId, body);
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/v1/ip/reporters/register',
      operationId: 'registerIpReporter',
      summary: 'Register a reporter domain: answers the TXT record that proves it',
      access: access('ip:write'),
      body: RegisterBody,
      response: { 201: ReporterView },
      errors: [400, 403, 409, 422, 429],
      handler: async ({ principal, body, reply }) => {
        await admitted(principal.customerId, reply);
        return ip.reports.registerReporter(principal.customerId, body);
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/v1/ip/reporters/verify',
      operationId: 'verifyIpReporter',
      summary: 'Look the reporter domain’s TXT record up now; verified reporters’ reports count fully',
      access: access('ip:write'),
      body: VerifyBody,
      response: { 200: ReporterView },
      errors: [400, 403, 404, 422, 429],
      handler: async ({ principal, body, reply }) => {
        await admitted(principal.customerId, reply);
        return ip.reports.verifyReporter(principal.customerId, body.domain);
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      url: '/v1/ip/delist',
      operationId: 'delistIp',
      summary:
        'Ask for an address’s reports to stop counting: at once with proof of ownership, else after review',
      access: access('ip:write'),
      body: DelistBody,
      response: { 201: DelistView },
      errors: [400, 403, 422, 429],
      handler: async ({ principal, body, reply }) => {
        await admitted(principal.customerId, reply);
        return ip.reports.delist(principal.customerId, body);
      },
    }),
    defineRoute({
      method: 'PUT',
      url: '/admin/v1/ip/subscriptions/:customer_id',
      operationId: 'setIpSubscription',
      tag: TAG,
      summary: 'Operator: set a customer’s IP intelligence tier (`none` ends the subscription)',
      access: operatorAccess,
      params: Type.Object({ customer_id: Type.String() }),
      body: Type.Object({ tier: Type.Union([...TIERS, 'none'].map((t) => Type.Literal(t))) }),
      response: { 200: SubscriptionView },
      errors: [404, 422],
      handler: async ({ params, body }) =>
        ip.setTier(params.customer_id, body.tier as (typeof TIERS)[number] | 'none'),
    }),
    defineRoute({
      method: 'GET',
      url: '/admin/v1/ip/delists',
      operationId: 'listIpDelists',
      tag: TAG,
      summary: 'Operator: delisting requests, newest first',
      access: operatorAccess,
      query: Type.Object({
        status: Type.Optional(
          Type.Union(['delisted', 'pending_review', 'rejected'].map((s) => Type.Literal(s))),
        ),
      }),
      response: { 200: Type.Object({ delists: Type.Array(DelistView) }) },
      handler: async ({ query }) => ip.reports.delists(query.status),
    }),
    defineRoute({
      method: 'POST',
      url: '/admin/v1/ip/delists/:delist_id/decision',
      operationId: 'decideIpDelist',
      tag: TAG,
      summary: 'Operator: approve or reject a delisting request under review',
      access: operatorAccess,
      params: Type.Object({ delist_id: Type.String() }),
      body: Type.Object({ decision: Type.Union([Type.Literal('approve'), Type.Literal('reject')]) }),
      response: { 200: DelistView },
      errors: [404, 409],
      handler: async ({ params, body }) => ip.reports.decideDelist(params.delist_id, body.decision),
    }),
  ];
}

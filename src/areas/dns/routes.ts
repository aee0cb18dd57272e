import { operatorAccess } from '../../kernel/auth/principal.js';
import { SuccessMessage } from '../../kernel/http/common-schemas.js';
import { defineRoute } from '../../kernel/http/route.js';
import { dnsAccess, TAG } from './access.js';
import { dnsRecordRoutes } from './routes-records.js';
import {
  CreateZoneBody,
  DnssecActivation,
  DnsUsage,
  Statistics,
  Zone,
  ZoneList,
  ZoneParams,
} from './schemas.js';
import type { DnsService } from './service.js';

export function dnsRoutes(dns: DnsService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/dns/zones',
      operationId: 'listDnsZones',
      tag: TAG,
      summary: 'List DNS zones',
      access: dnsAccess('dns:read'),
      rateLimit: ['dns.zone.read'],
      response: { 200: ZoneList },
      handler: async ({ principal }) => dns.listZones(principal.customerId),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/dns/zones',
      operationId: 'createDnsZone',
      tag: TAG,
      summary: 'Create a DNS zone',
      description:
        'The zone is `pending` (and already served) until its delegation at the registrar names the returned `nameservers`; Fjord checks that and makes it `active`. 409 when any account already holds the domain.',
      access: dnsAccess('dns:write'),
      rateLimit: ['dns.zone.create'],
      body: CreateZoneBody,
      response: { 201: Zone },
      errors: [403, 409],
      handler: async ({ principal, body }) =>
        dns.createZone(principal.customerId, principal.credential, body.domain),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/dns/zones/:zone_name',
      operationId: 'getDnsZone',
      tag: TAG,
      summary: 'Get a DNS zone',
      access: dnsAccess('dns:read'),
      rateLimit: ['dns.zone.read'],
      params: ZoneParams,
      response: { 200: Zone },
      errors: [404],
      handler: async ({ principal, params }) => dns.getZone(principal.customerId, params.zone_name),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/dns/zones/:zone_name',
      operationId: 'deleteDnsZone',
      tag: TAG,
      summary: 'Delete a DNS zone and all its records (irreversible)',
      access: dnsAccess('dns:write'),
      rateLimit: ['dns.zone.write'],
      params: ZoneParams,
      response: { 200: SuccessMessage },
      errors: [404],
      handler: async ({ principal, params }) =>
        dns.deleteZone(principal.customerId, principal.credential, params.zone_name),
    }),
    ...dnsRecordRoutes(dns),
    defineRoute({
      method: 'POST',
      url: '/v1/dns/zones/:zone_name/dnssec/activate',
      operationId: 'activateDnssec',
      tag: TAG,
      summary: 'Turn on DNSSEC signing',
      description:
        'Makes one ECDSA P-256/SHA-256 (algorithm 13) key for the zone, or reuses the one it has, and signs answers online. Place the returned DS record at the registrar. Calling it again returns the same DS.',
      access: dnsAccess('dns:write'),
      rateLimit: ['dns.zone.write'],
      params: ZoneParams,
      response: { 200: DnssecActivation },
      errors: [404],
      handler: async ({ principal, params }) =>
        dns.activateDnssec(principal.customerId, principal.credential, params.zone_name),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/dns/zones/:zone_name/dnssec',
      operationId: 'deactivateDnssec',
      tag: TAG,
      summary: 'Turn off DNSSEC signing',
      description:
        'Remove the DS record at the registrar first, and wait for its TTL, or validating resolvers will fail the zone.',
      access: dnsAccess('dns:write'),
      rateLimit: ['dns.zone.write'],
      params: ZoneParams,
      response: { 200: SuccessMessage },
      errors: [404],
      handler: async ({ principal, params }) =>
        dns.deactivateDnssec(principal.customerId, principal.credential, params.zone_name),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/dns/zones/:zone_name/statistics',
      operationId: 'getDnsZoneStatistics',
      tag: TAG,
      summary: 'Query statistics of a zone',
      description: 'Counted by the DNS servers themselves, per UTC day and record type.',
      access: dnsAccess('dns:read'),
      rateLimit: ['dns.zone.read'],
      params: ZoneParams,
      response: { 200: Statistics },
      errors: [404],
      handler: async ({ principal, params }) => dns.statistics(principal.customerId, params.zone_name),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/dns/usage',
      operationId: 'getDnsUsage',
      tag: TAG,
      summary: 'The plan’s DNS quotas and what is used of them',
      description:
        'Zones, records per zone and queries this month. When the month’s queries reach the plan’s quota, the zones are paused (queries get REFUSED) until the 1st of next month or a larger plan.',
      access: dnsAccess('dns:read'),
      rateLimit: ['dns.zone.read'],
      response: { 200: DnsUsage },
      handler: async ({ principal }) => dns.usage(principal.customerId),
    }),
    defineRoute({
      method: 'POST',
      url: '/admin/v1/dns/zones/:zone_name/disable',
      operationId: 'disableDnsZone',
      tag: TAG,
      summary: 'Operator: disable a zone (no longer served; records frozen)',
      access: operatorAccess,
      params: ZoneParams,
      response: { 200: Zone },
      errors: [404],
      handler: async ({ params }) => dns.setZoneEnabled(params.zone_name, false),
    }),
    defineRoute({
      method: 'POST',
      url: '/admin/v1/dns/zones/:zone_name/enable',
      operationId: 'enableDnsZone',
      tag: TAG,
      summary: 'Operator: enable a disabled zone again (pending until its delegation is seen)',
      access: operatorAccess,
      params: ZoneParams,
      response: { 200: Zone },
      errors: [404],
      handler: async ({ params }) => dns.setZoneEnabled(params.zone_name, true),
    }),
  ];
}

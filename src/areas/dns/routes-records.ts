import { SuccessMessage } from '../../kernel/http/common-schemas.js';
import { defineRoute } from '../../kernel/http/route.js';
import { dnsAccess, TAG, ZoneFileText } from './access.js';
import {
  BatchBody,
  BatchResult,
  CreateRecordBody,
  ImportBody,
  ImportResult,
  Record,
  RecordList,
  RecordParams,
  UpdateRecordBody,
  ZoneParams,
} from './schemas.js';
import type { DnsService } from './service.js';

export function dnsRecordRoutes(dns: DnsService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/dns/zones/:zone_name/records',
      operationId: 'listDnsRecords',
      tag: TAG,
      summary: 'List the records of a zone',
      description:
        'Every record the customer manages (the SOA and apex NS records are Fjord’s and not listed).',
      access: dnsAccess('dns:read'),
      rateLimit: ['dns.record.read'],
      params: ZoneParams,
      response: { 200: RecordList },
      errors: [404],
      handler: async ({ principal, params }) => dns.listRecords(principal.customerId, params.zone_name),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/dns/zones/:zone_name/records',
      operationId: 'createDnsRecord',
      tag: TAG,
      summary: 'Create a record',
      description: 'Served by every DNS process within a second (the documents promise 5 minutes).',
      access: dnsAccess('dns:write'),
      rateLimit: ['dns.record.create'],
      params: ZoneParams,
      body: CreateRecordBody,
      response: { 201: Record },
      errors: [403, 404, 409],
      handler: async ({ principal, params, body }) =>
        dns.createRecord(principal.customerId, principal.credential, params.zone_name, body),
    }),
    defineRoute({
      method: 'PUT',
      url: '/v1/dns/zones/:zone_name/records/:record_id',
      operationId: 'updateDnsRecord',
      tag: TAG,
      summary: 'Update a record (only the fields sent)',
      access: dnsAccess('dns:write'),
      rateLimit: ['dns.record.update'],
      params: RecordParams,
      body: UpdateRecordBody,
      response: { 200: Record },
      errors: [404, 409],
      handler: async ({ principal, params, body }) =>
        dns.updateRecord(
          principal.customerId,
          principal.credential,
          params.zone_name,
          params.record_id,
          body ?? {},
        ),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/dns/zones/:zone_name/records/:record_id',
      operationId: 'deleteDnsRecord',
      tag: TAG,
      summary: 'Delete a record',
      access: dnsAccess('dns:write'),
      rateLimit: ['dns.record.delete'],
      params: RecordParams,
      response: { 200: SuccessMessage },
      errors: [404],
      handler: async ({ principal, params }) =>
        dns.deleteRecord(principal.customerId, principal.credential, params.zone_name, params.record_id),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/dns/zones/:zone_name/records/batch',
      operationId: 'batchDnsRecords',
      tag: TAG,
      summary: 'Apply up to 1000 record changes atomically',
      description:
        'Creates, updates and deletes in order, all or nothing: when one change fails, none is applied and the error names it (`/body/changes/<i>/…`). One serial increase for the whole batch. Counts as one request in each record write bucket.',
      access: dnsAccess('dns:write'),
      rateLimit: ['dns.record.create', 'dns.record.update', 'dns.record.delete'],
      params: ZoneParams,
      body: BatchBody,
      response: { 200: BatchResult },
      errors: [403, 404, 409],
      handler: async ({ principal, params, body }) =>
        dns.batch(principal.customerId, principal.credential, params.zone_name, body.changes),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/dns/zones/:zone_name/export',
      operationId: 'exportDnsZone',
      tag: TAG,
      summary: 'Export the zone as a BIND zone file',
      access: dnsAccess('dns:read'),
      rateLimit: ['dns.record.read'],
      params: ZoneParams,
      produces: 'text/dns; charset=utf-8',
      response: { 200: ZoneFileText },
      errors: [404],
      handler: async ({ principal, params }) => dns.exportZone(principal.customerId, params.zone_name),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/dns/zones/:zone_name/import',
      operationId: 'importDnsZone',
      tag: TAG,
      summary: 'Import a BIND zone file (all records or none)',
      description:
        'At most 1000 records per import. SOA, apex NS and DNSSEC records are skipped (Fjord keeps them) and listed in `skipped`. With `replace`, every existing record is removed first, in the same transaction.',
      access: dnsAccess('dns:write'),
      rateLimit: ['dns.record.create', 'dns.record.delete'],
      params: ZoneParams,
      body: ImportBody,
      response: { 200: ImportResult },
      errors: [403, 404, 409],
      handler: async ({ principal, params, body }) =>
        dns.importZone(
          principal.customerId,
          principal.credential,
          params.zone_name,
          body.zone_file,
          body.replace ?? false,
        ),
    }),
  ];
}

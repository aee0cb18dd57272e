import type { Credential } from '../../kernel/auth/principal.js';
import { AppError, kernelErrors } from '../../kernel/errors.js';
import type { DnsRecordsTable, DnsZonesTable } from './migrations.js';
import { dnsErrors } from './record-changes.js';

export const zoneErrors = {
  notFound: () => kernelErrors.notFound('Zone'),
  invalidDomain: (message: string) =>
    new AppError('invalid', 'invalid_domain', `domain: ${message}.`, {
      errors: [{ path: '/body/domain', message }],
    }),
  taken: () => new AppError('conflict', 'zone_exists', 'This domain is already hosted as a zone.'),
  overlaps: (other: string) =>
    new AppError(
      'conflict',
      'zone_overlaps',
      `This domain overlaps the zone ${other}, held by another account.`,
    ),
  reserved: () =>
    new AppError(
      'conflict',
      'zone_reserved',
      'This domain holds Fjord’s own nameserver names and cannot be hosted as a customer zone.',
    ),
  platformReserved: () =>
    new AppError(
      'conflict',
      'zone_reserved',
      'This domain is reserved for a zone the platform serves itself.',
    ),
  disabled: () =>
    new AppError(
      'conflict',
      'zone_disabled',
      'This zone was disabled by the operator; its records cannot be changed.',
    ),
  zoneQuota: (n: number) => dnsErrors.quota(`Your plan allows at most ${n} DNS zones.`),
  batchTooLarge: (max: number, got: number) =>
    kernelErrors.invalid(`A batch may carry at most ${max} record changes (this one has ${got}).`, [
      { path: '/body/changes', message: `at most ${max} changes` },
    ]),
  zoneFile: (message: string) =>
    new AppError('invalid', 'invalid_zone_file', message, { errors: [{ path: '/body/zone_file', message }] }),
};

export interface ZoneView {
  id: string;
  name: string;
  status: DnsZonesTable['status'];
  dnssec_enabled: boolean;
  record_count: number;
  nameservers: string[];
  created_at: string;
}

export interface RecordView {
  id: string;
  name: string;
  type: string;
  content: string;
  ttl: number;
  priority: number | null;
}

export const recordView = (r: DnsRecordsTable): RecordView => ({
  id: r.id,
  name: r.name,
  type: r.type,
  content: r.content,
  ttl: r.ttl,
  priority: r.priority,
});

export type Actor = Pick<Credential, 'kind' | 'id'> | { kind: 'system'; id: null };
export const SYSTEM: Actor = { kind: 'system', id: null };

export const zoneView = (
  z: DnsZonesTable,
  recordCount: number,
  nameservers: readonly string[],
): ZoneView => ({
  id: z.id,
  name: z.name,
  status: z.status,
  dnssec_enabled: z.dnssec_enabled === 1,
  record_count: recordCount,
  nameservers: [...nameservers],
  created_at: new Date(z.created_at).toISOString(),
});

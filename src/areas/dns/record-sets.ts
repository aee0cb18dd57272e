/**
 * Whole record sets written by the platform rather than a customer: dynamic DNS and domain
 * verification find the customer's zone for a name and make the records at it exactly a given
 * list. Apart from the service because they speak names and sets, not zones and record ids.
 */
import type { DnsZonesTable } from './migrations.js';
import { NameError, normaliseHost, toAscii } from './names.js';
import { dnsErrors, type PathOf, type RecordChange } from './record-changes.js';
import type { RecordType } from './record-content.js';
import type { RecordWriter } from './record-writer.js';
import type { DnsRepo } from './repo.js';
import { SYSTEM, zoneErrors } from './views.js';

/** Where a field of a request body is, for error pointers. */
export const bodyPath: PathOf = (_i, field) => `/body/${field}`;

export async function zoneForName(
  repo: DnsRepo,
  customerId: string,
  name: string,
): Promise<{ zoneId: string; apex: string; host: string; status: DnsZonesTable['status'] } | null> {
  const ascii = toAscii(name);
  if (!ascii) return null;
  const labels = ascii.split('.');
  const candidates = labels.map((_, i) => labels.slice(i).join('.'));
  const zones = (await repo.zonesNamed(candidates)).filter((z) => z.customer_id === customerId);
  const zone = zones.sort((a, b) => b.name.length - a.name.length)[0];
  if (!zone) return null;
  return {
    zoneId: zone.id,
    apex: zone.name,
    host: ascii === zone.name ? '@' : ascii.slice(0, -(zone.name.length + 1)),
    status: zone.status,
  };
}

export async function setRecordSet(
  repo: DnsRepo,
  writer: RecordWriter,
  zoneId: string,
  name: string,
  type: RecordType,
  values: { record: string; priority?: number | null }[],
  ttl: number,
): Promise<{ changed: boolean }> {
  const zone = await repo.zoneById(zoneId);
  if (!zone) throw zoneErrors.notFound();
  let host: string;
  try {
    host = normaliseHost(name, zone.name);
  } catch (err) {
    if (err instanceof NameError)
      throw dnsErrors.invalid('/name', `${name}: ${err.message}.`, 'invalid_host');
    throw err;
  }
  const plan = await writer.apply(
    zone,
    (existing) => [
      ...existing
        .filter((r) => r.name === host && r.type === type)
        .map((r): RecordChange => ({ action: 'delete', id: r.id })),
      ...values.map(
        (v): RecordChange => ({
          action: 'create',
          record_type: type,
          host,
          record: v.record,
          priority: v.priority ?? null,
          ttl,
        }),
      ),
    ],
    SYSTEM,
    bodyPath,
    'invalid',
    { unchangedIfSame: true },
  );
  return { changed: plan.inserts.length + plan.updates.length + plan.deletes.length > 0 };
}

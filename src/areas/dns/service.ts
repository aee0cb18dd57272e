import type { Logger } from 'pino';
import type { AuditTrail } from '../../kernel/audit/audit.js';
import type { IdentityService } from '../../kernel/auth/identity.js';
import type { Clock } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import { type DnsLookup, ResolverError } from '../../kernel/net/resolver.js';
import type { SecretBox } from '../../kernel/secrets.js';
import { insertUnique } from '../../kernel/store/dialect.js';
import type { Units } from '../../kernel/store/unit-of-work.js';
import type { DnsZonesTable } from './migrations.js';
import { NameError, normaliseZoneName, toAscii } from './names.js';
import { QueryQuota } from './query-quota.js';
import type { RecordChange } from './record-changes.js';
import type { RecordType } from './record-content.js';
import { bodyPath, setRecordSet, zoneForName } from './record-sets.js';
import { RecordWriter } from './record-writer.js';
import type { DnsRepo } from './repo.js';
import type { QueryStatsSink } from './server-contract.js';
import { nextSerial, soaFor } from './soa.js';
import { QueryStatistics } from './statistics.js';
import { type Actor, recordView, SYSTEM, type ZoneView, zoneErrors, zoneView } from './views.js';
import { writeZoneFile } from './zone-file.js';
import { importZoneFile } from './zone-import.js';
import { ZoneKeys } from './zone-keys.js';
import type { StoreZoneSource } from './zone-source.js';

/**
 * Zones, records, DNSSEC keys and query statistics. Every committed change raises the zone's
 * SOA serial and is announced to the DNS servers of every process. Dynamic DNS and domain
 * verification write through `findZoneForName`, `setRecordSet` and `deleteRecordSet`.
 */
export class DnsService implements QueryStatsSink {
  private readonly stats: QueryStatistics;
  private readonly quota: QueryQuota;
  private readonly writer: RecordWriter;
  private readonly keys: ZoneKeys;
  private readonly repo: DnsRepo;
  constructor(
    private readonly data: Units<DnsRepo>,
    readonly source: StoreZoneSource,
    private readonly deps: {
      clock: Clock;
      identity: IdentityService;
      audit: AuditTrail;
      secrets: SecretBox;
      resolver: DnsLookup;
      nameservers: string[];
      /** Zones only the platform may create (the dynamic DNS zone). */
      platformZones: string[];
      log: Logger;
      limits: Limits;
      enqueueCheck: (zoneId: string) => Promise<void>;
    },
  ) {
    this.repo = data.read;
    this.quota = new QueryQuota(this.repo, { ...deps, announce: (apex) => source.announce(apex) });
    this.stats = new QueryStatistics(this.repo, (customerIds) => this.quota.afterCounted(customerIds));
    this.writer = new RecordWriter(data, source, deps);
    this.keys = new ZoneKeys(data, source, deps);
  }

  // Zones

  async listZones(customerId: string) {
    const zones = await this.repo.zonesOf(customerId);
    const counts = await this.repo.recordCounts(zones.map((z) => z.id));
    const views = zones.map((z) => zoneView(z, counts.get(z.id) ?? 0, this.deps.nameservers));
    return { zones: views, total: views.length };
  }

  async getZone(customerId: string, zoneName: string): Promise<ZoneView> {
    const zone = await this.zoneOf(customerId, zoneName);
    const counts = await this.repo.recordCounts([zone.id]);
    return zoneView(zone, counts.get(zone.id) ?? 0, this.deps.nameservers);
  }

  async createZone(customerId: string, actor: Actor, domain: string): Promise<ZoneView> {
    let name: string;
    try {
      name = normaliseZoneName(domain);
    } catch (err) {
      if (err instanceof NameError) throw zoneErrors.invalidDomain(err.message);
      throw err;
    }
    // Whoever held the zone of Fjord's own nameserver names would answer for them (and their glue).
    if (this.deps.nameservers.some((ns) => ns === name || ns.endsWith(`.${name}`)))
      throw zoneErrors.reserved();
    // Zones the platform serves itself (the dynamic DNS zone): no customer may hold them, a part
    // of them, or a parent of them; only the platform creates them.
    const overlapsPlatform = (r: string) => r === name || r.endsWith(`.${name}`) || name.endsWith(`.${r}`);
    if (actor.kind !== 'system' && this.deps.platformZones.some(overlapsPlatform))
      throw zoneErrors.platformReserved();
    const labels = name.split('.');
    const parents = labels.slice(1, -1).map((_, i) => labels.slice(i + 1).join('.'));
    const maxZones = this.deps.limits.of(
      'dns.zones',
      (await this.deps.identity.getCustomer(customerId))?.plan,
    );
    const now = this.deps.clock.nowMs();
    const row: DnsZonesTable = {
      id: newId(),
      customer_id: customerId,
      name,
      status: 'pending',
      serial: nextSerial(0, now),
      dnssec_enabled: 0,
      created_at: now,
      updated_at: now,
      delegation_checked_at: null,
    };
    // Counted and written under the customer's lock, so requests at once cannot pass the quota
    // together; the overlap check runs there too (under the name's lock, so two customers cannot
    // take a parent and a child of each other at once).
    const names = [name, ...parents].map((n) => `dns:name:${n}`);
    await this.data.run([`dns:zones:${customerId}`, ...names], async (tx) => {
      for (const z of await tx.overlapping(name, parents)) {
        if (z.name === name) throw zoneErrors.taken();
        // A customer may split its own domain into zones, never take a part of someone else's.
        if (z.customer_id !== customerId) throw zoneErrors.overlaps(z.name);
      }
      if (maxZones !== null && (await tx.countZones(customerId)) >= maxZones)
        throw zoneErrors.zoneQuota(maxZones);
      await insertUnique(() => tx.insertZone(row), zoneErrors.taken);
    });
    await this.audit(customerId, actor, 'zone.created', row.id, { name });
    await this.source.announce(name);
    await this.deps.enqueueCheck(row.id);
    return zoneView(row, 0, this.deps.nameservers);
  }

  async deleteZone(customerId: string, actor: Actor, zoneName: string) {
    const zone = await this.zoneOf(customerId, zoneName);
    await this.repo.deleteZone(zone.id);
    await this.audit(customerId, actor, 'zone.deleted', zone.id, { name: zone.name });
    await this.source.announce(zone.name);
    return { success: true, message: `Zone ${zone.name} and all its records were deleted.` };
  }

  /** Operator: disable (stop serving) or enable (back to pending, delegation checked again). */
  async setZoneEnabled(zoneName: string, enabled: boolean): Promise<ZoneView> {
    const zone = await this.repo.zoneByName(toAscii(zoneName));
    if (!zone) throw zoneErrors.notFound();
    const now = this.deps.clock.nowMs();
    if (enabled) await this.repo.setStatus(zone.id, ['disabled'], 'pending', now);
    else await this.repo.setStatus(zone.id, ['pending', 'active'], 'disabled', now);
    await this.audit(
      zone.customer_id,
      { kind: 'operator', id: 'operator' },
      enabled ? 'zone.enabled' : 'zone.disabled',
      zone.id,
    );
    await this.source.announce(zone.name);
    if (enabled) await this.deps.enqueueCheck(zone.id);
    return this.getZone(zone.customer_id, zone.name);
  }

  /**
   * Asks the resolver for the zone's NS records: a pending zone whose delegation names only
   * Fjord's nameservers becomes active. A resolver failure leaves it pending for the next round.
   */
  async checkDelegation(zoneId: string): Promise<DnsZonesTable['status'] | null> {
    const zone = await this.repo.zoneById(zoneId);
    if (!zone || zone.status !== 'pending') return zone?.status ?? null;
    const now = this.deps.clock.nowMs();
    let ns: string[];
    try {
      ns = await this.deps.resolver.ns(zone.name);
    } catch (err) {
      if (!(err instanceof ResolverError)) throw err;
      this.deps.log.info({ zone: zone.name, code: err.code }, 'delegation check: resolver gave no answer');
      await this.repo.markChecked(zone.id, now);
      return 'pending';
    }
    await this.repo.markChecked(zone.id, now);
    const ours = new Set(this.deps.nameservers);
    if (ns.length > 0 && ns.every((n) => ours.has(n))) {
      if (await this.repo.setStatus(zone.id, ['pending'], 'active', now)) {
        await this.audit(zone.customer_id, SYSTEM, 'zone.activated', zone.id, { nameservers: ns });
        await this.source.announce(zone.name);
      }
      return 'active';
    }
    return 'pending';
  }

  async checkPendingZones(): Promise<void> {
    for (const z of await this.repo.zonesWithStatus('pending')) await this.checkDelegation(z.id);
  }

  // Records

  async listRecords(customerId: string, zoneName: string) {
    const zone = await this.zoneOf(customerId, zoneName);
    const records = (await this.repo.records(zone.id)).map(recordView);
    return { records, total: records.length };
  }

  async createRecord(
    customerId: string,
    actor: Actor,
    zoneName: string,
    input: Omit<Extract<RecordChange, { action: 'create' }>, 'action'>,
  ) {
    const zone = await this.zoneOf(customerId, zoneName);
    const plan = await this.writer.apply(
      zone,
      [{ action: 'create', ...input }],
      actor,
      bodyPath,
      'not_found',
    );
    return recordView(plan.outcomes[0]!.record!);
  }

  async updateRecord(
    customerId: string,
    actor: Actor,
    zoneName: string,
    id: string,
    input: Omit<Extract<RecordChange, { action: 'update' }>, 'action' | 'id'>,
  ) {
    const zone = await this.zoneOf(customerId, zoneName);
    const plan = await this.writer.apply(
      zone,
      [{ action: 'update', id, ...input }],
      actor,
      bodyPath,
      'not_found',
    );
    return recordView(plan.outcomes[0]!.record!);
  }

  async deleteRecord(customerId: string, actor: Actor, zoneName: string, id: string) {
    const zone = await this.zoneOf(customerId, zoneName);
    await this.writer.apply(zone, [{ action: 'delete', id }], actor, bodyPath, 'not_found');
    return { success: true, message: 'Record deleted.' };
  }

  async batch(customerId: string, actor: Actor, zoneName: string, changes: RecordChange[]) {
    const zone = await this.zoneOf(customerId, zoneName);
    const max = this.deps.limits.of('dns.batch_records');
    if (max !== null && changes.length > max) throw zoneErrors.batchTooLarge(max, changes.length);
    const plan = await this.writer.apply(
      zone,
      changes,
      actor,
      (i, f) => `/body/changes/${i}/${f}`,
      'invalid',
    );
    return {
      results: plan.outcomes.map((o) => ({
        action: o.action,
        id: o.id,
        record: o.record ? recordView(o.record) : null,
      })),
      total: plan.total,
    };
  }

  async exportZone(customerId: string, zoneName: string): Promise<string> {
    const zone = await this.zoneOf(customerId, zoneName);
    const soa = soaFor(zone.name, this.deps.nameservers, zone.serial);
    return writeZoneFile(zone.name, soa, this.deps.nameservers, soa.ttl, await this.repo.records(zone.id));
  }

  /** Imports a BIND zone file as one batch: every record or none. `replace` first removes all records. */
  async importZone(customerId: string, actor: Actor, zoneName: string, text: string, replace: boolean) {
    const zone = await this.zoneOf(customerId, zoneName);
    return importZoneFile(this.writer, zone, actor, text, replace, this.deps.limits.of('dns.batch_records'));
  }

  // DNSSEC

  async activateDnssec(customerId: string, actor: Actor, zoneName: string) {
    return this.keys.activate(await this.zoneOf(customerId, zoneName), actor);
  }

  async deactivateDnssec(customerId: string, actor: Actor, zoneName: string) {
    return this.keys.deactivate(await this.zoneOf(customerId, zoneName), actor);
  }

  // Statistics

  recordQueries(batch: Parameters<QueryStatsSink['recordQueries']>[0]): Promise<void> {
    return this.stats.recordQueries(batch);
  }

  purgeOldStatistics(): Promise<number> {
    return this.stats.purge(this.deps.clock.nowMs());
  }

  /** Lifts monthly query pauses that no longer apply (a new month, a larger plan). */
  reviewQueryPauses(): Promise<number> {
    return this.quota.review();
  }

  /** The customer's DNS usage against its plan: zones, and queries this month. */
  async usage(customerId: string) {
    const plan = (await this.deps.identity.getCustomer(customerId))?.plan ?? 'free';
    const zones = (await this.repo.zonesOf(customerId)).length;
    return {
      plan,
      zones: { used: zones, limit: this.deps.limits.of('dns.zones', plan) },
      records_per_zone: this.deps.limits.of('dns.records_per_zone', plan),
      queries: await this.quota.usage(customerId),
    };
  }

  async statistics(customerId: string, zoneName: string) {
    const zone = await this.zoneOf(customerId, zoneName);
    return this.stats.forZone(zone.id, this.deps.clock.nowMs());
  }

  // For dynamic DNS and domain verification

  /** The customer's zone holding `name` (the longest matching apex), with `name` relative to it. */
  findZoneForName(
    customerId: string,
    name: string,
  ): Promise<{ zoneId: string; apex: string; host: string; status: DnsZonesTable['status'] } | null> {
    return zoneForName(this.repo, customerId, name);
  }

  /**
   * Makes the records of `type` at `name` exactly `values` (an empty list deletes them), with one
   * TTL. Unchanged sets write nothing and keep the serial. Returns whether anything changed.
   */
  setRecordSet(
    zoneId: string,
    name: string,
    type: RecordType,
    values: { record: string; priority?: number | null }[],
    ttl: number,
  ): Promise<{ changed: boolean }> {
    return setRecordSet(this.repo, this.writer, zoneId, name, type, values, ttl);
  }

  async setAddressRecords(
    zoneId: string,
    name: string,
    type: 'A' | 'AAAA',
    addresses: string[],
    ttl: number,
  ) {
    return this.setRecordSet(
      zoneId,
      name,
      type,
      addresses.map((record) => ({ record })),
      ttl,
    );
  }

  deleteRecordSet(zoneId: string, name: string, type: RecordType) {
    return this.setRecordSet(zoneId, name, type, [], 3600);
  }

  // Internals

  private async zoneOf(customerId: string, zoneName: string): Promise<DnsZonesTable> {
    const zone = await this.repo.zoneByName(toAscii(zoneName));
    if (!zone || zone.customer_id !== customerId) throw zoneErrors.notFound();
    return zone;
  }

  private audit(
    customerId: string,
    actor: Actor,
    action: string,
    zoneId: string,
    details?: Record<string, unknown>,
  ) {
    return this.deps.audit.record({
      customerId,
      area: 'dns',
      action,
      resourceType: 'dns_zone',
      resourceId: zoneId,
      actor,
      details,
    });
  }
}

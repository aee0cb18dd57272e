import type { AuditTrail } from '../../kernel/audit/audit.js';
import type { IdentityService } from '../../kernel/auth/identity.js';
import type { Clock } from '../../kernel/clock.js';
import type { Limits } from '../../kernel/limits/quotas.js';
import type { Units } from '../../kernel/store/unit-of-work.js';
import type { DnsRecordsTable, DnsZonesTable } from './migrations.js';
import {
  type ChangePlan,
  type PathOf,
  planChanges,
  type RecordChange,
  withoutNoOps,
} from './record-changes.js';
import type { DnsRepo } from './repo.js';
import { nextSerial } from './soa.js';
import { type Actor, zoneErrors } from './views.js';
import type { StoreZoneSource } from './zone-source.js';

/** The one path by which record changes reach the store: planned, checked, written atomically, announced. */
export class RecordWriter {
  constructor(
    private readonly data: Units<DnsRepo>,
    private readonly source: StoreZoneSource,
    private readonly deps: { clock: Clock; identity: IdentityService; audit: AuditTrail; limits: Limits },
  ) {}

  /**
   * Plans the changes against the zone's records and writes them in one transaction that holds
   * the zone's row lock, raising the serial; then tells the servers.
   */
  async apply(
    zone: DnsZonesTable,
    changes: RecordChange[] | ((existing: DnsRecordsTable[]) => RecordChange[]),
    actor: Actor,
    pathOf: PathOf,
    missing: 'not_found' | 'invalid',
    opts: { unchangedIfSame?: boolean } = {},
  ): Promise<ChangePlan> {
    if (zone.status === 'disabled') throw zoneErrors.disabled();
    const plan = (await this.deps.identity.getCustomer(zone.customer_id))?.plan;
    const maxRecords = this.deps.limits.of('dns.records_per_zone', plan);
    const now = this.deps.clock.nowMs();
    const changePlan = await this.data.run([`dns:zone:${zone.id}`], async (tx) => {
      const locked = await tx.lockZone(zone.id, now);
      if (!locked) throw zoneErrors.notFound();
      if (locked.status === 'disabled') throw zoneErrors.disabled();
      const existing = await tx.records(zone.id);
      const list = typeof changes === 'function' ? changes(existing) : changes;
      let p = planChanges(zone.name, existing, list, {
        zoneId: zone.id,
        now,
        maxRecords,
        pathOf,
        missing,
      });
      if (opts.unchangedIfSame) p = withoutNoOps(p, existing);
      if (p.inserts.length + p.updates.length + p.deletes.length === 0) return p;
      await tx.deleteRecords(zone.id, p.deletes);
      for (const r of p.updates) await tx.updateRecord(r);
      await tx.insertRecords(p.inserts);
      await tx.setSerial(zone.id, nextSerial(locked.serial, now), now);
      return p;
    });
    if (changePlan.inserts.length + changePlan.updates.length + changePlan.deletes.length > 0) {
      await this.deps.audit.record({
        customerId: zone.customer_id,
        area: 'dns',
        action: 'records.changed',
        resourceType: 'dns_zone',
        resourceId: zone.id,
        actor,
        details: {
          created: changePlan.inserts.length,
          updated: changePlan.updates.length,
          deleted: changePlan.deletes.length,
        },
      });
      await this.source.announce(zone.name);
    }
    return changePlan;
  }
}

import type { AuditTrail } from '../../kernel/audit/audit.js';
import type { Clock } from '../../kernel/clock.js';
import type { SecretBox } from '../../kernel/secrets.js';
import { isUniqueViolation } from '../../kernel/store/dialect.js';
import type { Units } from '../../kernel/store/unit-of-work.js';
import {
  ALGORITHM,
  ALGORITHM_NAME,
  dnskeyRdata,
  dsRecord,
  generateZoneKey,
  KEY_FLAGS,
  keyTag,
} from './dnssec.js';
import type { DnsKeysTable, DnsZonesTable } from './migrations.js';
import type { DnsRepo } from './repo.js';
import { nextSerial } from './soa.js';
import type { Actor } from './views.js';
import type { StoreZoneSource } from './zone-source.js';

/**
 * One signing key per zone, made on first activation and kept until the zone is deleted (so
 * turning signing off and on again keeps the DS at the registrar valid). The private key is
 * sealed with the data key.
 */
export class ZoneKeys {
  private readonly repo: DnsRepo;
  constructor(
    private readonly data: Units<DnsRepo>,
    private readonly source: StoreZoneSource,
    private readonly deps: { clock: Clock; secrets: SecretBox; audit: AuditTrail },
  ) {
    this.repo = data.read;
  }

  async activate(zone: DnsZonesTable, actor: Actor) {
    const key = (await this.repo.key(zone.id)) ?? (await this.create(zone.id));
    if (await this.setSigning(zone, true)) {
      await this.audit(zone, actor, 'zone.dnssec_enabled', { key_tag: key.key_tag });
    }
    return {
      enabled: true,
      ds_records: [dsRecord(zone.name, Buffer.from(key.public_key, 'base64'))],
      algorithm: ALGORITHM_NAME,
    };
  }

  async deactivate(zone: DnsZonesTable, actor: Actor) {
    const changed = await this.setSigning(zone, false);
    if (changed) await this.audit(zone, actor, 'zone.dnssec_disabled');
    return {
      success: true,
      message: changed
        ? `DNSSEC signing is off for ${zone.name}; the signing key is kept, so turning it on again gives the same DS record.`
        : `DNSSEC was not enabled for ${zone.name}.`,
    };
  }

  private async create(zoneId: string): Promise<DnsKeysTable> {
    const k = generateZoneKey();
    const row: DnsKeysTable = {
      zone_id: zoneId,
      algorithm: ALGORITHM,
      flags: KEY_FLAGS,
      key_tag: keyTag(dnskeyRdata(k.publicKey)),
      public_key: k.publicKey.toString('base64'),
      private_key_sealed: this.deps.secrets.seal(k.privateKeyPkcs8.toString('base64')),
      created_at: this.deps.clock.nowMs(),
    };
    // Two activations at once: the first key stays, and both answer with it.
    await this.repo.insertKey(row).catch((err) => {
      if (!isUniqueViolation(err)) throw err;
    });
    return (await this.repo.key(zoneId))!;
  }

  /** Flips signing under the zone's lock, raising the serial from the current one; false if it was already so. */
  private async setSigning(zone: DnsZonesTable, enabled: boolean): Promise<boolean> {
    const now = this.deps.clock.nowMs();
    const changed = await this.data.run([`dns:zone:${zone.id}`], async (tx) => {
      const locked = await tx.lockZone(zone.id, now);
      if (!locked || (locked.dnssec_enabled === 1) === enabled) return false;
      await tx.setDnssec(zone.id, enabled, nextSerial(locked.serial, now), now);
      return true;
    });
    if (changed) await this.source.announce(zone.name);
    return changed;
  }

  private audit(zone: DnsZonesTable, actor: Actor, action: string, details?: Record<string, unknown>) {
    return this.deps.audit.record({
      customerId: zone.customer_id,
      area: 'dns',
      action,
      resourceType: 'dns_zone',
      resourceId: zone.id,
      actor,
      details,
    });
  }
}

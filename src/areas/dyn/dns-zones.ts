import type { IdentityService } from '../../kernel/auth/identity.js';
import type { DnsService } from '../dns/service.js';

/** What dynamic DNS needs from Fjord's DNS (the DNS area's service provides it). */
export interface DynZones {
  /** The platform's dynamic zone, created on first use and owned by the platform. */
  ensurePlatformZone(apex: string): Promise<{ id: string }>;
  /** The customer's own Fjord zone containing `name` (apex included), if any. */
  customerZoneContaining(
    customerId: string,
    name: string,
  ): Promise<{ id: string; apex: string; status: string } | null>;
  /** Types of the records the customer keeps at `name` in its zone `apex`. */
  recordTypesAt(customerId: string, apex: string, name: string): Promise<string[]>;
  /** Replaces the A or AAAA records at `name` (an empty list removes them). */
  setAddresses(
    zoneId: string,
    name: string,
    type: 'A' | 'AAAA',
    addresses: string[],
    ttl: number,
  ): Promise<void>;
}

/**
 * The platform's dynamic zone lives in Fjord's DNS like any zone, owned by a platform account
 * (created on first use, so a fresh or reset store needs no set-up step).
 */
export const PLATFORM_ACCOUNT_EMAIL = 'dyn-platform@fjord.invalid';

export function dnsZonesFor(dns: DnsService, identity: IdentityService): DynZones {
  const system = { kind: 'system' as const, id: null };

  async function platformAccount(): Promise<string> {
    const found = await identity.findCustomerByEmail(PLATFORM_ACCOUNT_EMAIL);
    if (found) return found.id;
    try {
      return (
        await identity.createCustomer({
          email: PLATFORM_ACCOUNT_EMAIL,
          customerType: 'business',
          company: 'Fjord platform (dynamic DNS zone)',
          plan: 'enterprise',
        })
      ).id;
    } catch (err) {
      // Another process created it first.
      const again = await identity.findCustomerByEmail(PLATFORM_ACCOUNT_EMAIL);
      if (again) return again.id;
      throw err;
    }
  }

  return {
    async ensurePlatformZone(apex) {
      const owner = await platformAccount();
      const existing = await dns.findZoneForName(owner, apex);
      if (existing && existing.apex === apex) return { id: existing.zoneId };
      try {
        return { id: (await dns.createZone(owner, system, apex)).id };
      } catch (err) {
        const again = await dns.findZoneForName(owner, apex);
        if (again && again.apex === apex) return { id: again.zoneId };
        throw err;
      }
    },
    async customerZoneContaining(customerId, name) {
      const zone = await dns.findZoneForName(customerId, name);
      return zone ? { id: zone.zoneId, apex: zone.apex, status: zone.status } : null;
    },
    async recordTypesAt(customerId, apex, name) {
      const zone = await dns.findZoneForName(customerId, name);
      if (!zone || zone.apex !== apex) return [];
      const { records } = await dns.listRecords(customerId, apex);
      return records.filter((r) => r.name === zone.host).map((r) => r.type);
    },
    async setAddresses(zoneId, name, type, addresses, ttl) {
      await dns.setAddressRecords(zoneId, name, type, addresses, ttl);
    },
  };
}

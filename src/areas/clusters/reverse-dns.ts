import type { Logger } from 'pino';
import type { IdentityService } from '../../kernel/auth/identity.js';
import type { DnsService } from '../dns/service.js';

/** Serves the PTR records of floating addresses in Fjord's own DNS. */
export interface ReverseZones {
  /** Makes `address`'s PTR record `name` (null: none) in its reverse zone. */
  setPtr(address: string, name: string | null): Promise<void>;
}

/**
 * The reverse zones of the floating pools (`100.51.198.in-addr.arpa` for 198.51.100.0/24) live in
 * Fjord's DNS like any zone, owned by a platform account made on first use, as the dynamic DNS
 * zone is. If an account already holds a reverse zone's name, Fjord leaves that zone alone (the
 * PTR is still set at the provider) and logs why.
 */
export const REVERSE_ACCOUNT_EMAIL = 'clusters-platform@fjord.invalid';
const PTR_TTL = 3600;

export function reverseZones(
  dns: DnsService | undefined,
  identity: IdentityService,
  log: Logger,
): ReverseZones {
  const system = { kind: 'system' as const, id: null };

  async function platformAccount(): Promise<string> {
    const found = await identity.findCustomerByEmail(REVERSE_ACCOUNT_EMAIL);
    if (found) return found.id;
    try {
      return (
        await identity.createCustomer({
          email: REVERSE_ACCOUNT_EMAIL,
          customerType: 'business',
          company: 'Fjord platform (cluster reverse DNS)',
          plan: 'enterprise',
        })
      ).id;
    } catch (err) {
      const again = await identity.findCustomerByEmail(REVERSE_ACCOUNT_EMAIL);
      if (again) return again.id;
      throw err;
    }
  }

  async function zoneOf(apex: string): Promise<string | null> {
    const dnsService = dns!;
    const owner = await platformAccount();
    const mine = await dnsService.findZoneForName(owner, apex);
    if (mine && mine.apex === apex) return mine.zoneId;
    try {
      return (await dnsService.createZone(owner, system, apex)).id;
    } catch (err) {
      const again = await dnsService.findZoneForName(owner, apex);
      if (again && again.apex === apex) return again.zoneId;
      log.warn({ err, zone: apex }, 'reverse zone held by another account: PTR records not served by Fjord');
      return null;
    }
  }

  return {
    async setPtr(address, name) {
      if (!dns) return;
      const [a, b, c, d] = address.split('.') as [string, string, string, string];
      const zoneId = await zoneOf(`${c}.${b}.${a}.in-addr.arpa`);
      if (!zoneId) return;
      await dns.setRecordSet(zoneId, d, 'PTR', name === null ? [] : [{ record: `${name}.` }], PTR_TTL);
    },
  };
}

import { createResolver } from '../../kernel/net/resolver.js';
import type { DnsService } from '../dns/service.js';
import { defineArea } from '../wiring.js';
import { domainVerificationMigrations } from './migrations.js';
import { domainVerificationRoutes } from './routes.js';
import { DomainVerificationService, type InternalDnsAuthority } from './service.js';

export const DAILY_JOB = 'domain-verification.daily';

export const domainVerificationArea = defineArea({
  name: 'domain-verification',
  optional: ['dns'],
  migrations: domainVerificationMigrations,
  async setup(kernel, { dns }) {
    const service = new DomainVerificationService(
      kernel.store,
      kernel.clock,
      createResolver(kernel.config.resolver),
      kernel.config.domainVerification,
      dns ? internalAuthority(dns) : undefined,
    );
    kernel.jobs.register(DAILY_JOB, { run: async () => void (await service.dailyMaintenance()) });
    await kernel.jobs.schedule(DAILY_JOB, DAILY_JOB, 86_400);
    return { service, routes: domainVerificationRoutes(service) };
  },
});

/** A domain in one of the customer's *active* Fjord zones is verified without a record. */
function internalAuthority(dns: DnsService): InternalDnsAuthority {
  return {
    async activeZoneCovering(customerId, domain) {
      const zone = await dns.findZoneForName(customerId, domain);
      if (!zone) return null;
      const view = await dns.getZone(customerId, zone.apex);
      return view.status === 'active' ? { id: zone.zoneId, apex: zone.apex } : null;
    },
  };
}

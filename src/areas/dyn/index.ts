import type { AreaModule } from '../../kernel/kernel.js';
import type { DnsService } from '../dns/service.js';
import { dnsZonesFor } from './dns-zones.js';
import { dynMigrations } from './migrations.js';
import { NicUpdateHandler } from './nic-update.js';
import { dynRoutes } from './routes.js';
import { DynService } from './service.js';

export const dynArea: AreaModule = {
  name: 'dyn',
  migrations: dynMigrations,
  setup(kernel, services) {
    const zones = dnsZonesFor(services['dns'] as DnsService | undefined, kernel.identity);
    const dyn = new DynService(
      kernel.store,
      kernel.clock,
      kernel.identity,
      { ...kernel.config.dyn, updateUrl: () => `${kernel.baseUrl()}/nic/update` },
      zones,
    );
    const nic = new NicUpdateHandler(dyn, kernel.clock, kernel.limiter, kernel.log);
    return { service: dyn, routes: dynRoutes(dyn, nic) };
  },
};

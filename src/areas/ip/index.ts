import { createResolver } from '../../kernel/net/resolver.js';
import { defineArea } from '../wiring.js';
import { AsnTable } from './data/asn.js';
import { GeoData, geoFiles } from './data/geo.js';
import { OperatorLists } from './data/lists.js';
import { ipMigrations } from './migrations.js';
import { ipRoutes } from './routes.js';
import { IpService } from './service.js';

export { IpService } from './service.js';

/** IP intelligence: offline geolocation and network data, reports and threat scores, tiers. */
export const ipArea = defineArea({
  name: 'ip',
  // Reporters prove their domain through domain verification (and so through Fjord's own DNS).
  needs: ['domain-verification'],
  migrations: ipMigrations,
  async setup(kernel, { 'domain-verification': domains }) {
    const dataDir = kernel.config.ipDataDir;
    const service = new IpService(
      kernel.store,
      kernel.clock,
      kernel.limits,
      kernel.limiter,
      new GeoData(dataDir),
      new AsnTable(dataDir),
      new OperatorLists(dataDir),
      // Reverse names are looked up once and cached; an address with none must not stall a lookup.
      createResolver(kernel.config.resolver, { timeoutMs: 1000, tries: 1 }),
      domains,
      async (id) => (await kernel.identity.getCustomer(id)) !== undefined,
    );
    kernel.registry.addBackend({
      area: 'ip',
      name: 'geo data',
      driver: 'offline files',
      simulated: false,
      detail: `${geoFiles(dataDir).source}; loaded on first lookup`,
    });
    return { service, routes: ipRoutes(service) };
  },
});

import { defineArea } from '../wiring.js';
import { dnsZonesFor } from './dns-zones.js';
import { dynMigrations } from './migrations.js';
import { NicUpdateHandler } from './nic-update.js';
import { dynRoutes } from './routes.js';
import { DynService } from './service.js';

export const dynArea = defineArea({
  name: 'dyn',
  needs: ['dns'],
  migrations: dynMigrations,
  setup(kernel, { dns }) {
    const zones = dnsZonesFor(dns, kernel.identity);
    const dyn = new DynService(
      kernel.store,
      kernel.clock,
      kernel.identity,
      { ...kernel.config.dyn, updateUrl: () => `${kernel.baseUrl()}/nic/update` },
      zones,
    );
    const nic = new NicUpdateHandler(dyn, kernel.limiter, kernel.log);
    kernel.registry.addCredentialKind({
      name: 'dyn-credential',
      area: 'dyn',
      doc: 'HTTP Basic on `/nic/update` (router tokens and updater credentials)',
    });
    kernel.registry.addServiceProvider(async (customerId) =>
      (await dyn.listHostnames(customerId)).map((h) => ({
        id: h.id,
        service_type: 'dyndns',
        name: h.hostname,
        status: h.offline ? 'offline' : h.active_source_id ? 'active' : 'no_source',
        region: null,
        created_at: h.created_at,
        metadata: { ipv4: h.ipv4, ipv6: h.ipv6, zone_kind: h.zone_kind, last_update_at: h.last_update_at },
        api: {
          kind: 'rest',
          openapi: `${kernel.baseUrl()}/openapi.json`,
          docs: `${kernel.baseUrl()}/docs`,
          base_url: `${kernel.baseUrl()}/v1/dyn`,
        },
      })),
    );
    // The platform zone is created on the first claim; the DNS area keeps its name (and parents
    // and children) from customers meanwhile (platformZones).
    return { service: dyn, routes: dynRoutes(dyn, nic) };
  },
});

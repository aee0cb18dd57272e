import { defineArea, plugsFor } from '../wiring.js';
import { SimulatedVpsDriver } from './drivers/simulated.js';
import { vpsMigrations } from './migrations.js';
import { vpsRoutes } from './routes.js';
import { settle, VpsService } from './service.js';

export { VpsService } from './service.js';

/** Virtual servers: the state machine on the kernel clock, snapshots and quotas, over a driver. */
export const vpsArea = defineArea({
  name: 'vps',
  needs: ['account', 'regions'],
  migrations: vpsMigrations,
  setup(kernel, { account, regions }) {
    const driver = new SimulatedVpsDriver();
    const vps = new VpsService(
      kernel.store,
      kernel.clock,
      kernel.identity,
      kernel.limits,
      regions,
      account,
      driver,
    );
    kernel.registry.addBackend({
      area: 'vps',
      name: 'servers',
      driver: driver.name,
      simulated: driver.simulated,
      detail:
        'no server really runs: states follow the published timings on the clock, metrics are simulated',
    });
    // Each server is an entry of the account's services, marked when the driver only simulates it.
    kernel.registry.addServiceProvider(async (customerId) => {
      const servers = await vps.repo.servers(customerId);
      const now = kernel.clock.nowMs();
      return servers.map((row) => {
        const s = settle(row, now);
        return {
          id: s.id,
          service_type: 'vps',
          name: s.hostname,
          status: s.status,
          region: s.region,
          created_at: new Date(s.created_at).toISOString(),
          metadata: { plan_code: s.plan_code, driver: driver.name, simulated: driver.simulated },
          api: {
            kind: 'vps',
            openapi: `${kernel.baseUrl()}/openapi.json`,
            docs: `${kernel.baseUrl()}/docs`,
            base_url: `${kernel.baseUrl()}/v1/vps/${s.id}`,
          },
        };
      });
    });
    return {
      service: vps,
      routes: vpsRoutes(vps),
      plugs: plugsFor({ 'account.ssh-key-usage': (customerId, fps) => vps.keyUsage(customerId, fps) }),
    };
  },
});

import { defineArea } from '../wiring.js';
import { SimulatedAppsDriver } from './drivers/simulated.js';
import { appsMigrations } from './migrations.js';
import { appsRoutes } from './routes.js';
import { AppsService } from './service.js';

export { AppsService } from './service.js';

/** Container apps: apps, immutable revisions and instances on the kernel clock, over a driver. */
export const appsArea = defineArea({
  name: 'apps',
  needs: ['regions'],
  migrations: appsMigrations,
  setup(kernel, { regions }) {
    const driver = new SimulatedAppsDriver();
    const apps = new AppsService(
      kernel.store,
      kernel.clock,
      kernel.identity,
      kernel.limits,
      kernel.secrets,
      regions,
      driver,
    );
    kernel.registry.addBackend({
      area: 'apps',
      name: 'containers',
      driver: driver.name,
      simulated: driver.simulated,
      detail: 'no container runs: deploys, health checks and scale to zero follow the clock',
    });
    kernel.registry.addServiceProvider(async (customerId) =>
      (await apps.serviceEntries(customerId)).map((a) => ({
        id: a.id,
        service_type: 'container-apps',
        name: a.name,
        status: a.status,
        region: a.region,
        created_at: a.created_at,
        metadata: { url: a.url, driver: driver.name, simulated: driver.simulated },
        api: {
          kind: 'container-apps',
          openapi: `${kernel.baseUrl()}/openapi.json`,
          docs: `${kernel.baseUrl()}/docs`,
          base_url: `${kernel.baseUrl()}/v1/apps/${a.id}`,
        },
      })),
    );
    return { service: apps, routes: appsRoutes(apps) };
  },
});

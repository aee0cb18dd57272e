import { defineArea } from '../wiring.js';
import { SimulatedClusterDriver } from './drivers/driver.js';
import { clusterMigrations } from './migrations.js';
import { clusterRoutes } from './routes.js';
import { ClusterService } from './service.js';

export { ClusterService } from './service.js';

/** Managed Kubernetes clusters over a driver; only the simulated driver exists on these hosts. */
export const clustersArea = defineArea({
  name: 'clusters',
  // SSH keys on a cluster must be the account's own.
  needs: ['account'],
  migrations: clusterMigrations,
  async setup(kernel, { account }) {
    const driver = new SimulatedClusterDriver();
    const k8s = new ClusterService(
      kernel.store,
      kernel.clock,
      kernel.identity,
      kernel.limits,
      account,
      driver,
    );
    kernel.registry.addBackend({
      area: 'clusters',
      name: 'kubernetes',
      driver: driver.name,
      simulated: driver.simulated,
      detail: 'no Kubernetes control plane runs here: the lifecycle is modelled on the clock',
    });
    // One entry per cluster, saying which driver runs it: today always the simulated one.
    kernel.registry.addServiceProvider(async (customerId) =>
      (await k8s.list(customerId)).clusters.map((c) => ({
        id: c.id,
        service_type: 'kubernetes',
        name: c.name,
        status: c.status,
        region: c.region,
        created_at: c.created_at,
        metadata: {
          driver: driver.name,
          simulated: driver.simulated,
          version: c.version,
          plan_code: c.plan_code,
        },
        api: {
          kind: 'rest',
          openapi: `${kernel.baseUrl()}/openapi.json`,
          docs: `${kernel.baseUrl()}/docs`,
          base_url: `${kernel.baseUrl()}/v1/kubernetes/clusters/${c.id}`,
        },
      })),
    );
    return { service: k8s, routes: clusterRoutes(k8s) };
  },
});

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
    return { service: k8s, routes: clusterRoutes(k8s) };
  },
});

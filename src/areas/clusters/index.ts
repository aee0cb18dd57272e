import { createResolver } from '../../kernel/net/resolver.js';
import { defineArea } from '../wiring.js';
import { BackupService } from './backups.js';
import { SimulatedClusterDriver } from './drivers/driver.js';
import { ClusterFaults, clusterFaultRoutes } from './faults.js';
import { forwardDns } from './forward-dns.js';
import { ClusterIpService } from './ips.js';
import { KubeconfigService } from './kubeconfig.js';
import { clusterMigrations } from './migrations.js';
import { reverseZones } from './reverse-dns.js';
import { clusterRoutes } from './routes.js';
import { clusterExtraRoutes } from './routes-extras.js';
import { ClusterService } from './service.js';

export { ClusterService } from './service.js';

/** Takes the scheduled backups that came due and lets expired ones go (docs/clusters.md). */
const BACKUP_JOB = 'clusters.backups';
export const BACKUP_JOB_SECONDS = 60;

/** Managed Kubernetes clusters over a driver; only the simulated driver exists on these hosts. */
export const clustersArea = defineArea({
  name: 'clusters',
  // SSH keys on a cluster must be the account's own.
  needs: ['account'],
  // A PTR name in one of Fjord's own zones is confirmed from what Fjord's DNS serves.
  optional: ['dns'],
  migrations: clusterMigrations,
  async setup(kernel, { account, dns }) {
    const driver = new SimulatedClusterDriver();
    const k8s = new ClusterService(
      kernel.store,
      kernel.clock,
      kernel.identity,
      kernel.limits,
      account,
      driver,
    );
    const kubeconfig = new KubeconfigService(kernel.store, kernel.clock, kernel.secrets);
    const ips = new ClusterIpService(
      kernel.store,
      kernel.clock,
      kernel.limits,
      driver,
      forwardDns(dns, createResolver(kernel.config.resolver)),
      reverseZones(dns, kernel.identity, kernel.log),
      kernel.log,
    );
    const backups = new BackupService(kernel.store, kernel.clock, driver, kernel.log);
    kernel.jobs.register(BACKUP_JOB, { run: async () => void (await backups.runDue()) });
    const schedule = () => kernel.jobs.schedule(BACKUP_JOB, BACKUP_JOB, BACKUP_JOB_SECONDS);
    await schedule();
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
    return {
      service: k8s,
      // The area's error table names `invalid_request` for a malformed request: schema refusals too.
      routes: [
        ...clusterRoutes(k8s),
        ...clusterExtraRoutes({ kubeconfig, ips, backups }),
        ...clusterFaultRoutes(new ClusterFaults(kernel.store, kernel.clock)),
      ].map((route) => ({ ...route, validationCode: 'invalid_request' })),
      onReset: schedule,
    };
  },
});

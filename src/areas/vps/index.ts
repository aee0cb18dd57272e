import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { defineArea, plugsFor } from '../wiring.js';
import { BackupService } from './backups/backup-service.js';
import { BackupPolicyService } from './backups/policy.js';
import { backupRoutes } from './backups/routes.js';
import { SimulatedVpsDriver } from './drivers/simulated.js';
import { vpsMigrations } from './migrations.js';
import { vpsRoutes } from './routes.js';
import { settle, VpsService } from './service.js';

export { VpsService } from './service.js';

const BACKUP_TICK = 'vps.backups.tick';
const BACKUP_TICK_SECONDS = 300;

/**
 * Virtual servers: the state machine on the kernel clock, snapshots, backups and quotas, over a
 * driver. Backup archives live in the storage area's internal `vps-backups` bucket.
 */
export const vpsArea = defineArea({
  name: 'vps',
  needs: ['account', 'regions', 'storage'],
  migrations: vpsMigrations,
  async setup(kernel, { account, regions, storage }) {
    const simulatedDisks = join(kernel.config.dataDir, 'vps', 'simulated');
    const driver = new SimulatedVpsDriver(simulatedDisks);
    const backupFiles = storage.internalBucket('vps-backups');
    const vps = new VpsService(
      kernel.store,
      kernel.clock,
      kernel.identity,
      kernel.limits,
      regions,
      account,
      driver,
      backupFiles,
      kernel.log,
    );
    const backups = new BackupService(
      kernel.store,
      kernel.clock,
      kernel.limits,
      regions,
      driver,
      backupFiles,
      kernel.secrets,
      () => kernel.baseUrl(),
      kernel.log,
    );
    const policies = new BackupPolicyService(kernel.store, backups, kernel.clock, kernel.log);
    kernel.registry.addBackend({
      area: 'vps',
      name: 'backups',
      driver: 'object-storage',
      simulated: false,
      detail: backupFiles.location,
    });
    kernel.jobs.register(BACKUP_TICK, {
      run: async () => {
        await backups.failAbandoned();
        await policies.runDue();
      },
    });
    await kernel.jobs.schedule(BACKUP_TICK, BACKUP_TICK, BACKUP_TICK_SECONDS);
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
      routes: [...vpsRoutes(vps), ...backupRoutes(backups, policies)],
      plugs: plugsFor({ 'account.ssh-key-usage': (customerId, fps) => vps.keyUsage(customerId, fps) }),
      onReset: async () => {
        await rm(simulatedDisks, { recursive: true, force: true });
        await kernel.jobs.schedule(BACKUP_TICK, BACKUP_TICK, BACKUP_TICK_SECONDS);
      },
    };
  },
});

import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { defineArea, plugsFor } from '../wiring.js';
import { BackupService } from './backups/backup-service.js';
import { BackupDownloads } from './backups/downloads.js';
import { BackupPolicyService } from './backups/policy.js';
import { backupRoutes } from './backups/routes.js';
import type { KnownServer, VpsDriver } from './drivers/driver.js';
import { TemplateCache } from './drivers/namespace/template.js';
import { NamespaceVpsDriver } from './drivers/namespace.js';
import { SimulatedVpsDriver } from './drivers/simulated.js';
import { vpsMigrations } from './migrations.js';
import { vpsRoutes } from './routes.js';
import { settle } from './server-moves.js';
import { VpsService } from './service.js';

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
    const settings = kernel.config.vps;
    let driver: VpsDriver;
    if (settings.driver === 'namespace') {
      const base = join(kernel.config.dataDir, 'vps');
      await mkdir(base, { recursive: true });
      await NamespaceVpsDriver.checkHost(base);
      const templates = new TemplateCache(
        settings.templateDir ?? join(base, 'templates'),
        undefined,
        kernel.log,
      );
      driver = new NamespaceVpsDriver(join(base, 'namespace'), templates, kernel.log, settings.onStop);
    } else driver = new SimulatedVpsDriver(simulatedDisks);
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
      kernel.log,
    );
    const downloads = new BackupDownloads(kernel.store, kernel.clock, backupFiles, kernel.secrets, () =>
      kernel.baseUrl(),
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
      detail: driver.simulated
        ? 'no server really runs: states follow the published timings on the clock, metrics are simulated'
        : 'Debian servers in Linux namespaces over overlayfs, with sshd; SSH on 127.213.x.y port 22',
    });
    let serving = false;
    /** What the database says of every server, for the driver to adopt, boot or clean up. */
    const known = async (): Promise<KnownServer[]> => {
      const now = kernel.clock.nowMs();
      const out: KnownServer[] = [];
      for (const row of await vps.repo.allServers()) {
        const s = settle(row, now);
        out.push({
          spec: await vps.repo.specOf(s),
          up: s.status === 'running' || s.status === 'starting' || s.status === 'provisioning',
        });
      }
      return out;
    };
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
      routes: [...vpsRoutes(vps), ...backupRoutes(backups, downloads, policies)],
      servers: driver.recover
        ? [
            {
              role: 'api' as const,
              name: 'vps-servers',
              start: async () => {
                serving = true;
                await driver.recover?.(await known());
              },
              // Only the process that serves them stops them (not a `fjord admin …` command).
              stop: async () => {
                if (serving) await driver.shutdown?.();
              },
            },
          ]
        : [],
      plugs: plugsFor({ 'account.ssh-key-usage': (customerId, fps) => vps.keyUsage(customerId, fps) }),
      onReset: async () => {
        await rm(simulatedDisks, { recursive: true, force: true });
        await driver.destroyAll?.();
        await kernel.jobs.schedule(BACKUP_TICK, BACKUP_TICK, BACKUP_TICK_SECONDS);
      },
    };
  },
});

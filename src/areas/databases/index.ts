import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { kernelErrors } from '../../kernel/errors.js';
import { buildRateLimitTable } from '../../kernel/limits/table.js';
import { unitsOf } from '../../kernel/store/unit-of-work.js';
import { defineArea } from '../wiring.js';
import { DB_TYPES } from './drivers/driver.js';
import { DatabaseEngines } from './engines/engines.js';
import { FirewallService } from './firewall-service.js';
import { databasesMigrations } from './migrations.js';
import { DatabasesRepo } from './repo.js';
import { DatabaseReports } from './reports.js';
import { coreRoutes } from './routes/core.js';
import { extraRoutes } from './routes/extras.js';
import { firewallRoutes } from './routes/firewall.js';
import { DatabaseQuotas } from './rules.js';
import { DatabasesService } from './service.js';
import { DatabaseSizeQuota, SIZE_REVIEW_JOB, SIZE_REVIEW_SECONDS } from './size-quota.js';
import { BackupPolicyService } from './snapshots/backup-policy.js';
import { SnapshotService } from './snapshots/snapshot-service.js';
import { fsSnapshotStore, ObjectSnapshotStore } from './snapshots/snapshot-store.js';

const BACKUP_TICK = 'databases.backups.tick';

export const databasesArea = defineArea({
  name: 'databases',
  // Snapshots live in object storage.
  needs: ['storage'],
  migrations: databasesMigrations,
  async setup(kernel, { storage }) {
    const { config } = kernel;
    const engines = new DatabaseEngines(
      {
        mode: config.databases.engines,
        postgresAdminUrl: config.databases.postgresAdminUrl,
        mariadbAdminUrl: config.databases.mariadbAdminUrl,
        postgresHbaFile: config.databases.postgresHbaFile,
        encryptedEngines: config.databases.encryptedEngines,
        dataDir: config.dataDir,
        host: config.host,
      },
      kernel.log,
    );
    for (const t of DB_TYPES) {
      const plan = engines.plans[t];
      kernel.registry.addBackend({
        area: 'databases',
        name: t,
        driver: plan.kind,
        simulated: plan.kind === 'simulated',
        detail: plan.detail,
      });
    }
    const data = unitsOf(kernel.store, DatabasesRepo.over);
    const repo = data.read;
    const service = new DatabasesService(
      data,
      engines,
      kernel.identity,
      kernel.audit,
      kernel.clock,
      config.databases.internalCustomers,
      new DatabaseQuotas(kernel.limits),
      (key, work) => kernel.store.exclusive(key, work),
    );
    const planOf = async (customerId: string) =>
      (await kernel.identity.getCustomer(customerId))?.plan ?? 'free';
    const snapshotBucket = storage.internalBucket('database-snapshots');
    kernel.registry.addBackend({
      area: 'databases',
      name: 'snapshots',
      driver: 'object-storage',
      simulated: false,
      detail: snapshotBucket.location,
    });
    const snapshots = new SnapshotService(
      data,
      service,
      { objects: new ObjectSnapshotStore(snapshotBucket), fs: fsSnapshotStore(config.dataDir) },
      kernel.secrets,
      kernel.clock,
      kernel.log,
      planOf,
    );
    service.beforeDelete = (row) => snapshots.dropAll(row.id);
    const reports = new DatabaseReports(service, repo, kernel.identity, kernel.audit, kernel.clock);
    const policies = new BackupPolicyService(repo, service, snapshots, kernel.clock, kernel.log, planOf);

    kernel.jobs.register(BACKUP_TICK, {
      run: async () => {
        await snapshots.failAbandoned();
        await policies.runDueBackups();
      },
    });
    await kernel.jobs.schedule(BACKUP_TICK, BACKUP_TICK, 300);
    const sizeQuota = new DatabaseSizeQuota(
      repo,
      service,
      new DatabaseQuotas(kernel.limits),
      planOf,
      kernel.clock,
      kernel.log,
    );
    kernel.jobs.register(SIZE_REVIEW_JOB, { run: async () => void (await sizeQuota.review()) });
    await kernel.jobs.schedule(SIZE_REVIEW_JOB, SIZE_REVIEW_JOB, SIZE_REVIEW_SECONDS);

    kernel.registry.addServiceProvider(async (customerId) => {
      const rows = await service.list(customerId);
      return rows.map((r) => ({
        id: r.id,
        service_type: 'database',
        name: r.technical_name,
        status: 'running',
        region: null,
        created_at: new Date(r.created_at).toISOString(),
        metadata: { db_type: r.db_type, tier: r.tier, friendly_name: r.friendly_name },
        api: {
          kind: 'database',
          openapi: `${kernel.baseUrl()}/openapi.json`,
          docs: `${kernel.baseUrl()}/docs`,
          base_url: `${kernel.baseUrl()}/v1/databases/${r.db_type}/${r.technical_name}`,
        },
      }));
    });

    return {
      service,
      routes: [
        ...coreRoutes(service, reports),
        ...firewallRoutes(new FirewallService(repo, service, kernel.clock)),
        ...extraRoutes(
          service,
          reports,
          snapshots,
          policies,
          async (principal) => {
            const outcome = await kernel.limiter.consume(['database.create'], principal.credential.id);
            if (!outcome.allowed) throw kernelErrors.rateLimited(outcome);
          },
          buildRateLimitTable(config.rateLimitOverrides),
        ),
      ],
      servers: [
        {
          // The embedded engines run with the api role (started in the background: the API
          // answers at once, and a request that needs an engine waits for it) and stop with Fjord.
          role: 'api',
          name: 'database engines',
          // A server a killed Fjord left running is replaced with the role, before anything is
          // reported up (a client reaching the old server in between would be cut off moments
          // later). Otherwise the engines start once the process is up: initdb and
          // mariadb-install-db take seconds of CPU and would slow the start itself.
          start: async () => {
            if (engines.mayHaveOrphans()) void engines.startAll();
          },
          afterStart: () => {
            void engines.startAll();
          },
          stop: () => engines.stop(),
        },
      ],
      onReset: async () => {
        await service
          .afterReset()
          .catch((err) => kernel.log.warn({ err }, 'emptying the database servers failed'));
        await rm(join(config.dataDir, 'databases', 'snapshots'), { recursive: true, force: true });
        await kernel.jobs.schedule(BACKUP_TICK, BACKUP_TICK, 300);
        await kernel.jobs.schedule(SIZE_REVIEW_JOB, SIZE_REVIEW_JOB, SIZE_REVIEW_SECONDS);
      },
    };
  },
});

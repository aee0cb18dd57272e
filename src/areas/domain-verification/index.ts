import type { AreaModule } from '../../kernel/kernel.js';
import { NodeDnsLookup } from './lookup.js';
import { domainVerificationMigrations } from './migrations.js';
import { domainVerificationRoutes } from './routes.js';
import { DomainVerificationService } from './service.js';

export const DAILY_JOB = 'domain-verification.daily';

export const domainVerificationArea: AreaModule = {
  name: 'domain-verification',
  migrations: domainVerificationMigrations,
  async setup(kernel) {
    const service = new DomainVerificationService(
      kernel.store,
      kernel.clock,
      new NodeDnsLookup(kernel.config.resolver),
      kernel.config.domainVerification,
    );
    kernel.jobs.register(DAILY_JOB, { run: async () => void (await service.dailyMaintenance()) });
    await kernel.jobs.schedule(DAILY_JOB, DAILY_JOB, 86_400);
    return { service, routes: domainVerificationRoutes(service) };
  },
};

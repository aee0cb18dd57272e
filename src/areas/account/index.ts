import type { AreaModule } from '../../kernel/kernel.js';
import { accountMigrations } from './migrations.js';
import { accountRoutes } from './routes.js';
import { AccountService } from './service.js';

export const accountArea: AreaModule = {
  name: 'account',
  migrations: accountMigrations,
  setup(kernel) {
    const service = new AccountService(kernel.store, kernel.identity, kernel.audit, kernel.clock);
    return { service, routes: accountRoutes(service, kernel.registry) };
  },
};

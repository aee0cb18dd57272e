import { defineArea } from '../wiring.js';
import { accountMigrations } from './migrations.js';
import { accountRoutes } from './routes.js';
import { AccountService } from './service.js';

export const accountArea = defineArea({
  name: 'account',
  migrations: accountMigrations,
  setup(kernel, _deps, plugs) {
    const service = new AccountService(kernel.store, kernel.identity, kernel.audit, kernel.clock, () =>
      plugs.all('account.ssh-key-usage'),
    );
    return { service, routes: accountRoutes(service, kernel.registry) };
  },
});

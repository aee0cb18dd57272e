import type { AreaModule } from '../../kernel/kernel.js';
import { webhookRoutes } from './routes.js';

export const webhooksArea: AreaModule = {
  name: 'webhooks',
  setup(kernel) {
    return { routes: webhookRoutes(kernel.webhooks) };
  },
};

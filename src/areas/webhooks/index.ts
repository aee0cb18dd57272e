import { defineArea } from '../wiring.js';
import { webhookRoutes } from './routes.js';

export const webhooksArea = defineArea({
  name: 'webhooks',
  setup(kernel) {
    return { routes: webhookRoutes(kernel.webhooks) };
  },
});

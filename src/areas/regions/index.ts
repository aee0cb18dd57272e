import type { AreaModule } from '../../kernel/kernel.js';
import { regionRoutes } from './routes.js';
import { RegionsService } from './service.js';

export const regionsArea: AreaModule = {
  name: 'regions',
  setup() {
    const service = new RegionsService();
    return { service, routes: regionRoutes(service) };
  },
};

import { defineArea } from '../wiring.js';
import { regionRoutes } from './routes.js';
import { RegionsService } from './service.js';

export const regionsArea = defineArea({
  name: 'regions',
  setup() {
    const service = new RegionsService();
    return { service, routes: regionRoutes(service) };
  },
});

import type { AreaModule } from '../kernel/kernel.js';
import { accountArea } from './account/index.js';
import { databasesArea } from './databases/index.js';
import { regionsArea } from './regions/index.js';
import { webhooksArea } from './webhooks/index.js';

/**
 * The one list of areas, in set-up order: an area may use the services of the areas above it.
 */
export const AREAS: AreaModule[] = [accountArea, regionsArea, webhooksArea, databasesArea];

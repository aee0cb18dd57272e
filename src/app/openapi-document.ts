import { loadConfig } from '../config/config.js';
import { createLogger } from '../kernel/log.js';
import { Fjord } from './fjord.js';

/**
 * The OpenAPI document as committed in `openapi.json`: built from the route table on a throwaway
 * in-memory store with default listeners, so it does not depend on the machine it is made on.
 */
export async function generateOpenApiDocument(): Promise<Record<string, unknown>> {
  const config = loadConfig({ FJORD_DATABASE_URL: 'sqlite::memory:', FJORD_DEV_CREDENTIALS: '0' });
  const fjord = await Fjord.create({ config, log: createLogger('silent') });
  try {
    return fjord.openapi();
  } finally {
    await fjord.stop();
  }
}

export const serialiseOpenApi = (doc: unknown): string => `${JSON.stringify(doc, null, 2)}\n`;

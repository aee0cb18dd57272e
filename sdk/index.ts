/**
 * Fjord's TypeScript SDK: a typed client for every operation of the API, generated from its
 * OpenAPI document (sdk/schema.d.ts) and run by openapi-fetch.
 *
 *   import { createFjordClient } from '@fjord/sdk';
 *   const fjord = createFjordClient({ baseUrl: 'http://127.0.0.1:8080', apiKey: process.env.FJORD_API_KEY });
 *   const { data, error } = await fjord.GET('/v1/dns/zones');
 *
 * Paths, parameters, bodies and answers are checked by the compiler against the API itself.
 */
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

export type { components, operations, paths };
export type FjordClient = Client<paths>;

export interface FjordClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** The API's address, e.g. http://127.0.0.1:8080 (`api_url` in dev-credentials.json). */
  baseUrl: string;
  /** A PAT or service key, sent as X-API-Key. */
  apiKey?: string;
  /** An operator token, sent as Authorization: Bearer (for /admin/v1 operations). */
  operatorToken?: string;
}

export function createFjordClient({
  apiKey,
  operatorToken,
  headers,
  ...options
}: FjordClientOptions): FjordClient {
  return createClient<paths>({
    ...options,
    headers: {
      ...(apiKey ? { 'x-api-key': apiKey } : {}),
      ...(operatorToken ? { authorization: `Bearer ${operatorToken}` } : {}),
      ...(headers as Record<string, string> | undefined),
    },
  });
}

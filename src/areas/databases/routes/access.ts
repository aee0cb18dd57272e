import type { CustomerAccess } from '../../../kernel/auth/principal.js';

export const TAG = 'Databases';
/** Every route counts against "Database API requests: 500 per minute". */
export const API_BUCKET = 'database';

/** The database service key, or a PAT with one of these scopes (doc 1, Authentication §3). */
export const dbAccess = (...scopes: string[]): CustomerAccess => ({
  kind: 'customer',
  services: ['database'],
  scopes,
});

export const READ = dbAccess('database:read');
/** Form B's named permissions count as well as `database:write`. */
export const CREATE = dbAccess('database:write', 'database:create');
export const DELETE = dbAccess('database:write', 'database:delete');
export const WRITE = dbAccess('database:write');
export const FIREWALL = dbAccess('database:firewall');
/** "service key required": no PAT. */
export const SERVICE_KEY_ONLY: CustomerAccess = { kind: 'customer', services: ['database'] };

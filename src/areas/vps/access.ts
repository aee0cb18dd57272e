import type { CustomerAccess } from '../../kernel/auth/principal.js';

export const TAG = 'Virtual servers';

/** A service key for `vps`, or a PAT or OIDC token with the scope. */
const access = (scope: 'vps:read' | 'vps:write'): CustomerAccess => ({
  kind: 'customer',
  services: ['vps'],
  scopes: [scope],
  oidc: true,
  bearer: true,
});
export const read = access('vps:read');
export const write = access('vps:write');

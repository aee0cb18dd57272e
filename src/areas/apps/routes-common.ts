/**
 * What every container-apps route shares: its tag, its rate-limit bucket and its access rules.
 * Apart from the routes files so each resource group's file uses the same ones.
 */
import type { CustomerAccess } from '../../kernel/auth/principal.js';

export const TAG = 'Container apps';
export const BUCKET = ['container-apps'];
const access = (scope: string): CustomerAccess => ({
  kind: 'customer',
  services: ['container-apps'],
  scopes: [scope],
  oidc: true,
  bearer: true,
});
export const read = access('container-apps:read');
export const write = access('container-apps:write');

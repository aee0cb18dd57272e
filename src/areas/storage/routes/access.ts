import type { CustomerAccess } from '../../../kernel/auth/principal.js';

export const TAG = 'Storage';

/** Management endpoints take a storage service key, or a PAT with the storage scope (doc 1, Authentication). */
export const storageRead: CustomerAccess = {
  kind: 'customer',
  services: ['storage'],
  scopes: ['storage:read'],
};
export const storageWrite: CustomerAccess = {
  kind: 'customer',
  services: ['storage'],
  scopes: ['storage:write'],
};

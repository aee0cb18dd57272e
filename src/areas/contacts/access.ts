import type { CustomerAccess } from '../../kernel/auth/principal.js';

export const TAG = 'Contacts';

/**
 * Contacts take `X-API-Key` (doc 3, Authentication §4): a `contacts` service key, or a PAT with
 * `contacts:read` / `contacts:write` (the scopes are ours: the spec does not show them).
 */
export const contactsAccess = (write: boolean): CustomerAccess => ({
  kind: 'customer',
  services: ['contacts'],
  scopes: [write ? 'contacts:write' : 'contacts:read'],
});

import { Type } from '@sinclair/typebox';
import type { CustomerAccess } from '../../kernel/auth/principal.js';

export const TAG = 'DNS';
/** The dns service key, or a PAT with the scope, or an OIDC token; in X-API-Key or Bearer. */
export const dnsAccess = (scope: 'dns:read' | 'dns:write'): CustomerAccess => ({
  kind: 'customer',
  services: ['dns'],
  scopes: [scope],
  oidc: true,
  bearer: true,
});

export const ZoneFileText = Type.String({ description: 'BIND zone file (RFC 1035 §5)' });

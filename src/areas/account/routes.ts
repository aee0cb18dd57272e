import { Type } from '@sinclair/typebox';
import type { CustomerAccess } from '../../kernel/auth/principal.js';
import { defineRoute } from '../../kernel/http/route.js';
import type { Registry } from '../../kernel/registry.js';
import {
  ApiKey,
  CreatedApiKey,
  CreatePatBody,
  CreateServiceKeyBody,
  CreateSshKeyBody,
  DeletedSshKey,
  KeyIdParams,
  Profile,
  RevokedKey,
  ServiceEntry,
  SshKey,
} from './schemas.js';
import type { AccountService } from './service.js';

const TAG = 'Account';
/** Account endpoints take a PAT or an OIDC token (doc 1, Authentication §3), in either header. */
const account = (...scopes: string[]): CustomerAccess => ({
  kind: 'customer',
  scopes,
  oidc: true,
  bearer: true,
});

export function accountRoutes(account_: AccountService, registry: Registry) {
  return [
    defineRoute({
      method: 'GET',
      url: '/v1/account/profile',
      operationId: 'getAccountProfile',
      tag: TAG,
      summary: 'Get the account profile',
      access: account('account:read'),
      response: { 200: Profile },
      // Not async: the service's promise is returned as it is, not wrapped in another.
      handler: ({ principal }) => account_.profile(principal.customerId),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/account/api-keys',
      operationId: 'listApiKeys',
      tag: TAG,
      summary: 'List service keys and PATs (never their secrets)',
      access: account('api_keys:read', 'account:read'),
      response: { 200: Type.Array(ApiKey) },
      handler: async ({ principal }) => account_.listApiKeys(principal.customerId),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/account/api-keys/service',
      operationId: 'createServiceKey',
      tag: TAG,
      summary: 'Create a service key for one service',
      description: 'The `key` is shown once, in this response. Service names are case-insensitive.',
      access: account('api_keys:write', 'account:write'),
      body: CreateServiceKeyBody,
      response: { 201: CreatedApiKey },
      handler: async ({ principal, body }) =>
        account_.createServiceKey(
          principal.customerId,
          principal.credential,
          body.service,
          body.description ?? null,
        ),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/account/api-keys/pat',
      operationId: 'createPat',
      tag: TAG,
      summary: 'Create a personal access token',
      description:
        'The `key` is shown once, in this response. A PAT can only grant scopes it holds itself; `expires_in_days` is enforced on every request.',
      access: account('api_keys:write', 'account:write'),
      body: CreatePatBody,
      response: { 201: CreatedApiKey },
      handler: async ({ principal, body }) =>
        account_.createPat(principal.customerId, principal.credential, {
          scopes: body.scopes,
          description: body.description ?? null,
          expiresInDays: body.expires_in_days ?? null,
        }),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/account/api-keys/:key_id',
      operationId: 'revokeApiKey',
      tag: TAG,
      summary: 'Revoke an API key, immediately and irreversibly',
      description:
        'The answer carries both the current (`ok`, `revoked`) and the older (`success`, `message`) fields.',
      access: account('api_keys:write', 'account:write'),
      params: KeyIdParams,
      response: { 200: RevokedKey },
      errors: [404],
      handler: async ({ principal, params }) =>
        account_.revokeApiKey(principal.customerId, principal.credential, params.key_id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/account/ssh-keys',
      operationId: 'listSshKeys',
      tag: TAG,
      summary: 'List SSH keys',
      access: account('ssh_keys:read', 'account:read'),
      response: { 200: Type.Array(SshKey) },
      handler: async ({ principal }) => account_.listSshKeys(principal.customerId),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/account/ssh-keys',
      operationId: 'addSshKey',
      tag: TAG,
      summary: 'Add an SSH public key (RSA, Ed25519 or ECDSA)',
      description:
        'Keys are deployed to new virtual servers. The fingerprint is what `ssh-keygen -lf` prints.',
      access: account('ssh_keys:write', 'account:write'),
      body: CreateSshKeyBody,
      response: { 201: SshKey },
      errors: [409],
      handler: async ({ principal, body }) =>
        account_.addSshKey(principal.customerId, principal.credential, body.name, body.public_key),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/account/ssh-keys/:key_id',
      operationId: 'deleteSshKey',
      tag: TAG,
      summary: 'Delete an SSH key (existing servers keep it)',
      access: account('ssh_keys:write', 'account:write'),
      params: KeyIdParams,
      response: { 200: DeletedSshKey },
      errors: [404],
      handler: async ({ principal, params }) =>
        account_.deleteSshKey(principal.customerId, principal.credential, params.key_id),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/account/services',
      operationId: 'listAccountServices',
      tag: TAG,
      summary: 'List the services (resources) active on the account',
      access: account('services:read', 'account:read'),
      response: { 200: Type.Array(ServiceEntry) },
      handler: async ({ principal }) => registry.servicesOf(principal.customerId),
    }),
  ];
}

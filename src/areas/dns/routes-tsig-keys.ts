/**
 * The operator's TSIG keys (docs/dns-server.md, "TSIG"), in the manner of PowerDNS's
 * `/tsigkeys`: the secret (`key`, base64) appears only in the answer that made the key.
 */
import { Type } from '@sinclair/typebox';
import { operatorAccess } from '../../kernel/auth/principal.js';
import { SuccessMessage } from '../../kernel/http/common-schemas.js';
import { defineRoute } from '../../kernel/http/route.js';
import { TAG } from './access.js';
import { TSIG_ALGORITHM_NAMES } from './server-contract.js';
import type { TsigKeyService } from './tsig-keys.js';

const Algorithm = Type.Union(
  TSIG_ALGORITHM_NAMES.map((a) => Type.Literal(a)),
  { description: 'HMAC algorithm (RFC 8945 §6)' },
);
const Zones = Type.Union(
  [Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 1000 }), Type.Null()],
  {
    description: 'Zones the key may transfer; `null` (the default) for every zone',
  },
);
const Notify = Type.Array(Type.String({ minLength: 1, maxLength: 60 }), {
  maxItems: 20,
  description:
    'Secondaries (`192.0.2.1:53`, `[2001:db8::1]:53`) that get NOTIFY signed with this key for its zones',
});

const TsigKey = Type.Object({
  name: Type.String({ description: 'The key’s name, as secondaries name it (lowercase, no trailing dot)' }),
  algorithm: Algorithm,
  zones: Zones,
  notify: Notify,
  created_at: Type.String({ format: 'date-time' }),
});
const CreatedTsigKey = Type.Composite([
  TsigKey,
  Type.Object({ key: Type.String({ description: 'The secret, base64. Shown only here: store it now' }) }),
]);
const CreateTsigKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    algorithm: Type.Optional(Type.String({ maxLength: 40, description: 'Default `hmac-sha256`' })),
    key: Type.Optional(
      Type.String({
        maxLength: 1024,
        description: 'The secret, base64; generated (digest-sized) when left out',
      }),
    ),
    zones: Type.Optional(Zones),
    notify: Type.Optional(Notify),
  },
  { additionalProperties: false },
);
const KeyParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 255 }) });

export function tsigKeyRoutes(keys: TsigKeyService) {
  return [
    defineRoute({
      method: 'POST',
      url: '/admin/v1/dns/tsig-keys',
      operationId: 'createDnsTsigKey',
      tag: TAG,
      summary: 'Operator: make a TSIG key for zone transfers and NOTIFY',
      description:
        'Requests signed with the key may transfer its zones, whatever their address; its `notify` secondaries get signed NOTIFY. The secret is returned once. 409 when the name is taken; 403 past the `dns.tsig_keys` limit.',
      access: operatorAccess,
      body: CreateTsigKeyBody,
      response: { 201: CreatedTsigKey },
      errors: [403, 409, 422],
      handler: async ({ body }) => keys.create(body),
    }),
    defineRoute({
      method: 'GET',
      url: '/admin/v1/dns/tsig-keys',
      operationId: 'listDnsTsigKeys',
      tag: TAG,
      summary: 'Operator: list TSIG keys (without their secrets)',
      access: operatorAccess,
      response: { 200: Type.Object({ keys: Type.Array(TsigKey) }) },
      handler: async () => keys.list(),
    }),
    defineRoute({
      method: 'GET',
      url: '/admin/v1/dns/tsig-keys/:name',
      operationId: 'getDnsTsigKey',
      tag: TAG,
      summary: 'Operator: get a TSIG key (without its secret)',
      access: operatorAccess,
      params: KeyParams,
      response: { 200: TsigKey },
      errors: [404, 422],
      handler: async ({ params }) => keys.get(params.name),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/admin/v1/dns/tsig-keys/:name',
      operationId: 'deleteDnsTsigKey',
      tag: TAG,
      summary: 'Operator: delete a TSIG key (its secondaries can no longer transfer with it)',
      access: operatorAccess,
      params: KeyParams,
      response: { 200: SuccessMessage },
      errors: [404, 422],
      handler: async ({ params }) => keys.delete(params.name),
    }),
  ];
}

import { Type } from '@sinclair/typebox';
import { Nullable, NullableTimestamp, SuccessMessage, Timestamp } from '../../kernel/http/common-schemas.js';

const Limits = Type.Object({
  hostnames: Type.Integer({ description: 'Hostnames per account' }),
  updates_per_hour: Type.Integer({ description: 'Applied updates per hostname per hour (then `abuse`)' }),
  sources: Type.Integer({
    description: 'Update credentials (router tokens + updater credentials) per hostname',
  }),
});

export const Entitlement = Type.Object({
  plan: Type.Union([Type.Literal('home'), Type.Literal('fleet')]),
  customer_type: Type.String(),
  limits: Limits,
  usage: Type.Object({ hostnames: Type.Integer() }),
  zone: Type.String({ description: 'The platform dynamic zone' }),
  ttl: Type.Integer({ description: 'TTL of the address records updates write' }),
  update_url: Type.String({ description: 'The DynDNS2 update endpoint (`{update_url}`)' }),
});

export const Hostname = Type.Object({
  id: Type.String(),
  hostname: Type.String(),
  zone_id: Type.String(),
  zone_kind: Type.Union([Type.Literal('platform'), Type.Literal('customer')]),
  ipv4: Nullable(Type.String()),
  ipv6: Nullable(Type.String()),
  offline: Type.Boolean(),
  ttl: Type.Integer(),
  active_source_id: Nullable(
    Type.String({ description: 'The one credential that may update this hostname' }),
  ),
  last_update_at: NullableTimestamp(),
  created_at: Timestamp(),
});

export const CreateHostnameBody = Type.Object(
  {
    hostname: Type.String({ minLength: 1, maxLength: 253 }),
    replace_records: Type.Optional(
      Type.Boolean({
        description:
          'In your own zone: hand existing A/AAAA records at the name to dynamic DNS (otherwise 409 `name_in_use`)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const CreateCredentialBody = Type.Object(
  { description: Type.Optional(Type.String({ maxLength: 200 })) },
  { additionalProperties: false },
);

export const Credential = Type.Object({
  id: Type.String(),
  hostname_id: Type.String(),
  kind: Type.Union([Type.Literal('router_token'), Type.Literal('updater')]),
  username: Type.String(),
  description: Nullable(Type.String()),
  active: Type.Boolean({ description: 'Whether this is the hostname’s active update source' }),
  created_at: Timestamp(),
  last_used_at: NullableTimestamp(),
});

export const CreatedCredential = Type.Composite([
  Credential,
  Type.Object({ password: Type.String({ description: 'Shown once' }) }),
]);

export const ActiveSourceBody = Type.Object(
  { source_id: Type.String({ description: 'A router token or updater credential of this hostname' }) },
  { additionalProperties: false },
);

export const UpdateHistory = Type.Object({
  updates: Type.Array(
    Type.Object({
      id: Type.String(),
      source_id: Nullable(Type.String()),
      result: Type.String(),
      ipv4: Nullable(Type.String()),
      ipv6: Nullable(Type.String()),
      offline: Type.Boolean(),
      client_ip: Nullable(Type.String()),
      user_agent: Nullable(Type.String()),
      created_at: Timestamp(),
    }),
  ),
  total: Type.Integer(),
  page: Type.Integer(),
  page_size: Type.Integer(),
});

export const HistoryQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
});

/** DynDNS2 parameters; a repeated one arrives as a list (clients expect a text answer, never a 422). */
const OneOrMany = (description?: string) =>
  Type.Union([Type.String(), Type.Array(Type.String())], description ? { description } : {});
export const NicUpdateQuery = Type.Object(
  {
    hostname: Type.Optional(OneOrMany('Comma-separated, at most 20')),
    myip: Type.Optional(OneOrMany('IPv4 and/or IPv6 address; absent = the client address')),
    myipv6: Type.Optional(OneOrMany()),
    offline: Type.Optional(OneOrMany('`YES` removes the address records')),
  },
  { additionalProperties: true },
);

export const Deleted = SuccessMessage;
export const HostnameParams = Type.Object({ hostname_id: Type.String() });
export const CredentialParams = Type.Object({ hostname_id: Type.String(), credential_id: Type.String() });

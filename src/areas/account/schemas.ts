import { Type } from '@sinclair/typebox';
import { Nullable, NullableTimestamp, Timestamp } from '../../kernel/http/common-schemas.js';

export const Profile = Type.Object(
  {
    customer_id: Type.String(),
    email: Type.String(),
    first_name: Nullable(Type.String()),
    last_name: Nullable(Type.String()),
    company: Nullable(Type.String()),
    customer_type: Type.Union([Type.Literal('private'), Type.Literal('business')]),
    status: Type.String(),
    created_at: Timestamp(),
  },
  { title: 'AccountProfile' },
);

const keyFields = {
  id: Type.String(),
  key_prefix: Type.String({ description: 'Leading part of the key, for identification' }),
  key_type: Type.Union([Type.Literal('service'), Type.Literal('account')], {
    description: '`service` for a service key, `account` for a PAT',
  }),
  service: Nullable(Type.String({ description: 'Service a service key is for; null for a PAT' })),
  scopes: Type.Array(Type.String(), { description: 'PAT scopes; empty for a service key' }),
  description: Nullable(Type.String()),
  created_at: Timestamp(),
  expires_at: NullableTimestamp('null when the key does not expire'),
};

export const ApiKey = Type.Object(
  { ...keyFields, is_active: Type.Boolean(), last_used_at: NullableTimestamp() },
  { title: 'ApiKey' },
);

export const CreatedApiKey = Type.Object(
  {
    ...keyFields,
    key: Type.String({ description: 'The full secret. Shown only in this response.' }),
    warning: Type.String(),
  },
  { title: 'CreatedApiKey' },
);

export const CreateServiceKeyBody = Type.Object(
  {
    service: Type.String({ minLength: 1, maxLength: 64, description: 'Service name, case-insensitive' }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  },
  { additionalProperties: false },
);

export const CreatePatBody = Type.Object(
  {
    scopes: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 100 }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    expires_in_days: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 3650 }))),
  },
  { additionalProperties: false },
);

export const KeyIdParams = Type.Object({ key_id: Type.String({ minLength: 1, maxLength: 100 }) });

export const RevokedKey = Type.Object(
  {
    ok: Type.Boolean(),
    revoked: Type.String(),
    success: Type.Boolean({ description: 'Older form' }),
    message: Type.String({ description: 'Older form' }),
  },
  { title: 'RevokedApiKey' },
);

export const SshKey = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    fingerprint: Type.String({ description: 'As `ssh-keygen -lf` prints it: SHA256:…' }),
    key_type: Type.String({ description: 'Algorithm label, e.g. ssh-ed25519' }),
    created_at: Timestamp(),
    vm_count: Type.Integer({ minimum: 0 }),
  },
  { title: 'SshKey' },
);

export const CreateSshKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'Not blank' }),
    public_key: Type.String({
      minLength: 1,
      maxLength: 16384,
      description: 'RSA, Ed25519 or ECDSA public key line',
    }),
  },
  { additionalProperties: false },
);

export const DeletedSshKey = Type.Object(
  {
    ok: Type.Boolean(),
    deleted: Type.String(),
    success: Type.Boolean({ description: 'Older form' }),
    message: Type.String({ description: 'Older form' }),
  },
  { title: 'DeletedSshKey' },
);

export const ServiceEntry = Type.Object(
  {
    id: Type.String(),
    service_type: Type.String(),
    name: Type.String(),
    status: Type.String(),
    region: Nullable(Type.String()),
    created_at: Timestamp(),
    metadata: Type.Object({}, { additionalProperties: true }),
    api: Type.Object({
      kind: Type.String(),
      openapi: Type.String(),
      docs: Type.String(),
      base_url: Type.String(),
    }),
  },
  { title: 'ServiceEntry' },
);

import { Type } from '@sinclair/typebox';
import { Nullable, NullableTimestamp, SuccessMessage, Timestamp } from '../../kernel/http/common-schemas.js';
import { PURPOSES, STATUSES } from './service.js';

const Purpose = Type.Union(
  PURPOSES.map((p) => Type.Literal(p)),
  { description: 'What the domain will be used for' },
);
const Status = Type.Union(STATUSES.map((s) => Type.Literal(s)));
const Method = Type.Union([
  Type.Literal('DNS_TXT'),
  Type.Literal('DNS_CNAME'),
  Type.Literal('INTERNAL_DNS_AUTHORITY'),
]);

export const Instructions = Type.Object({
  method: Method,
  record_type: Nullable(Type.String()),
  record_name: Nullable(Type.String()),
  record_value: Nullable(Type.String()),
  ttl_recommendation: Nullable(Type.Integer()),
  example_bind: Nullable(Type.String()),
  auto_verified: Type.Boolean(),
  message: Type.String(),
  cname_record_name: Nullable(Type.String()),
  cname_record_value: Nullable(Type.String()),
  cname_example_bind: Nullable(Type.String()),
});

export const DomainVerification = Type.Object({
  id: Type.String(),
  domain: Type.String({ description: 'Normalised to lowercase / punycode' }),
  purpose: Purpose,
  status: Status,
  verification_method: Method,
  verification_token: Nullable(Type.String()),
  instructions: Instructions,
  dns_instructions: Nullable(
    Type.Object(
      { record_type: Type.String(), host: Nullable(Type.String()), value: Nullable(Type.String()) },
      { description: 'The older form of `instructions`' },
    ),
  ),
  internal_dns_zone_id: Nullable(Type.String()),
  dns_challenge: Nullable(Type.String()),
  dns_record_name: Nullable(Type.String()),
  verification_attempts: Type.Integer(),
  verified_at: NullableTimestamp(),
  last_checked_at: NullableTimestamp(),
  failed_reason: Nullable(Type.String()),
  created_at: Timestamp(),
  updated_at: Timestamp(),
  metadata: Type.Record(Type.String(), Type.Unknown()),
});

export const CreateDomainBody = Type.Object(
  {
    domain: Type.String({ minLength: 1, maxLength: 300 }),
    purpose: Purpose,
    verification_method: Type.Optional(Type.Union([Type.Literal('DNS_TXT'), Type.Literal('DNS_CNAME')])),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);

export const UpdateDomainBody = Type.Object(
  {
    status: Type.Optional(Type.String({ description: 'Only `revoked`, and only from `verified`' })),
    metadata: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: 'Replaces the stored metadata' }),
    ),
  },
  { additionalProperties: false },
);

export const ListDomainsQuery = Type.Object({
  purpose: Type.Optional(Purpose),
  status: Type.Optional(Status),
  page: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1' }),
  ),
  page_size: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Items per page (at most 100)' }),
  ),
});

export const DomainList = Type.Object({
  domains: Type.Array(DomainVerification),
  total: Type.Integer(),
  page: Type.Integer(),
  page_size: Type.Integer(),
});

export const VerifyResult = Type.Object({
  id: Type.String(),
  domain: Type.String(),
  status: Status,
  verified: Type.Boolean(),
  message: Type.String(),
  dns_records_found: Type.Array(Type.String()),
  checked_at: Timestamp(),
});

export const HistoryEntry = Type.Object({
  id: Type.String(),
  event_type: Type.String({
    description: '`check_completed`, `auto_verified`, `recheck_completed`, `expired`, `revoked`, `deleted`',
  }),
  previous_status: Nullable(Status),
  new_status: Status,
  dns_response: Type.Object({ records_found: Type.Boolean(), actual_values: Type.Array(Type.String()) }),
  performed_by: Type.Union([Type.Literal('api'), Type.Literal('system')]),
  created_at: Timestamp(),
});

export const DeletedDomain = SuccessMessage;
export const DomainIdParams = Type.Object({ domain_id: Type.String() });

import { Type } from '@sinclair/typebox';
import { Nullable, NullableTimestamp, Timestamp } from '../../kernel/http/common-schemas.js';
import { LOCALES } from './messages.js';

const literals = <T extends string>(values: readonly T[], description?: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    description ? { description } : {},
  );

export const CHANNELS = ['sms', 'voice', 'email'] as const;
export const SESSION_STATUSES = [
  'pending',
  'delivered',
  'verified',
  'failed',
  'expired',
  'cancelled',
] as const;
export const CHECK_ERRORS = [
  'invalid_code',
  'session_expired',
  'max_attempts_exceeded',
  'voice_no_answer',
  'voice_busy',
] as const;

export const IpRiskSchema = Type.Object(
  {
    ip: Type.String({ description: 'The address that was assessed' }),
    score: Type.Integer({ minimum: 0, maximum: 100, description: '0 (no known risk) to 100' }),
    level: literals(['low', 'medium', 'high'] as const, 'low below 30, medium below 70, else high'),
    is_private: Type.Boolean({ description: 'In a private, loopback, link-local or reserved range' }),
    range: Nullable(Type.String({ description: 'Name of the special-purpose range, e.g. `private`' })),
    country: Nullable(
      Type.String({ description: 'ISO 3166-1 alpha-2, when the reputation source knows it' }),
    ),
    reasons: Type.Array(Type.String(), { description: 'What raised the score' }),
    source: Type.String({ description: 'The reputation service that answered (`builtin` here)' }),
  },
  { title: 'VerifyIpRisk' },
);

const ClientIp = Type.String({
  minLength: 2,
  maxLength: 45,
  description: 'The end user’s IP address (IPv4 or IPv6), for risk scoring',
});

export const StartBody = Type.Object(
  {
    channel: Type.Optional(literals(CHANNELS, 'Default `sms`')),
    recipient: Type.String({
      minLength: 3,
      maxLength: 254,
      description: 'E.164 phone number for `sms` and `voice`; e-mail address for `email`',
    }),
    code_length: Type.Optional(Type.Integer({ minimum: 4, maximum: 8, default: 6 })),
    ttl_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 900, default: 300 })),
    client_reference: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    locale: Type.Optional(literals(LOCALES, 'Default `en`; voice: en, no, sv, da, fi')),
    metadata: Type.Optional(
      Nullable(Type.Object({}, { additionalProperties: true, description: 'Stored, not processed' })),
    ),
    client_ip: Type.Optional(Nullable(ClientIp)),
  },
  { additionalProperties: false },
);

export const StartResponse = Type.Object(
  {
    session_id: Type.String(),
    status: literals(['pending', 'delivered'] as const),
    channel: literals(CHANNELS),
    expires_at: Timestamp(),
    created_at: Timestamp(),
    ip_risk: Type.Optional(IpRiskSchema),
  },
  { title: 'VerifyStarted' },
);

export const CheckBody = Type.Object(
  {
    session_id: Type.String({ minLength: 1, maxLength: 100 }),
    code: Type.String({ minLength: 1, maxLength: 32, description: 'The code the user entered' }),
    client_ip: Type.Optional(Nullable(ClientIp)),
  },
  { additionalProperties: false },
);

export const CheckResponse = Type.Object(
  {
    status: literals(['verified', 'pending', 'failed', 'expired'] as const),
    verified_at: NullableTimestamp(),
    error: Nullable(literals(CHECK_ERRORS)),
    attempts_remaining: Type.Integer({ minimum: 0 }),
    ip_risk: Type.Optional(IpRiskSchema),
  },
  { title: 'VerifyCheckResult' },
);

export const SessionIdParams = Type.Object({ session_id: Type.String({ minLength: 1, maxLength: 100 }) });

export const Session = Type.Object(
  {
    session_id: Type.String(),
    channel: literals(CHANNELS),
    status: literals(SESSION_STATUSES),
    recipient: Type.String(),
    created_at: Timestamp(),
    expires_at: Timestamp(),
    delivered_at: NullableTimestamp(),
    verified_at: NullableTimestamp(),
    attempt_count: Type.Integer({ minimum: 0 }),
    max_attempts: Type.Integer({ minimum: 1 }),
    client_reference: Nullable(Type.String()),
    error_message: Nullable(Type.String()),
    locale: Type.String(),
    code_length: Type.Integer(),
    metadata: Nullable(Type.Object({}, { additionalProperties: true })),
    ip_risk: Type.Optional(IpRiskSchema),
  },
  { title: 'VerifySession' },
);

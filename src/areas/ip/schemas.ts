import { Type } from '@sinclair/typebox';
import { CONNECTION_TYPES } from './classify.js';
import { LEVELS } from './threat.js';

const N = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const Literals = (values: readonly string[]) => Type.Union(values.map((v) => Type.Literal(v)));

const GeoFields = {
  country: N(Type.String({ description: 'ISO 3166-1 alpha-2' })),
  country_name: N(Type.String()),
  city: N(Type.String()),
  region: N(Type.String()),
  latitude: N(Type.Number()),
  longitude: N(Type.Number()),
  timezone: N(Type.String({ description: 'IANA time zone' })),
};
const NetworkFields = {
  asn: N(Type.Integer()),
  isp: N(Type.String()),
  org: N(Type.String()),
  connection_type: Literals(CONNECTION_TYPES),
};
const Level = Literals(LEVELS);

export const IpParams = Type.Object({ ip: Type.String({ description: 'IPv4 or IPv6 address' }) });

export const Summary = Type.Object(
  {
    ip: Type.String(),
    ip_version: Type.Union([Type.Literal(4), Type.Literal(6)]),
    hostname: N(Type.String({ description: 'Reverse DNS' })),
    geo: Type.Object(GeoFields),
    network: Type.Object(NetworkFields),
    threat: Type.Object({
      score: Type.Number({ minimum: 0, maximum: 100 }),
      level: Level,
      is_clean: Type.Boolean({ description: 'True when no reports exist' }),
    }),
    flags: Type.Object({
      vpn: Type.Boolean(),
      proxy: Type.Boolean(),
      tor: Type.Boolean(),
      datacenter: Type.Boolean(),
      botnet: Type.Boolean(),
    }),
  },
  { title: 'IpSummary' },
);

export const GeoView = Type.Object(
  {
    ip: Type.String(),
    ip_version: Type.Union([Type.Literal(4), Type.Literal(6)]),
    hostname: N(Type.String()),
    ...GeoFields,
    ...NetworkFields,
  },
  { title: 'IpGeo' },
);

export const ThreatView = Type.Object(
  {
    ip: Type.String(),
    score: Type.Number({ minimum: 0, maximum: 100 }),
    level: Level,
    is_clean: Type.Boolean(),
    total_reports: Type.Integer(),
    categories: N(Type.Array(Type.String())),
    first_seen: N(Type.String({ format: 'date-time' })),
    last_seen: N(Type.String({ format: 'date-time' })),
    flags: Type.Object({
      vpn: Type.Boolean(),
      proxy: Type.Boolean(),
      tor: Type.Boolean(),
      datacenter: Type.Boolean(),
    }),
  },
  { title: 'IpThreat' },
);

export const LiveFeed = Type.Object(
  {
    updated_at: Type.String({ format: 'date-time' }),
    count: Type.Integer(),
    threats: Type.Array(
      Type.Object({
        ip: Type.String(),
        score: Type.Number(),
        level: Level,
        categories: N(Type.Array(Type.String())),
        country: N(Type.String()),
        last_seen: N(Type.String({ format: 'date-time' })),
      }),
    ),
  },
  { title: 'IpLiveThreats' },
);

export const CountryView = Type.Object(
  {
    country: Type.String(),
    country_name: Type.String(),
    total_threats: Type.Integer(),
    threat_density: Type.Number({
      description: 'Reported addresses per million IPv4 addresses of the country',
    }),
    top_categories: Type.Array(Type.String()),
  },
  { title: 'IpCountry' },
);

export const AsnView = Type.Object(
  {
    asn: Type.Integer(),
    name: Type.String(),
    country: N(Type.String()),
    country_name: N(Type.String()),
    prefixes: Type.Integer(),
    ipv4_prefixes: Type.Integer(),
    ipv6_prefixes: Type.Integer(),
    num_ips: Type.Integer({ description: 'IPv4 addresses announced' }),
    connection_type: Literals(CONNECTION_TYPES),
    threat: Type.Object({
      reported_addresses: Type.Integer(),
      total_reports: Type.Integer(),
      highest_score: Type.Number(),
      level: Level,
    }),
  },
  { title: 'IpAsn' },
);

export const ReportBody = Type.Object(
  {
    ip: Type.String(),
    categories: Type.Array(Type.Union([Type.Integer({ minimum: 1 }), Type.String({ maxLength: 40 })]), {
      minItems: 1,
      maxItems: 30,
      description: 'AbuseIPDB category numbers or their names (GET /v1/ip/categories)',
    }),
    comment: Type.Optional(
      Type.String({ maxLength: 4000, description: 'E-mail addresses and phone numbers are removed' }),
    ),
    timestamp: Type.Optional(
      Type.String({ format: 'date-time', description: 'When the abuse happened; default now' }),
    ),
  },
  { additionalProperties: false },
);

export const ReportView = Type.Object(
  {
    ip: Type.String(),
    verified_reporter: Type.Boolean(),
    score: Type.Number(),
    level: Level,
    total_reports: Type.Integer(),
  },
  { title: 'IpReportResult' },
);

export const RegisterBody = Type.Object(
  {
    domain: Type.String({ minLength: 3, maxLength: 253 }),
    contact_email: Type.String({ format: 'email', maxLength: 254 }),
  },
  { additionalProperties: false },
);
export const VerifyBody = Type.Object(
  { domain: Type.String({ minLength: 3, maxLength: 253 }) },
  { additionalProperties: false },
);

export const ReporterView = Type.Object(
  {
    reporter_id: Type.String(),
    domain: Type.String(),
    contact_email: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('verified')]),
    verified: Type.Boolean(),
    verified_at: N(Type.String({ format: 'date-time' })),
    dns_record: N(Type.Object({ record_type: Type.String(), host: Type.String(), value: Type.String() })),
  },
  { title: 'IpReporter' },
);

export const DelistBody = Type.Object(
  { ip: Type.String(), reason: Type.String({ minLength: 1, maxLength: 2000 }) },
  { additionalProperties: false },
);
export const DelistView = Type.Object(
  {
    delist_id: Type.String(),
    ip: Type.String(),
    status: Type.Union([Type.Literal('delisted'), Type.Literal('pending_review'), Type.Literal('rejected')]),
    reason: Type.String(),
    proof: N(Type.String()),
    created_at: Type.String({ format: 'date-time' }),
    decided_at: N(Type.String({ format: 'date-time' })),
  },
  { title: 'IpDelist' },
);

export const SubscriptionView = Type.Object(
  {
    tier: N(Type.String()),
    active: Type.Boolean(),
    requests_per_day: N(Type.Integer()),
    requests_today: Type.Integer(),
    remaining_today: N(Type.Integer()),
    burst_per_minute: N(Type.Integer()),
    resets_at: Type.String({ format: 'date-time' }),
  },
  { title: 'IpSubscription' },
);

export const Categories = Type.Array(
  Type.Object({ id: Type.Integer(), name: Type.String(), weight: Type.Number(), flag: N(Type.String()) }),
);

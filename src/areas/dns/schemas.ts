import { Type } from '@sinclair/typebox';
import { Nullable, Timestamp } from '../../kernel/http/common-schemas.js';
import { TTL_MAX, TTL_MIN } from './record-changes.js';
import { RECORD_TYPES } from './record-content.js';

const ZoneStatus = Type.Union([Type.Literal('active'), Type.Literal('pending'), Type.Literal('disabled')], {
  description: '`pending` until the delegation names Fjord’s nameservers; `disabled` by the operator',
});

const zoneFields = {
  id: Type.String({ description: 'Zone id (what domain verification reports as `internal_dns_zone_id`)' }),
  name: Type.String({ description: 'Apex, lowercase; IDNs in punycode' }),
  status: ZoneStatus,
  dnssec_enabled: Type.Boolean(),
  record_count: Type.Integer({
    minimum: 0,
    description: 'Records managed by the customer (without SOA and apex NS)',
  }),
  created_at: Timestamp(),
};

export const Zone = Type.Object(
  { ...zoneFields, nameservers: Type.Array(Type.String(), { description: 'Set these at the registrar' }) },
  { title: 'DnsZone' },
);
export const ZoneSummary = Type.Object(zoneFields, { title: 'DnsZoneSummary' });
export const ZoneList = Type.Object(
  { zones: Type.Array(ZoneSummary), total: Type.Integer() },
  { title: 'DnsZoneList' },
);

export const CreateZoneBody = Type.Object(
  {
    domain: Type.String({
      minLength: 1,
      maxLength: 300,
      description: 'Domain name; Unicode is converted to punycode',
    }),
  },
  { additionalProperties: false },
);

export const ZoneParams = Type.Object({ zone_name: Type.String({ minLength: 1, maxLength: 300 }) });
export const RecordParams = Type.Object({
  zone_name: Type.String({ minLength: 1, maxLength: 300 }),
  record_id: Type.String({ minLength: 1, maxLength: 100 }),
});

export const Record = Type.Object(
  {
    id: Type.String(),
    name: Type.String({ description: 'Host relative to the zone; `@` for the apex' }),
    type: Type.String({ description: RECORD_TYPES.join(', ') }),
    content: Type.String({ description: 'Value in canonical form (docs/dns.md)' }),
    ttl: Type.Integer(),
    priority: Nullable(Type.Integer({ description: 'MX preference or SRV priority; null otherwise' })),
  },
  { title: 'DnsRecord' },
);
export const RecordList = Type.Object(
  { records: Type.Array(Record), total: Type.Integer() },
  { title: 'DnsRecordList' },
);

const Ttl = Type.Integer({
  minimum: TTL_MIN,
  maximum: TTL_MAX,
  description: `Seconds, ${TTL_MIN}-${TTL_MAX}; default 3600`,
});
const Priority = Nullable(
  Type.Integer({ minimum: 0, maximum: 65535, description: 'Required for MX and SRV' }),
);
const Host = Type.String({
  minLength: 1,
  maxLength: 300,
  description: '`@`, a relative name, `*`/`*.name`, or a name inside the zone',
});
const Value = Type.String({ maxLength: 5000, description: 'The record value (docs/dns.md per type)' });
const RecordType = Type.String({ minLength: 1, maxLength: 10, description: RECORD_TYPES.join(', ') });

const createFields = {
  record_type: RecordType,
  host: Host,
  record: Value,
  ttl: Type.Optional(Ttl),
  priority: Type.Optional(Priority),
};
const updateFields = {
  host: Type.Optional(Host),
  record: Type.Optional(Value),
  ttl: Type.Optional(Ttl),
  priority: Type.Optional(Priority),
};

export const CreateRecordBody = Type.Object(createFields, { additionalProperties: false });
export const UpdateRecordBody = Type.Object(updateFields, { additionalProperties: false });

export const BatchBody = Type.Object(
  {
    changes: Type.Array(
      Type.Union([
        Type.Object({ action: Type.Literal('create'), ...createFields }, { additionalProperties: false }),
        Type.Object(
          {
            action: Type.Literal('update'),
            id: Type.String({ minLength: 1, maxLength: 100 }),
            ...updateFields,
          },
          { additionalProperties: false },
        ),
        Type.Object(
          { action: Type.Literal('delete'), id: Type.String({ minLength: 1, maxLength: 100 }) },
          { additionalProperties: false },
        ),
      ]),
      // The upper bound is the `dns.batch_records` row of the limits table, checked by the service.
      { minItems: 1 },
    ),
  },
  { additionalProperties: false },
);

export const BatchResult = Type.Object(
  {
    results: Type.Array(
      Type.Object({
        action: Type.String(),
        id: Type.String(),
        record: Nullable(Record),
      }),
      { description: 'One entry per change, in order; `record` is null for a delete' },
    ),
    total: Type.Integer({ description: 'Records in the zone afterwards' }),
  },
  { title: 'DnsBatchResult' },
);

export const ImportBody = Type.Object(
  {
    zone_file: Type.String({ minLength: 1, maxLength: 1_000_000, description: 'BIND zone file text' }),
    replace: Type.Optional(
      Type.Boolean({ default: false, description: 'Remove every existing record first' }),
    ),
  },
  { additionalProperties: false },
);

export const ImportResult = Type.Object(
  {
    imported: Type.Integer(),
    deleted: Type.Integer({ description: 'Records removed first (with `replace`)' }),
    skipped: Type.Array(Type.Object({ line: Type.Integer(), type: Type.String(), reason: Type.String() }), {
      description: 'Records Fjord keeps itself: SOA, apex NS, DNSSEC records',
    }),
  },
  { title: 'DnsImportResult' },
);

export const DnssecActivation = Type.Object(
  {
    enabled: Type.Boolean(),
    ds_records: Type.Array(Type.String(), {
      description: 'DS records (SHA-256 digest) to place at the registrar',
    }),
    algorithm: Type.String({ description: '`ECDSAP256SHA256` (DNSSEC algorithm 13)' }),
  },
  { title: 'DnssecActivation' },
);

export const Statistics = Type.Object(
  {
    queries_today: Type.Integer({ description: 'Queries answered since 00:00 UTC' }),
    queries_this_month: Type.Integer({ description: 'Queries answered since the 1st, 00:00 UTC' }),
    top_record_types: Type.Object(
      {},
      { additionalProperties: Type.Integer(), description: 'This month’s queries per type, the ten largest' },
    ),
    response_time_ms_avg: Type.Number({ description: 'Mean time from receipt to answer this month, in ms' }),
  },
  { title: 'DnsZoneStatistics' },
);

const Limit = Type.Union([Type.Integer(), Type.Null()], { description: 'null: unlimited' });

export const DnsUsage = Type.Object(
  {
    plan: Type.String(),
    zones: Type.Object({ used: Type.Integer(), limit: Limit }),
    records_per_zone: Limit,
    queries: Type.Object({
      month: Type.String({ description: 'UTC month counted, YYYY-MM' }),
      used: Type.Integer({
        description: 'Queries answered this month, all zones (counted every few seconds)',
      }),
      limit: Limit,
      remaining: Limit,
      paused: Type.Boolean({
        description: 'The quota is used up: the zones get REFUSED until resets_at or a larger plan',
      }),
      paused_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      resets_at: Type.String({ format: 'date-time', description: 'The 1st of next month, 00:00 UTC' }),
    }),
  },
  { title: 'DnsUsage' },
);

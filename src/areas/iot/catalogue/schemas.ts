import { Type } from '@sinclair/typebox';
import { Nullable, Timestamp } from '../../../kernel/http/common-schemas.js';

const Text = (max: number) => Type.String({ minLength: 1, maxLength: max });
const Metadata = Type.Record(Type.String(), Type.Unknown(), { description: 'Free-form JSON object' });
export const TELEMETRY_KEY_PATTERN = '^[^\\s]{1,64}$';
const Key = Type.String({
  pattern: TELEMETRY_KEY_PATTERN,
  description: 'The telemetry key, as devices send it',
});

const DataType = Type.Union(
  [Type.Literal('number'), Type.Literal('integer'), Type.Literal('boolean'), Type.Literal('string')],
  { description: 'Values of another type are refused at ingest' },
);

export const Datapoint = Type.Object({
  id: Type.String(),
  key: Type.String(),
  name: Type.String(),
  unit: Nullable(Type.String()),
  data_type: DataType,
  min: Nullable(Type.Number()),
  max: Nullable(Type.Number()),
  decimals: Nullable(Type.Integer()),
  description: Nullable(Type.String()),
  created_at: Timestamp(),
  updated_at: Timestamp(),
});

const datapointFields = {
  name: Text(200),
  unit: Type.Optional(Nullable(Type.String({ maxLength: 32 }))),
  data_type: DataType,
  min: Type.Optional(Nullable(Type.Number({ description: 'Smaller values are refused at ingest' }))),
  max: Type.Optional(Nullable(Type.Number({ description: 'Larger values are refused at ingest' }))),
  decimals: Type.Optional(
    Nullable(
      Type.Integer({ minimum: 0, maximum: 10, description: 'Numbers are rounded to this many decimals' }),
    ),
  ),
  description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
};

export const CreateDatapointBody = Type.Object(
  { key: Key, ...datapointFields },
  { additionalProperties: false },
);
export const PatchDatapointBody = Type.Partial(Type.Object(datapointFields), { additionalProperties: false });
export const DatapointParams = Type.Object({ datapoint_id: Type.String({ minLength: 1, maxLength: 64 }) });

export const Profile = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  device_type: Nullable(Type.String()),
  default_metadata: Metadata,
  datapoint_keys: Type.Array(Type.String()),
  device_count: Type.Integer({ description: 'Devices the profile was last applied to' }),
  created_at: Timestamp(),
  updated_at: Timestamp(),
});
const profileFields = {
  name: Text(200),
  description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
  device_type: Type.Optional(Nullable(Text(100))),
  default_metadata: Type.Optional(Metadata),
  datapoint_keys: Type.Optional(Type.Array(Key, { maxItems: 200 })),
};
export const CreateProfileBody = Type.Object(profileFields, { additionalProperties: false });
export const PatchProfileBody = Type.Partial(Type.Object(profileFields), { additionalProperties: false });
export const ProfileParams = Type.Object({ profile_id: Type.String({ minLength: 1, maxLength: 64 }) });
export const ApplyParams = Type.Object({
  profile_id: Type.String({ minLength: 1, maxLength: 64 }),
  device_id: Type.String({ minLength: 1, maxLength: 64 }),
});
export const Applied = Type.Object({
  profile_id: Type.String(),
  device_id: Type.String(),
  device_type: Nullable(Type.String()),
  metadata: Metadata,
  applied_at: Timestamp(),
});

const Score = Type.Integer({ minimum: 0, maximum: 100 });
export const Health = Type.Object({
  device_id: Type.String(),
  health_score: Score,
  health_status: Type.Union([
    Type.Literal('healthy'),
    Type.Literal('degraded'),
    Type.Literal('unhealthy'),
    Type.Literal('offline'),
    Type.Literal('unknown'),
  ]),
  components: Type.Object({
    uptime: Score,
    alarm_burden: Score,
    connection_stability: Score,
    telemetry_freshness: Score,
  }),
  checked_at: Timestamp(),
});

const Limit = Nullable(Type.Integer({ description: 'null: unlimited' }));
export const Usage = Type.Object({
  period_start: Timestamp(),
  period_end: Timestamp(),
  plan: Type.String(),
  devices: Type.Integer(),
  device_limit: Limit,
  messages: Type.Integer({ description: 'Telemetry messages accepted this month' }),
  points_stored: Type.Integer({ description: 'Points accepted this month' }),
  points_rejected: Type.Integer({ description: 'Points refused by datapoint definitions this month' }),
  stored_points: Type.Integer({ description: 'Points held now, within retention' }),
  telemetry_retention_days: Limit,
  notifications: Type.Integer({ description: 'Alarm notifications sent this month' }),
});

export const Stats = Type.Object({
  devices: Type.Object({
    total: Type.Integer(),
    online: Type.Integer(),
    offline: Type.Integer(),
    inactive: Type.Integer(),
  }),
  last_24h: Type.Object({
    messages: Type.Integer(),
    points: Type.Integer(),
    points_rejected: Type.Integer(),
    connects: Type.Integer(),
  }),
  alarms: Type.Object({ active: Type.Integer(), acknowledged: Type.Integer() }),
  rules: Type.Object({ total: Type.Integer(), enabled: Type.Integer() }),
  broker: Nullable(
    Type.Object(
      { connected_here: Type.Integer(), malformed_messages_here: Type.Integer() },
      { description: 'The broker of the process that answered; null when it runs none' },
    ),
  ),
  checked_at: Timestamp(),
});
